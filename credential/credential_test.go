package credential_test

import (
	"encoding/hex"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/iden3/go-iden3-crypto/poseidon"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/credential"
)

// TestWorkedExample recomputes every intermediate value of the worked
// example in docs/credentials.md and checks the page shows each one, so the
// page cannot drift from the code.
func TestWorkedExample(t *testing.T) {
	t.Parallel()
	k := exampleKey()
	want := map[string]string{
		"subject commitment": "15279192183761440768281487546456375326022877884854978518631016077606401499452",
		"first half":         "16509016077568478487427676961871585156757244792314725264545337405078766104315",
		"second half":        "701500761280964809971817188641192768164816738508008541362373633288600716746",
		"message":            "20707085381409795983306153018137755082555885363694093965376922856630169586713",
		"Ax":                 "6009826206664631762425195104551483519464780417855034312675013183895652229081",
		"Ay":                 "10734004088266146241393102410697198390225666634906567834302254376371681698208",
		"issuer key hash":    "17063043621571865318069703813770687471913562274320151421266649409155294856737",
		"public key":         "a0218f3d98b49fbdf800812aba4735638c09fb0fbffa1f8b4fd264db233bbb17",
		"signature":          "0ff99bb44142e0f3045ccc0386fd9b11d6903715138086f16d177b8c754719ada105e149764e9f5639045a9053482ba9b1fdfe91b9f241442ae9b9e193159104",
	}
	wantFields := []string{"1", want["subject commitment"], "232736699700", "5787212577059589188", "1", "20454", "20818",
		"150000", "150000", "2500", "20818", "7", "22608498519978037", "0", "0", "0", "22608498519978034", "0", "0", "0", "70", "0", "0", "0"}

	f, err := credential.Fields(exampleTerms)
	require.NoError(t, err)
	require.Len(t, f, credential.NumFields)
	for i, v := range f {
		assert.Equal(t, wantFields[i], v.String(), "field %d", i)
	}
	h1, err := poseidon.Hash(f[:12])
	require.NoError(t, err)
	h2, err := poseidon.Hash(f[12:])
	require.NoError(t, err)
	msg, err := credential.Message(exampleTerms)
	require.NoError(t, err)
	ikh, err := credential.IssuerKeyHash(k.Public())
	require.NoError(t, err)
	c, err := credential.Sign(k, exampleTerms)
	require.NoError(t, err)
	got := map[string]string{
		"subject commitment": f[1].String(), "first half": h1.String(), "second half": h2.String(), "message": msg.String(),
		"Ax": k.Public().X.String(), "Ay": k.Public().Y.String(), "issuer key hash": ikh.String(),
		"public key": c.Issuer, "signature": c.Signature,
	}
	assert.Equal(t, want, got)

	doc, err := os.ReadFile("../docs/credentials.md")
	require.NoError(t, err)
	for name, v := range want {
		assert.Contains(t, string(doc), v, "docs/credentials.md shows the %s", name)
	}
	for i, v := range wantFields {
		assert.Contains(t, string(doc), "| "+itoa(i)+" |", "docs/credentials.md lists field %d", i)
		assert.Contains(t, string(doc), v, "field %d", i)
	}
	assert.Contains(t, string(doc), exampleKeyHex)
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// TestSignedWithIden3Directly builds the message from the documented
// encoding with go-iden3-crypto alone (no code of this package), signs it
// with babyjub's SignPoseidon, and checks our Verify accepts it: a payer
// issuing with iden3's library gets a credential we take.
func TestSignedWithIden3Directly(t *testing.T) {
	t.Parallel()
	k := babyjub.NewRandPrivKey()
	str := func(s string) *big.Int { return new(big.Int).SetBytes([]byte(s)) }
	day := func(d string) *big.Int {
		tm, err := time.Parse("2006-01-02", d)
		require.NoError(t, err)
		return big.NewInt(tm.Unix() / 86400)
	}
	salt := dec("987654321")
	subject, err := poseidon.Hash([]*big.Int{str("M-42"), salt})
	require.NoError(t, err)
	fields := []*big.Int{big.NewInt(1), subject, str("87726"), str("HMO-SILVER"), big.NewInt(1), day("2026-03-01"), day("2027-02-28"),
		big.NewInt(200000), big.NewInt(35050), big.NewInt(4000), day("2027-02-28"), big.NewInt(99),
		str("70551"), str("PROC005"), big.NewInt(0), big.NewInt(0), // exclusions, ascending
		str("PROC002"), big.NewInt(0), big.NewInt(0), big.NewInt(0), big.NewInt(90), big.NewInt(0), big.NewInt(0), big.NewInt(0)}
	h1, err := poseidon.Hash(fields[:12])
	require.NoError(t, err)
	h2, err := poseidon.Hash(fields[12:])
	require.NoError(t, err)
	msg, err := poseidon.Hash([]*big.Int{h1, h2})
	require.NoError(t, err)
	sig := k.SignPoseidon(msg).Compress()
	pub := k.Public().Compress()

	c := credential.Credential{Schema: credential.Schema, Issuer: hex.EncodeToString(pub[:]), Signature: hex.EncodeToString(sig[:]),
		Terms: credential.Terms{MemberID: "M-42", Salt: "987654321", PayerID: "87726", PlanID: "HMO-SILVER", Status: "active",
			Start: "2026-03-01", End: "2027-02-28", Deductible: 2000, DeductibleMet: 350.50, Copay: 40, Expires: "2027-02-28", Nonce: 99,
			Excluded: []string{"PROC005", "70551"}, Overrides: map[string]int{"PROC002": 90}}}
	ours, err := credential.Message(c.Terms)
	require.NoError(t, err)
	assert.Equal(t, msg, ours, "our encoding is the documented one")
	require.NoError(t, c.Verify())
	require.NoError(t, c.Check("M-42", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)))
}

