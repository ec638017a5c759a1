package statement

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/iden3/go-iden3-crypto/poseidon"
)

// Anchoring in batches (docs/statement.md, "Batches"): the statements of
// many decisions are the leaves of one binary Merkle tree whose root one
// registry transaction records. Everything is iden3's Poseidon over BN254,
// so a circuit or a contract can check a path later:
//
//	leaf = Poseidon(issuerKeyHash, digest, circuitId)   (the registry's public inputs, in order)
//	node = Poseidon(left, right)
//
// A batch of size n has depth d = ceil(log2 n) (0 for one statement: the
// root is the leaf); its leaves are padded with zeros to 2^d. A leaf's
// path is its d sibling values from the bottom up; bit k of the leaf
// index says whether the node at height k is a right child.

// MaxBatch is the most statements one batch anchors (depth 10); the
// registry refuses larger batches too.
const MaxBatch = 1024

// ErrNotInBatch is a Merkle path that does not lead from its leaf to the
// stated root.
var ErrNotInBatch = errors.New("statement: the Merkle path does not lead from the leaf to the batch root")

// Batch is where a statement sits in the batch that anchored it: the root
// the registry recorded, the batch's size, the statement's leaf index and
// the sibling values on the way up.
type Batch struct {
	Root  *big.Int
	Size  int
	Index int
	Path  []*big.Int
}

// Leaf is a statement's leaf: Poseidon(issuerKeyHash, digest, circuitId).
func Leaf(issuerKeyHash, digest, circuitID *big.Int) (*big.Int, error) {
	for _, v := range []*big.Int{issuerKeyHash, digest, circuitID} {
		if !isField(v) {
			return nil, fmt.Errorf("%w: a leaf input is not a field element", ErrMalformed)
		}
	}
	return poseidon.Hash([]*big.Int{issuerKeyHash, digest, circuitID})
}

// LeafOf is the leaf of s: its opening's issuer key hash and circuit id
// and its digest.
func (s Statement) LeafOf() (*big.Int, error) {
	return Leaf(s.Opening.IssuerKeyHash, s.Digest, s.Opening.CircuitID)
}

// Depth is the depth of a batch of size statements, ceil(log2 size).
func Depth(size int) int {
	d := 0
	for 1<<d < size {
		d++
	}
	return d
}

// Tree is the Merkle tree of one batch's leaves.
type Tree struct {
	levels [][]*big.Int // levels[0] the padded leaves, the last the root
	size   int
}

// NewTree builds the tree of leaves (1 to MaxBatch field elements).
func NewTree(leaves []*big.Int) (*Tree, error) {
	if len(leaves) == 0 || len(leaves) > MaxBatch {
		return nil, fmt.Errorf("%w: a batch holds 1 to %d statements, not %d", ErrMalformed, MaxBatch, len(leaves))
	}
	width := 1 << Depth(len(leaves))
	level := make([]*big.Int, width)
	for i := range level {
		level[i] = new(big.Int)
		if i < len(leaves) {
			if !isField(leaves[i]) {
				return nil, fmt.Errorf("%w: leaf %d is not a field element", ErrMalformed, i)
			}
			level[i].Set(leaves[i])
		}
	}
	t := &Tree{levels: [][]*big.Int{level}, size: len(leaves)}
	for len(level) > 1 {
		up := make([]*big.Int, len(level)/2)
		for i := range up {
			h, err := poseidon.Hash([]*big.Int{level[2*i], level[2*i+1]})
			if err != nil {
				return nil, err
			}
			up[i] = h
		}
		t.levels = append(t.levels, up)
		level = up
	}
	return t, nil
}

// Root is the tree's root.
func (t *Tree) Root() *big.Int { return new(big.Int).Set(t.levels[len(t.levels)-1][0]) }

// Size is how many leaves the batch holds (before padding).
func (t *Tree) Size() int { return t.size }

