package iden3

import (
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark/test"
	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/stretchr/testify/require"
)

// signWithJS has @iden3/js-crypto (examples/verify-js's pinned copy,
// installed by .ci/verifyjs.sh) sign n random messages under fresh keys.
const signWithJS = `
import { PrivateKey, getRandomBytes } from "@iden3/js-crypto";
const r = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const out = [];
for (let i = 0; i < Number(process.argv[1]); i++) {
  const k = new PrivateKey(getRandomBytes(32));
  const msg = BigInt("0x" + Buffer.from(getRandomBytes(32)).toString("hex")) % r;
  const sig = k.signPoseidon(msg);
  const p = k.public().p;
  out.push([p[0], p[1], sig.R8[0], sig.R8[1], sig.S, msg].map(String));
}
console.log(JSON.stringify(out));
`

// TestEdDSAAgainstJSCrypto: signatures made by @iden3/js-crypto (the
// library a payer's JavaScript issuer uses) satisfy the gadget, and the
// same signature over another message does not. It skips unless
// HEALTHAGENTS_TEST_VERIFYJS is set (.ci/verifyjs.sh).
func TestEdDSAAgainstJSCrypto(t *testing.T) {
	t.Parallel()
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		t.Skip("HEALTHAGENTS_TEST_VERIFYJS not set (.ci/verifyjs.sh installs @iden3/js-crypto)")
	}
	cmd := exec.CommandContext(t.Context(), "node", "--input-type=module", "-e", signWithJS, "6")
	cmd.Dir = filepath.Join("..", "..", "..", "examples", "verify-js")
	out, err := cmd.Output()
	require.NoError(t, err)
	var rows [][6]string
	require.NoError(t, json.Unmarshal(out, &rows))
	require.Len(t, rows, 6)
	for _, row := range rows {
		v := make([]*big.Int, 6)
		for i, s := range row {
			var ok bool
			v[i], ok = new(big.Int).SetString(s, 10)
			require.True(t, ok, s)
		}
		pk := &babyjub.PublicKey{X: v[0], Y: v[1]}
		sig := &babyjub.Signature{R8: &babyjub.Point{X: v[2], Y: v[3]}, S: v[4]}
		require.True(t, pk.VerifyPoseidon(v[5], sig), "go-iden3-crypto agrees")
		require.NoError(t, test.IsSolved(&eddsaCircuit{}, assignment(pk, sig, v[5]), fieldOrder))
		require.Error(t, test.IsSolved(&eddsaCircuit{}, assignment(pk, sig, new(big.Int).Add(v[5], big.NewInt(1))), fieldOrder))
	}
}
