package statement_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"testing"

	"github.com/iden3/go-iden3-crypto/poseidon"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/zkp/statement"
)

func values(n int) []*big.Int {
	v := make([]*big.Int, n)
	for i := range v {
		v[i] = big.NewInt(int64(1000 + i))
	}
	return v
}

func TestDigestLayout(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 7, 16} {
		d, err := statement.Digest(values(n))
		require.NoError(t, err)
		want, err := poseidon.Hash(values(n))
		require.NoError(t, err)
		assert.Equal(t, want, d, "n=%d: one Poseidon call", n)
	}
	for _, n := range []int{17, 32, 40, 256} {
		v := values(n)
		var chunks []*big.Int
		for i := 0; i < n; i += 16 {
			h, err := poseidon.Hash(v[i:min(i+16, n)])
			require.NoError(t, err)
			chunks = append(chunks, h)
		}
		want, err := poseidon.Hash(chunks)
		require.NoError(t, err)
		d, err := statement.Digest(v)
		require.NoError(t, err)
		assert.Equal(t, want, d, "n=%d: chunks of 16, then the chunk hashes", n)
	}
	// A known value, so a change of layout or parameters shows: iden3's
	// Poseidon of [1, 2] (circomlibjs' test vector).
	d, err := statement.Digest([]*big.Int{big.NewInt(1), big.NewInt(2)})
	require.NoError(t, err)
	assert.Equal(t, "7853200120776062878684798364095072458815029376092732009249414926327459813530", d.String())

	for _, bad := range [][]*big.Int{nil, values(257), {big.NewInt(-1)}, {nil}, {new(big.Int).Lsh(big.NewInt(1), 254)}} {
		_, err := statement.Digest(bad)
		assert.ErrorIs(t, err, statement.ErrMalformed)
	}
}

func sample(t *testing.T) statement.Statement {
	t.Helper()
	o := statement.Opening{
		Circuit: "eligibility-v2", CircuitID: big.NewInt(77), IssuerKeyHash: big.NewInt(88), RevocationNonce: 7,
		Fields: []statement.Field{
			{Name: "subject_commitment", Value: big.NewInt(123456)},
			{Name: "procedure", Value: big.NewInt(22608498519978033), Text: "PROC001"},
			{Name: "service_day", Value: big.NewInt(20500), Text: "2026-02-16"},
			{Name: "salt", Value: big.NewInt(99)},
		},
	}
	s, err := statement.New(o)
	require.NoError(t, err)
	return s
}

func TestJSONRoundTripAndCheck(t *testing.T) {
	t.Parallel()
	s := sample(t)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b, &raw))
	assert.Equal(t, s.Digest.String(), raw["digest"])
	op := raw["opening"].(map[string]any)
	assert.Equal(t, "eligibility-v2", op["circuit"])
	assert.Equal(t, "77", op["circuit_id"])
	assert.Equal(t, "88", op["issuer_key_hash"])
	assert.EqualValues(t, 7, op["revocation_nonce"])
	f1 := op["fields"].([]any)[1].(map[string]any)
	assert.Equal(t, map[string]any{"name": "procedure", "value": "22608498519978033", "text": "PROC001"}, f1)

	got, err := statement.Parse(b)
	require.NoError(t, err)
	assert.Equal(t, s.Digest, got.Digest)
	assert.Equal(t, s.Opening.Values(), got.Opening.Values())
	assert.Equal(t, big.NewInt(20500), got.Opening.Get("service_day"))
	assert.Nil(t, got.Opening.Get("nope"))

	// One value changed: the digest no longer opens.
	got.Opening.Fields[2].Value = big.NewInt(20501)
	assert.ErrorIs(t, got.Check(), statement.ErrDigestMismatch)
	b2, err := json.Marshal(got)
	require.NoError(t, err)
	_, err = statement.Parse(b2)
	assert.ErrorIs(t, err, statement.ErrDigestMismatch)
}

func TestParseRefusesMalformed(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not json":      `{`,
		"no digest":     `{"opening":{"fields":[{"name":"a","value":"1"}]}}`,
		"hex digest":    `{"digest":"0x01","opening":{"fields":[{"name":"a","value":"1"}]}}`,
		"no fields":     `{"digest":"1","opening":{"fields":[]}}`,
		"bad value":     `{"digest":"1","opening":{"fields":[{"name":"a","value":"x"}]}}`,
		"negative":      `{"digest":"1","opening":{"fields":[{"name":"a","value":"-1"}]}}`,
		"over modulus":  `{"digest":"1","opening":{"fields":[{"name":"a","value":"21888242871839275222246405745257275088548364400416034343698204186575808495617"}]}}`,
		"bad circuitid": `{"digest":"1","opening":{"circuit_id":"z","fields":[{"name":"a","value":"1"}]}}`,
	} {
		_, err := statement.Parse([]byte(doc))
		assert.ErrorIs(t, err, statement.ErrMalformed, name)
	}
}

// The opening never reaches fmt or slog output.
func TestRedacted(t *testing.T) {
	t.Parallel()
	s := sample(t)
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("decided", "statement", s, "opening", s.Opening, "field", s.Opening.Fields[1])
	log.Info("decided", slog.Any("statement", &s))
	out := buf.String() + fmt.Sprintf("%v %+v %#v %s %v %+v %v", s, s, s, s, s.Opening, s.Opening, s.Opening.Fields)
	for _, secret := range []string{"PROC001", "22608498519978033", "20500", "2026-02-16", "123456"} {
		assert.NotContains(t, out, secret)
	}
	assert.Contains(t, out, "eligibility-v2")
	assert.Contains(t, out, fmt.Sprintf("%064x", s.Digest))
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"digest":"1","opening":{"fields":[{"name":"a","value":"1"}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := statement.Parse(b)
		if err != nil {
			return
		}
		d, err := s.Opening.Recompute()
		if err != nil || d.Cmp(s.Digest) != 0 {
			t.Fatalf("parsed a statement that does not open: %v", err)
		}
	})
}
