package server

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestExampleBatch: the document's example batch is the real Poseidon tree
// of the example eligibility and prescription statements' leaves.
func TestExampleBatch(t *testing.T) {
	t.Parallel()
	num := func(s string) *big.Int {
		v, ok := new(big.Int).SetString(s, 10)
		require.True(t, ok, s)
		return v
	}
	leaf := func(s healthagents.Statement) *big.Int {
		l, err := statement.Leaf(num(s.Opening.IssuerKeyHash), num(s.Digest), num(s.Opening.CircuitID))
		require.NoError(t, err)
		return l
	}
	tree, err := statement.NewTree([]*big.Int{leaf(exampleStatement), leaf(exampleRxStatement)})
	require.NoError(t, err)
	b, err := tree.Batch(0)
	require.NoError(t, err)
	require.Equal(t, b.Root.String(), exampleBatch.Root)
	require.Equal(t, b.Size, exampleBatch.Size)
	require.Equal(t, b.Index, exampleBatch.LeafIndex)
	require.Equal(t, []string{b.Path[0].String()}, exampleBatch.Path)
}
