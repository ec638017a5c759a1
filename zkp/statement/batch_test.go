package statement_test

import (
	"encoding/json"
	"errors"
	"math/big"
	"testing"

	"github.com/iden3/go-iden3-crypto/poseidon"

	"github.com/healthagents/healthagents/zkp/statement"
)

func leaves(t *testing.T, n int) []*big.Int {
	t.Helper()
	out := make([]*big.Int, n)
	for i := range out {
		l, err := statement.Leaf(big.NewInt(int64(1000+i)), big.NewInt(int64(7*i+1)), big.NewInt(42))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = l
	}
	return out
}

func TestBatchPaths(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8, 9, 128, 130} {
		ls := leaves(t, n)
		tree, err := statement.NewTree(ls)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range ls {
			b, err := tree.Batch(i)
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Path) != statement.Depth(n) || b.Size != n || b.Index != i {
				t.Fatalf("n=%d i=%d: batch shape %d/%d/%d", n, i, len(b.Path), b.Size, b.Index)
			}
			if err := b.Check(l); err != nil {
				t.Fatalf("n=%d i=%d: %v", n, i, err)
			}
			// Another leaf of the same batch does not sit at i.
			if n > 1 {
				if err := b.Check(ls[(i+1)%n]); !errors.Is(err, statement.ErrNotInBatch) {
					t.Fatalf("n=%d i=%d: another leaf: %v", n, i, err)
				}
			}
		}
	}
}

// The tree is exactly what docs/statement.md says: checked here by hand
// for three leaves (padded to four).
func TestBatchRootByHand(t *testing.T) {
	ls := leaves(t, 3)
	h := func(a, b *big.Int) *big.Int {
		v, err := poseidon.Hash([]*big.Int{a, b})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := h(h(ls[0], ls[1]), h(ls[2], big.NewInt(0)))
	tree, err := statement.NewTree(ls)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Root().Cmp(want) != 0 {
		t.Fatalf("root %s, by hand %s", tree.Root(), want)
	}
	leaf, err := poseidon.Hash([]*big.Int{big.NewInt(1000), big.NewInt(1), big.NewInt(42)})
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Cmp(ls[0]) != 0 {
		t.Fatal("leaf is not Poseidon(issuerKeyHash, digest, circuitId)")
	}
}

func TestBatchRefusesBadShapes(t *testing.T) {
	ls := leaves(t, 5)
	tree, err := statement.NewTree(ls)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tree.Batch(4)
	if err != nil {
		t.Fatal(err)
	}
	bad := func(name string, mut func(*statement.Batch), want error) {
		t.Helper()
		c := b
		c.Path = append([]*big.Int(nil), b.Path...)
		mut(&c)
		if err := c.Check(ls[4]); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	bad("index beyond size", func(c *statement.Batch) { c.Index = 5 }, statement.ErrMalformed)
	bad("index into padding", func(c *statement.Batch) { c.Index = 6; c.Size = 5 }, statement.ErrMalformed)
	bad("short path", func(c *statement.Batch) { c.Path = c.Path[1:] }, statement.ErrMalformed)
	bad("size of another depth", func(c *statement.Batch) { c.Size = 4 }, statement.ErrMalformed)
	bad("wrong sibling", func(c *statement.Batch) { c.Path[0] = big.NewInt(1) }, statement.ErrNotInBatch)
	bad("wrong index", func(c *statement.Batch) { c.Index = 3 }, statement.ErrNotInBatch)
	bad("other root", func(c *statement.Batch) { c.Root = big.NewInt(9) }, statement.ErrNotInBatch)
	bad("value out of field", func(c *statement.Batch) { c.Path[1] = new(big.Int).Lsh(big.NewInt(1), 254) }, statement.ErrMalformed)
	if _, err := statement.NewTree(nil); !errors.Is(err, statement.ErrMalformed) {
		t.Errorf("empty batch: %v", err)
	}
	if _, err := statement.NewTree(make([]*big.Int, statement.MaxBatch+1)); !errors.Is(err, statement.ErrMalformed) {
		t.Errorf("oversized batch: %v", err)
	}
}

func TestBatchJSON(t *testing.T) {
	tree, err := statement.NewTree(leaves(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tree.Batch(2)
	if err != nil {
		t.Fatal(err)
	}
	st, err := statement.New(statement.Opening{Circuit: "c", CircuitID: big.NewInt(42), IssuerKeyHash: big.NewInt(1),
		Fields: []statement.Field{{Name: "a", Value: big.NewInt(5)}}})
	if err != nil {
		t.Fatal(err)
	}
	st.Batch = &b
	doc, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	back, err := statement.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if back.Batch == nil || back.Batch.Root.Cmp(b.Root) != 0 || back.Batch.Index != 2 || back.Batch.Size != 3 || len(back.Batch.Path) != 2 {
		t.Fatalf("round trip: %s", doc)
	}
	for _, doc := range []string{
		`{"root":"1","size":3,"leaf_index":3,"path":[]}`,
		`{"root":"01","size":3,"leaf_index":0,"path":[]}`,
		`{"root":"1","size":0,"leaf_index":0,"path":[]}`,
		`{"root":"1","size":2,"leaf_index":0,"path":["x"]}`,
		`{"root":"1","size":2,"leaf_index":0,"path":[],"extra":1}`,
	} {
		var b statement.Batch
		if err := json.Unmarshal([]byte(doc), &b); !errors.Is(err, statement.ErrMalformed) {
			t.Errorf("%s: %v", doc, err)
		}
	}
}