// TestChangedTermIsRefused: any term changed after signing breaks the
// signature.
func TestChangedTermIsRefused(t *testing.T) {
	t.Parallel()
	c, err := credential.Sign(exampleKey(), exampleTerms)
	require.NoError(t, err)
	require.NoError(t, c.Verify())
	for name, mutate := range map[string]func(*credential.Terms){
		"member":     func(t *credential.Terms) { t.MemberID = "W123456780" },
		"salt":       func(t *credential.Terms) { t.Salt = "1" },
		"payer":      func(t *credential.Terms) { t.PayerID = "60055" },
		"plan":       func(t *credential.Terms) { t.PlanID = "PPO-SILVER" },
		"status":     func(t *credential.Terms) { t.Status = "inactive" },
		"start":      func(t *credential.Terms) { t.Start = "2025-12-31" },
		"end":        func(t *credential.Terms) { t.End = "2027-12-31" },
		"deductible": func(t *credential.Terms) { t.Deductible = 1000 },
		"met":        func(t *credential.Terms) { t.DeductibleMet = 1499.99 },
		"copay":      func(t *credential.Terms) { t.Copay = 0 },
		"expires":    func(t *credential.Terms) { t.Expires = "2030-01-01" },
		"nonce":      func(t *credential.Terms) { t.Nonce = 8 },
		"exclusion":  func(t *credential.Terms) { t.Excluded = nil },
		"override":   func(t *credential.Terms) { t.Overrides = map[string]int{"PROC002": 100} },
	} {
		changed := *c
		changed.Terms.Overrides = map[string]int{"PROC002": 70}
		changed.Terms.Excluded = []string{"PROC005"}
		mutate(&changed.Terms)
		assert.ErrorIs(t, changed.Verify(), credential.ErrBadSignature, name)
	}
	other, err := credential.GenerateKey()
	require.NoError(t, err)
	forged := *c
	forged.Issuer = credential.PublicKeyHex(other)
	assert.ErrorIs(t, forged.Verify(), credential.ErrBadSignature, "another issuer's key")
}

