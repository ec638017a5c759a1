package cipher

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// The parameters of `ipfs add`'s defaults (kubo, boxo's importer): fixed-size
// chunks of 256 KiB, a balanced DAG of at most 174 links per node.
const (
	chunkSize    = 256 << 10
	maxDAGLinks  = 174
	codecRaw     = cid.Raw         // 0x55
	codecDagPB   = cid.DagProtobuf // 0x70
	unixfsTFile  = 2               // UnixFS Data.DataType File
	protoVarint  = 0
	protoBytes   = 2
	pbNodeData   = 1 // PBNode.Data
	pbNodeLinks  = 2 // PBNode.Links
	pbLinkHash   = 1 // PBLink.Hash
	pbLinkName   = 2 // PBLink.Name
	pbLinkTsize  = 3 // PBLink.Tsize
	ufsType      = 1 // UnixFS Data.Type
	ufsData      = 2 // UnixFS Data.Data
	ufsFilesize  = 3 // UnixFS Data.filesize
	ufsBlocksize = 4 // UnixFS Data.blocksizes (repeated, not packed)
)

// dagLayout names one way `ipfs add` lays a file out.
type dagLayout struct {
	v1        bool // CIDv1 for every block (else CIDv0: dag-pb, sha2-256)
	rawLeaves bool // leaves are raw blocks (else UnixFS file nodes in dag-pb)
	maxLinks  int  // links per node; 0 means maxDAGLinks (tests lower it to reach depth 3 cheaply)
}

var (
	layoutV1 = dagLayout{v1: true, rawLeaves: true}  // ipfs add --cid-version=1
	layoutV0 = dagLayout{}                           // ipfs add
	layoutPB = dagLayout{v1: true, rawLeaves: false} // ipfs add --cid-version=1 --raw-leaves=false
)

// CIDFor returns the CID that `ipfs add --cid-version=1` (kubo defaults: raw
// leaves, sha2-256, 256 KiB chunks, balanced layout, 174 links per node)
// gives for a file holding data. Up to 256 KiB that is a raw block
// ("bafkrei..."); above, a dag-pb UnixFS root ("bafybei...") over raw leaves.
// Its String form is base32, as ipfs prints it. The error is reserved for
// layouts that can fail; today it is always nil.
func CIDFor(data []byte) (cid.Cid, error) {
	return cidForLayout(data, layoutV1)
}

// cidForLayout computes the root CID of data as `ipfs add` with layout l.
func cidForLayout(data []byte, l dagLayout) (cid.Cid, error) {
	return buildDAG(data, l).cid, nil
}

// dagNode is what a parent needs of a child: its CID, the file bytes below it
// and its cumulative size (block bytes of the whole subtree, the link's Tsize).
type dagNode struct {
	cid      cid.Cid
	fileSize uint64
	tsize    uint64
}

// sha256Multihash returns the multihash <0x12 sha2-256><0x20 length><digest>.
func sha256Multihash(b []byte) multihash.Multihash {
	sum := sha256.Sum256(b)
	return append(multihash.Multihash{multihash.SHA2_256, sha256.Size}, sum[:]...)
}

func (l dagLayout) blockCID(codec uint64, block []byte) cid.Cid {
	mh := sha256Multihash(block)
	if !l.v1 {
		return cid.NewCidV0(mh)
	}
	return cid.NewCidV1(codec, mh)
}

// buildDAG lays data out as boxo's balanced importer does. Grouping the leaves
// maxDAGLinks at a time, level by level, builds the same tree as its
// fill-then-deepen loop: every level is filled left to right and the last node
// of a level may hold a single child.
func buildDAG(data []byte, l dagLayout) dagNode {
	level := make([]dagNode, 0, len(data)/chunkSize+1)
	for off := 0; off < len(data) || off == 0; off += chunkSize {
		chunk := data[off:min(off+chunkSize, len(data))]
		level = append(level, l.leaf(chunk))
		if len(data) == 0 {
			break
		}
	}
	width := l.maxLinks
	if width < 2 {
		width = maxDAGLinks
	}
	for len(level) > 1 {
		next := make([]dagNode, 0, (len(level)+width-1)/width)
		for i := 0; i < len(level); i += width {
			next = append(next, l.internal(level[i:min(i+width, len(level))]))
		}
		level = next
	}
	return level[0]
}

func (l dagLayout) leaf(chunk []byte) dagNode {
	if l.rawLeaves {
		return dagNode{cid: l.blockCID(codecRaw, chunk), fileSize: uint64(len(chunk)), tsize: uint64(len(chunk))}
	}
	block := fileNode(chunk)
	return dagNode{cid: l.blockCID(codecDagPB, block), fileSize: uint64(len(chunk)), tsize: uint64(len(block))}
}

func (l dagLayout) internal(children []dagNode) dagNode {
	var fileSize, tsize uint64
	var ufs []byte
	ufs = appendVarintField(ufs, ufsType, unixfsTFile)
	for _, c := range children {
		fileSize += c.fileSize
	}
	ufs = appendVarintField(ufs, ufsFilesize, fileSize)
	for _, c := range children {
		ufs = appendVarintField(ufs, ufsBlocksize, c.fileSize)
	}
	var block []byte
	for _, c := range children {
		var link []byte
		link = appendBytesField(link, pbLinkHash, c.cid.Bytes())
		link = appendBytesField(link, pbLinkName, nil)
		link = appendVarintField(link, pbLinkTsize, c.tsize)
		block = appendBytesField(block, pbNodeLinks, link)
		tsize += c.tsize
	}
	block = appendBytesField(block, pbNodeData, ufs)
	return dagNode{cid: l.blockCID(codecDagPB, block), fileSize: fileSize, tsize: tsize + uint64(len(block))}
}

// fileNode encodes a dag-pb block holding data as one UnixFS file node, as
// `ipfs add` writes a file of at most one chunk (and, without raw leaves, each
// leaf): PBNode{Data: UnixFS{Type: File, Data: data, filesize: len(data)}}.
// The Data field is left out when data is empty, filesize never is.
func fileNode(data []byte) []byte {
	ufs := make([]byte, 0, len(data)+24)
	ufs = appendVarintField(ufs, ufsType, unixfsTFile)
	if len(data) > 0 {
		ufs = appendBytesField(ufs, ufsData, data)
	}
	ufs = appendVarintField(ufs, ufsFilesize, uint64(len(data)))
	return appendBytesField(make([]byte, 0, len(ufs)+12), pbNodeData, ufs)
}

func appendTag(b []byte, field, wireType int) []byte {
	return binary.AppendUvarint(b, uint64(field<<3|wireType)) //nolint:gosec // small positive constants
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, field, protoVarint), v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(appendTag(b, field, protoBytes), uint64(len(v)))
	return append(b, v...)
}
