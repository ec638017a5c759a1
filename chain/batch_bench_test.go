package chain_test

import (
	"fmt"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	zst "github.com/healthagents/healthagents/zkp/statement"
)

// batchSizes are the batch sizes docs/benchmarks.md reports gas for.
var batchSizes = []int{1, 8, 32, 128, 512}

// triKind2 is a second circuit bound beside triKind, so a batch can cover
// two circuit ids as a batch of eligibility and prescription decisions does.
const triKind2 chain.Kind = "tri-v2"

// BenchmarkRecordBatch records real batches on the embedded chain (the
// go-ethereum dev node the service runs): for each size, the Poseidon tree
// of that many statement leaves, its root sent with recordBatch by the
// Ledger and mined; gas/decision is the receipt's gas over the size. The
// "each" case is a GovernedRegistry record of one statement (its proof
// verified by the registry), what CHAIN_ANCHOR=each pays per decision.
//
//	go test ./chain -run '^$' -bench 'RecordBatch' -benchtime 5x
func BenchmarkRecordBatch(b *testing.B) {
	ctx := b.Context()
	l, err := chain.NewSimulated(ctx)
	require.NoError(b, err)
	b.Cleanup(func() { l.Close() })
	require.NoError(b, l.Register(ctx, triKind, triVK(b)))
	require.NoError(b, l.Register(ctx, triKind2, triVK(b)))
	_, err = l.RegisterIssuer(ctx, big.NewInt(41), common.Address{})
	require.NoError(b, err)
	benchRecordBatch(b, l)
}

// BenchmarkRecordBatchOnGanache is BenchmarkRecordBatch on ganache (an
// external node that is not go-ethereum, with its own fork rules): it
// deploys a registry with ganache's deterministic accounts 0 (submitter)
// and 1 (owner), as TestGovernedOnGanache does. Skips without
// HEALTHAGENTS_TEST_GANACHE (.ci/ganache.sh).
func BenchmarkRecordBatchOnGanache(b *testing.B) {
	endpoint := os.Getenv(GanacheEnv)
	if endpoint == "" {
		b.Skip(GanacheEnv + " is not set (.ci/ganache.sh starts ganache)")
	}
	ctx := b.Context()
	hotKey, err := crypto.HexToECDSA(ganacheKey0)
	require.NoError(b, err)
	ownerKey, err := crypto.HexToECDSA(ganacheKey1)
	require.NoError(b, err)
	addrs, err := chain.Deploy(ctx, endpoint, hotKey, chain.DeployConfig{OwnerKey: ownerKey,
		Verifiers: map[chain.Kind]chain.VerifyingKey{triKind: triVK(b), triKind2: triVK(b)}})
	require.NoError(b, err)
	l, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: ganacheKey0, Registry: addrs.Registry.Hex()},
		chain.WithOwnerKey(ownerKey), chain.WithPollInterval(20*time.Millisecond))
	require.NoError(b, err)
	b.Cleanup(func() { l.Close() })
	_, err = l.RegisterIssuer(ctx, big.NewInt(41), common.Address{})
	require.NoError(b, err)
	benchRecordBatch(b, l)
}

// benchRecordBatch runs the sizes and the "each" record on l, whose
// registry binds triKind and triKind2 and has issuer 41 registered.
func benchRecordBatch(b *testing.B, l *chain.Ledger) {
	ctx := b.Context()
	g := l.Governed()
	to := g.Address()
	ids := []*big.Int{chain.CircuitID(triKind), chain.CircuitID(triKind2)}
	var seq int64 // every batch's leaves are new, so every root is
	for _, size := range batchSizes {
		for _, circuits := range []int{1, 2} {
			if circuits > size {
				continue
			}
			b.Run(fmt.Sprintf("size=%d/circuits=%d", size, circuits), func(b *testing.B) {
				var gas uint64
				for b.Loop() {
					b.StopTimer()
					root := batchRoot(b, size, ids[:circuits], &seq)
					data, err := g.RecordBatch(root, size, ids[:circuits])
					require.NoError(b, err)
					b.StartTimer()
					r, err := l.Transact(ctx, &to, data, 0)
					require.NoError(b, err)
					require.Equal(b, types.ReceiptStatusSuccessful, r.Status)
					ev, err := g.DecodeBatch(r)
					require.NoError(b, err)
					require.Equal(b, 0, ev.Root.Cmp(root))
					gas = r.GasUsed
				}
				b.ReportMetric(float64(gas), "gas/batch")
				b.ReportMetric(float64(gas)/float64(size), "gas/decision")
			})
		}
	}
	b.Run("each", func(b *testing.B) {
		proof, inputs := proveTriFor(b, triKind, 41, 1234)
		var gas uint64
		for b.Loop() {
			rc, err := l.Submit(ctx, triKind, proof, inputs)
			if err != nil || !rc.Verified {
				b.Fatal(err)
			}
			gas = rc.GasUsed
		}
		b.ReportMetric(float64(gas), "gas/decision")
	})
}

// batchRoot is the root of a tree of size fresh leaves, alternating the
// circuit ids given as a mixed batch does.
func batchRoot(b *testing.B, size int, ids []*big.Int, seq *int64) *big.Int {
	leaves := make([]*big.Int, size)
	for i := range leaves {
		*seq++
		leaf, err := zst.Leaf(big.NewInt(41), big.NewInt(*seq), ids[i%len(ids)])
		require.NoError(b, err)
		leaves[i] = leaf
	}
	tree, err := zst.NewTree(leaves)
	require.NoError(b, err)
	return tree.Root()
}