// Batch is where leaf i sits: the root, the size, i and its path.
func (t *Tree) Batch(i int) (Batch, error) {
	if i < 0 || i >= t.size {
		return Batch{}, fmt.Errorf("%w: leaf index %d outside a batch of %d", ErrMalformed, i, t.size)
	}
	b := Batch{Root: t.Root(), Size: t.size, Index: i, Path: make([]*big.Int, 0, len(t.levels)-1)}
	for k, idx := 0, i; k < len(t.levels)-1; k, idx = k+1, idx/2 {
		b.Path = append(b.Path, new(big.Int).Set(t.levels[k][idx^1]))
	}
	return b, nil
}

// RootOf is the root leaf's path leads to. It refuses a batch whose shape
// does not hold: a size outside 1..MaxBatch, an index outside the batch, a
// path whose length is not the batch's depth, a value not a field element.
func (b Batch) RootOf(leaf *big.Int) (*big.Int, error) {
	if b.Size < 1 || b.Size > MaxBatch {
		return nil, fmt.Errorf("%w: batch size %d outside 1..%d", ErrMalformed, b.Size, MaxBatch)
	}
	if b.Index < 0 || b.Index >= b.Size {
		return nil, fmt.Errorf("%w: leaf index %d outside a batch of %d", ErrMalformed, b.Index, b.Size)
	}
	if d := Depth(b.Size); len(b.Path) != d {
		return nil, fmt.Errorf("%w: a batch of %d has paths of %d values, not %d", ErrMalformed, b.Size, d, len(b.Path))
	}
	if !isField(leaf) {
		return nil, fmt.Errorf("%w: the leaf is not a field element", ErrMalformed)
	}
	node := new(big.Int).Set(leaf)
	for k, sib := range b.Path {
		if !isField(sib) {
			return nil, fmt.Errorf("%w: path value %d is not a field element", ErrMalformed, k)
		}
		pair := []*big.Int{node, sib}
		if b.Index>>k&1 == 1 {
			pair = []*big.Int{sib, node}
		}
		h, err := poseidon.Hash(pair)
		if err != nil {
			return nil, err
		}
		node = h
	}
	return node, nil
}

// Check reports whether leaf's path leads to b.Root: ErrNotInBatch if not,
// ErrMalformed if the batch's shape does not hold.
func (b Batch) Check(leaf *big.Int) error {
	root, err := b.RootOf(leaf)
	if err != nil {
		return err
	}
	if b.Root == nil || root.Cmp(b.Root) != 0 {
		return ErrNotInBatch
	}
	return nil
}

func isField(v *big.Int) bool {
	return v != nil && v.Sign() >= 0 && v.Cmp(fieldModulus) < 0
}

// The JSON form of a batch: field elements as decimal strings.
type batchJSON struct {
	Root      string   `json:"root"`
	Size      int      `json:"size"`
	LeafIndex int      `json:"leaf_index"`
	Path      []string `json:"path"`
}

// MarshalJSON writes {"root", "size", "leaf_index", "path"}.
func (b Batch) MarshalJSON() ([]byte, error) {
	j := batchJSON{Root: dec(b.Root), Size: b.Size, LeafIndex: b.Index, Path: make([]string, len(b.Path))}
	for i, p := range b.Path {
		j.Path[i] = dec(p)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a batch, refusing keys it does not have and values
// that are not decimal field elements.
func (b *Batch) UnmarshalJSON(data []byte) error {
	var j batchJSON
	if err := strict(data, &j); err != nil {
		return fmt.Errorf("%w: batch: %w", ErrMalformed, err)
	}
	root, err := parseDec("batch.root", j.Root, false)
	if err != nil {
		return err
	}
	if j.Size < 1 || j.Size > MaxBatch || j.LeafIndex < 0 || j.LeafIndex >= j.Size {
		return fmt.Errorf("%w: batch size %d and leaf index %d do not hold (1 ≤ size ≤ %d, index < size)", ErrMalformed, j.Size, j.LeafIndex, MaxBatch)
	}
	out := Batch{Root: root, Size: j.Size, Index: j.LeafIndex, Path: make([]*big.Int, len(j.Path))}
	for i, p := range j.Path {
		if out.Path[i], err = parseDec(fmt.Sprintf("batch.path[%d]", i), p, false); err != nil {
			return err
		}
	}
	*b = out
	return nil
}
