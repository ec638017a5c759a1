package ipfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// The DAG parameters of `ipfs add`'s defaults, which cipher.CIDFor follows
// too (docs/decisions/cipher.md).
const (
	// ChunkSize is kubo's default fixed chunk size (size-262144).
	ChunkSize = 256 << 10
	// MaxFileLinks is kubo's default number of links per UnixFS file node.
	MaxFileLinks = 174
	// MaxRawBlock is the largest chunk kubo accepts (boxo's chunker limit):
	// the largest file `ipfs add` can store as one raw block.
	MaxRawBlock = 1 << 20
)

// hashNames are the multihash functions `ipfs add --hash` accepts that the
// service passes on, with their full digest length: a truncated digest
// cannot be produced by add.
var hashNames = map[uint64]struct {
	name string
	size int
}{
	multihash.SHA2_256:         {"sha2-256", 32},
	multihash.SHA2_512:         {"sha2-512", 64},
	multihash.SHA3_256:         {"sha3-256", 32},
	multihash.SHA3_512:         {"sha3-512", 64},
	multihash.BLAKE2B_MIN + 31: {"blake2b-256", 32},
	multihash.BLAKE3:           {"blake3", 32},
}

// AddOptionsFor returns the `ipfs add` option sets that can produce id for
// a file of size bytes, most likely first, or an error wrapping
// ErrUnsupportedCID:
//
//   - CIDv0 (dag-pb, sha2-256): --cid-version=0 (dag-pb leaves);
//   - CIDv1 raw: --cid-version=1 --raw-leaves with a chunk as large as the
//     file (up to MaxRawBlock), so that the file is one raw block;
//   - CIDv1 dag-pb: --cid-version=1 with raw leaves (files over one chunk),
//     then with dag-pb leaves (--raw-leaves=false).
//
// Chunking is kubo's default, 256 KiB, for dag-pb roots. Pin and OnlyHash
// are left false.
func AddOptionsFor(id cid.Cid, size int) ([]AddOptions, error) {
	if !id.Defined() {
		return nil, &Error{Op: "add", Kind: ErrUnsupportedCID, Message: "undefined CID"}
	}
	p := id.Prefix()
	h, ok := hashNames[p.MhType]
	if !ok || p.MhLength != h.size {
		return nil, &Error{Op: "add", Kind: ErrUnsupportedCID, Message: fmt.Sprintf("multihash 0x%x of %d bytes", p.MhType, p.MhLength)}
	}
	defaults := AddOptions{CIDVersion: int(p.Version), Hash: h.name, Chunker: fmt.Sprintf("size-%d", ChunkSize)} //nolint:gosec // version is 0 or 1
	switch {
	case p.Version == 0:
		return []AddOptions{defaults}, nil
	case p.Codec == cid.Raw:
		if size > MaxRawBlock {
			return nil, &Error{Op: "add", Kind: ErrUnsupportedCID, Message: "a raw CID of more than 1 MiB"}
		}
		o := defaults
		o.RawLeaves = true
		if size > ChunkSize {
			o.Chunker = fmt.Sprintf("size-%d", size)
		}
		return []AddOptions{o}, nil
	case p.Codec == cid.DagProtobuf:
		pbLeaves := defaults
		if size <= ChunkSize {
			// One chunk with raw leaves is a raw block: only dag-pb leaves
			// give a dag-pb root.
			return []AddOptions{pbLeaves}, nil
		}
		rawLeaves := defaults
		rawLeaves.RawLeaves = true
		return []AddOptions{rawLeaves, pbLeaves}, nil
	}
	return nil, &Error{Op: "add", Kind: ErrUnsupportedCID, Message: fmt.Sprintf("codec 0x%x", p.Codec)}
}

// Put stores data on the node under want and pins it:
//
//  1. for each option set of AddOptionsFor(want), the node hashes data
//     without storing it (--only-hash) until it computes want — none does:
//     ErrCIDMismatch, and nothing was written;
//  2. the node adds and pins data with that option set, and must return
//     want again;
//  3. the node's bytes under want are read back (cat) and must equal data.
//
// A CID already pinned stays pinned; adding the same bytes again is cheap.
func (c *Client) Put(ctx context.Context, data []byte, want cid.Cid) error {
	plans, err := AddOptionsFor(want, len(data))
	if err != nil {
		return err
	}
	var match *AddOptions
	var seen []string
	for i := range plans {
		o := plans[i]
		o.OnlyHash = true
		got, err := c.Add(ctx, data, o)
		if err != nil {
			return err
		}
		if got.Equals(want) {
			match = &plans[i]
			break
		}
		seen = append(seen, got.String())
	}
	if match == nil {
		return &Error{Op: "add", Kind: ErrCIDMismatch, Message: fmt.Sprintf("the node computes %v", seen)}
	}
	o := *match
	o.Pin = true
	got, err := c.Add(ctx, data, o)
	if err != nil {
		return err
	}
	if !got.Equals(want) {
		// The node hashed the same bytes two ways: drop what it pinned.
		uerr := c.Unpin(ctx, got)
		return &Error{Op: "add", Kind: ErrCIDMismatch, Message: "the node computes " + got.String() + " when storing", Err: ignoreNotPinned(uerr)}
	}
	back, err := c.Cat(ctx, want, len(data))
	if err != nil {
		return err
	}
	if !bytes.Equal(back, data) {
		return &Error{Op: "cat", Kind: ErrCIDMismatch, Message: "the node serves other bytes under the CID"}
	}
	return nil
}

func ignoreNotPinned(err error) error {
	if errors.Is(err, ErrNotPinned) {
		return nil
	}
	return err
}
