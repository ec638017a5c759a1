package chain_test

import (
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// TestRevocationTypedData: the revocation message hashes as EIP-712 says,
// computed here from the type strings docs/credentials.md publishes (not
// with go-ethereum's encoder), and a wallet's signature of that hash
// (v 27/28, as eth_signTypedData_v4 returns it, or 0/1) recovers the signer;
// any other message, chain or registry recovers someone else.
func TestRevocationTypedData(t *testing.T) {
	t.Parallel()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	admin := crypto.PubkeyToAddress(key.PublicKey)
	chainID := big.NewInt(1337)
	registry := common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")
	keyHash, _ := new(big.Int).SetString("17063043621571865318069703813770687471913562274320151421266649409155294856737", 10)
	const nonce = uint64(18446744073709551615) // 2^64-1: exact

	word := func(v *big.Int) []byte { return math.U256Bytes(new(big.Int).Set(v)) }
	domainType := crypto.Keccak256([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	domain := crypto.Keccak256(domainType, crypto.Keccak256([]byte("healthagents GovernedRegistry")), crypto.Keccak256([]byte("1")),
		word(chainID), common.LeftPadBytes(registry.Bytes(), 32))
	msgType := crypto.Keccak256([]byte("RevokeNonce(uint256 issuerKeyHash,uint64 nonce)"))
	msg := crypto.Keccak256(msgType, word(keyHash), word(new(big.Int).SetUint64(nonce)))
	want := crypto.Keccak256([]byte{0x19, 0x01}, domain, msg)

	td := chain.RevocationTypedData(chainID, registry, keyHash, nonce)
	got, _, err := apitypes.TypedDataAndHash(td)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	sig, err := crypto.Sign(want, key)
	require.NoError(t, err)
	signer, err := chain.RevocationSigner(td, sig)
	require.NoError(t, err)
	assert.Equal(t, admin, signer, "v 0/1")
	signed, err := chain.SignRevocation(td, key)
	require.NoError(t, err)
	wallet, err := hexutil.Decode(signed)
	require.NoError(t, err)
	assert.Equal(t, sig[64]+27, wallet[64], "v 27/28, as wallets write it")
	signer, err = chain.RevocationSigner(td, wallet)
	require.NoError(t, err)
	assert.Equal(t, admin, signer, "v 27/28")

	for name, other := range map[string]apitypes.TypedData{
		"other nonce":    chain.RevocationTypedData(chainID, registry, keyHash, nonce-1),
		"other issuer":   chain.RevocationTypedData(chainID, registry, big.NewInt(1), nonce),
		"other chain":    chain.RevocationTypedData(big.NewInt(1), registry, keyHash, nonce),
		"other registry": chain.RevocationTypedData(chainID, common.HexToAddress("0xdead"), keyHash, nonce),
	} {
		signer, err := chain.RevocationSigner(other, wallet)
		if err == nil {
			assert.NotEqual(t, admin, signer, name)
		}
	}
	for name, bad := range map[string][]byte{"short": wallet[:64], "v 29": append(common.CopyBytes(wallet[:64]), 29)} {
		_, err := chain.RevocationSigner(td, bad)
		assert.ErrorIs(t, err, chain.ErrBadRevocationSignature, name)
	}
}

// TestRevocationSignedWithEthers: a payer's admin signing with ethers'
// signTypedData (examples/verify-js/sign-revocation.mjs, the snippet of
// docs/credentials.md) makes a signature the service recovers to that
// admin, for a nonce above 2^53. Runs with HEALTHAGENTS_TEST_VERIFYJS
// (.ci/verifyjs.sh installs ethers).
func TestRevocationSignedWithEthers(t *testing.T) {
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		t.Skip("HEALTHAGENTS_TEST_VERIFYJS unset (needs node and `npm ci` in examples/verify-js)")
	}
	t.Parallel()
	dir, err := filepath.Abs("../examples/verify-js")
	require.NoError(t, err)
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	chainID := big.NewInt(31337)
	registry := common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")
	keyHash, _ := new(big.Int).SetString("17063043621571865318069703813770687471913562274320151421266649409155294856737", 10)
	const nonce = uint64(1)<<53 + 1
	cmd := exec.CommandContext(t.Context(), "node", "sign-revocation.mjs", "--key", hexutil.Encode(crypto.FromECDSA(key)),
		"--chain-id", chainID.String(), "--registry", registry.Hex(), "--issuer-key-hash", keyHash.String(), "--nonce", strconv.FormatUint(nonce, 10))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	sig, err := hexutil.Decode(strings.TrimSpace(string(out)))
	require.NoError(t, err, "%s", out)
	signer, err := chain.RevocationSigner(chain.RevocationTypedData(chainID, registry, keyHash, nonce), sig)
	require.NoError(t, err)
	assert.Equal(t, crypto.PubkeyToAddress(key.PublicKey), signer)
	ours, err := chain.SignRevocation(chain.RevocationTypedData(chainID, registry, keyHash, nonce), key)
	require.NoError(t, err)
	assert.Equal(t, ours, strings.TrimSpace(string(out)), "RFC 6979: the same key and message, the same signature")
}
