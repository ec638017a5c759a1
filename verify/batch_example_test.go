package verify_test

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/iden3/go-iden3-crypto/poseidon"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

const batchExampleFile = "testdata/batch-example.json"

// batchExample is the worked example of docs/statement.md ("Batches"): a
// batch of three leaves, every number of its tree and of leaf 2's path.
type batchExample struct {
	IssuerKeyHash string   `json:"issuer_key_hash"`
	CircuitID     string   `json:"circuit_id"`
	Digests       []string `json:"digests"`
	Leaves        []string `json:"leaves"`
	Depth         int      `json:"depth"`
	Padded        []string `json:"padded_leaves"`
	Level1        []string `json:"level_1"`
	Root          string   `json:"root"`
	LeafIndex     int      `json:"leaf_index"`
	Path          []string `json:"path"`
	// The registry's ABI: recordBatch's selector and BatchRecorded's topic 0.
	RecordBatchSelector string `json:"record_batch_selector"`
	BatchRecordedTopic0 string `json:"batch_recorded_topic0"`
}

func makeBatchExample(t *testing.T) batchExample {
	t.Helper()
	issuer, circuit := big.NewInt(424242), zkp.CircuitID(zkp.CircuitEligibilityV3)
	ex := batchExample{IssuerKeyHash: issuer.String(), CircuitID: circuit.String(), Depth: statement.Depth(3), LeafIndex: 2,
		RecordBatchSelector: "0x" + hex.EncodeToString(crypto.Keccak256([]byte("recordBatch(uint256,uint256,uint256[])"))[:4]),
		BatchRecordedTopic0: crypto.Keccak256Hash([]byte("BatchRecorded(uint256,uint256,uint256[],address)")).Hex()}
	var leaves []*big.Int
	for _, d := range []int64{1001, 1002, 1003} {
		leaf, err := statement.Leaf(issuer, big.NewInt(d), circuit)
		require.NoError(t, err)
		leaves = append(leaves, leaf)
		ex.Digests = append(ex.Digests, big.NewInt(d).String())
		ex.Leaves = append(ex.Leaves, leaf.String())
	}
	padded := append(append([]*big.Int{}, leaves...), big.NewInt(0))
	for _, l := range padded {
		ex.Padded = append(ex.Padded, l.String())
	}
	// By hand, as the docs say: node = Poseidon(left, right).
	var level1 []*big.Int
	for i := 0; i < 4; i += 2 {
		h, err := poseidon.Hash([]*big.Int{padded[i], padded[i+1]})
		require.NoError(t, err)
		level1 = append(level1, h)
		ex.Level1 = append(ex.Level1, h.String())
	}
	root, err := poseidon.Hash(level1)
	require.NoError(t, err)
	ex.Root = root.String()
	ex.Path = []string{padded[3].String(), level1[0].String()}

	// The same numbers from zkp/statement's tree and path.
	tree, err := statement.NewTree(leaves)
	require.NoError(t, err)
	assert.Equal(t, root, tree.Root())
	b, err := tree.Batch(2)
	require.NoError(t, err)
	require.NoError(t, b.Check(leaves[2]))
	assert.Equal(t, []*big.Int{padded[3], level1[0]}, b.Path)
	return ex
}

// TestBatchWorkedExample: the worked example of docs/statement.md is what
// zkp/statement computes (and what verify.mjs computes, with
// HEALTHAGENTS_TEST_VERIFYJS), its numbers are in the doc, and the golden
// file holds them. Regenerate with `go test ./verify -run
// TestBatchWorkedExample -update` and copy the numbers into the doc.
func TestBatchWorkedExample(t *testing.T) {
	ex := makeBatchExample(t)
	want, err := json.MarshalIndent(ex, "", "  ")
	require.NoError(t, err)
	want = append(want, '\n')
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(batchExampleFile), 0o755))
		require.NoError(t, os.WriteFile(batchExampleFile, want, 0o644))
	}
	have, err := os.ReadFile(batchExampleFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(have), "stale: go test ./verify -run TestBatchWorkedExample -update")

	doc, err := os.ReadFile("../docs/statement.md")
	require.NoError(t, err)
	for _, n := range append(append(append([]string{ex.IssuerKeyHash, ex.CircuitID, ex.Root, ex.RecordBatchSelector, ex.BatchRecordedTopic0},
		ex.Leaves...), ex.Level1...), ex.Path...) {
		assert.True(t, strings.Contains(string(doc), n), "docs/statement.md's worked example lacks %s", n)
	}

	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		return
	}
	input := filepath.Join(t.TempDir(), "example.json")
	require.NoError(t, os.WriteFile(input, want, 0o600))
	script := `import { leafOf, rootOf, depth } from "./verify.mjs";
import { readFileSync } from "node:fs";
const ex = JSON.parse(readFileSync(process.argv[1], "utf8"));
const leaves = ex.digests.map((d) => leafOf(BigInt(ex.issuer_key_hash), BigInt(d), BigInt(ex.circuit_id)).toString());
const root = rootOf(BigInt(leaves[ex.leaf_index]), ex.leaf_index, ex.path.map(BigInt), leaves.length).toString();
console.log(JSON.stringify({ leaves, root, depth: depth(leaves.length) }));`
	out, code := runJS(t, "--input-type=module", "-e", script, input)
	require.Equal(t, 0, code, out)
	var js struct {
		Leaves []string
		Root   string
		Depth  int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &js), out)
	assert.Equal(t, ex.Leaves, js.Leaves)
	assert.Equal(t, ex.Root, js.Root)
	assert.Equal(t, ex.Depth, js.Depth)
}