func TestCheck(t *testing.T) {
	t.Parallel()
	c, err := credential.Sign(exampleKey(), exampleTerms)
	require.NoError(t, err)
	in := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
	require.NoError(t, c.Check("W123456789", in), "the expiry day still counts")
	assert.ErrorIs(t, c.Check("W123456789", in.Add(2*time.Hour)), credential.ErrExpired)
	assert.ErrorIs(t, c.Check("W000000000", in), credential.ErrSubjectMismatch)

	for name, mutate := range map[string]func(*credential.Credential){
		"schema":          func(c *credential.Credential) { c.Schema = "other/v9" },
		"issuer not hex":  func(c *credential.Credential) { c.Issuer = "zz" },
		"issuer length":   func(c *credential.Credential) { c.Issuer = c.Issuer[:10] },
		"signature short": func(c *credential.Credential) { c.Signature = c.Signature[:100] },
		"S not reduced": func(c *credential.Credential) {
			b, _ := hex.DecodeString(c.Signature)
			s := new(big.Int).Add(new(big.Int).SetBytes(reverse(b[32:])), babyjub.SubOrder)
			copy(b[32:], reverse(leftPad(s.Bytes(), 32)))
			c.Signature = hex.EncodeToString(b)
		},
	} {
		bad := *c
		mutate(&bad)
		assert.ErrorIs(t, bad.Verify(), credential.ErrMalformed, name)
	}
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}

func leftPad(b []byte, n int) []byte {
	return append(make([]byte, n-len(b)), b...)
}

func TestEncodingErrors(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(*credential.Terms){
		"long payer":     func(t *credential.Terms) { t.PayerID = strings.Repeat("9", 32) },
		"empty plan":     func(t *credential.Terms) { t.PlanID = "" },
		"bad date":       func(t *credential.Terms) { t.Start = "2026-13-01" },
		"pre-1970":       func(t *credential.Terms) { t.End = "1969-12-31" },
		"three decimals": func(t *credential.Terms) { t.Copay = 25.005 },
		"negative":       func(t *credential.Terms) { t.Deductible = -1 },
		"status":         func(t *credential.Terms) { t.Status = "lapsed" },
		"salt":           func(t *credential.Terms) { t.Salt = "0x12" },
		"too many excl":  func(t *credential.Terms) { t.Excluded = []string{"A", "B", "C", "D", "E"} },
		"percent":        func(t *credential.Terms) { t.Overrides = map[string]int{"A": 101} },
	} {
		terms := exampleTerms
		mutate(&terms)
		_, err := credential.Message(terms)
		assert.ErrorIs(t, err, credential.ErrEncoding, name)
	}
}

// smallOrderPoints are the points of Baby Jubjub whose order divides 8,
// found as SubOrder·P for points P off the prime-order subgroup.
func smallOrderPoints(t *testing.T) []*babyjub.Point {
	t.Helper()
	seen := map[string]*babyjub.Point{}
	for y := int64(2); len(seen) < 8 && y < 10000; y++ {
		p, err := babyjub.PointFromSignAndY(y%2 == 0, big.NewInt(y))
		if err != nil {
			continue
		}
		q := new(babyjub.Point).Mul(babyjub.SubOrder, p)
		seen[q.X.String()+","+q.Y.String()] = q
	}
	require.Len(t, seen, 8)
	var out []*babyjub.Point
	for _, p := range seen {
		out = append(out, p)
	}
	return out
}

// TestSmallOrderKeyRefused: under a key of small order babyjub's
// VerifyPoseidon accepts a "signature" of any message made without a
// private key (S·B8 = R8); such a key is refused when it is read, so no
// credential issued under it is ever checked or proven.
func TestSmallOrderKeyRefused(t *testing.T) {
	t.Parallel()
	for _, a := range smallOrderPoints(t) {
		pk := babyjub.PublicKey(*a)
		s := big.NewInt(12345)
		forged := &babyjub.Signature{R8: new(babyjub.Point).Mul(s, babyjub.B8), S: s}
		require.True(t, pk.VerifyPoseidon(big.NewInt(42), forged), "iden3 accepts the forgery under a small-order key")
		require.True(t, credential.SmallOrder(&pk))

		comp := pk.Compress()
		_, err := credential.ParsePublicKey(hex.EncodeToString(comp[:]))
		require.ErrorIs(t, err, credential.ErrMalformed)
		assert.Contains(t, err.Error(), "small order")

		sig := forged.Compress()
		c := &credential.Credential{Schema: credential.Schema, Terms: exampleTerms, Issuer: hex.EncodeToString(comp[:]), Signature: hex.EncodeToString(sig[:])}
		require.ErrorIs(t, c.Verify(), credential.ErrMalformed)
	}
	k := babyjub.NewRandPrivKey()
	assert.False(t, credential.SmallOrder(k.Public()))
}
