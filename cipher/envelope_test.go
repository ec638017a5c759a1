package cipher

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multibase"
	"github.com/multiformats/go-multihash"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A record with a marker that must never show up in an error.
const testRecord = `{"schema":"healthagents/record/v1","patient_id":"PT-000123","diagnosis":"SECRET-MARKER-positive"}`

func testRing(t testing.TB) *Keyring {
	t.Helper()
	k, err := NewKeyring(testKey(11), testKey(77))
	require.NoError(t, err)
	return k
}

func seal(t testing.TB, k *Keyring, plain string) Envelope {
	t.Helper()
	env, err := Seal("PT-000123", []byte(plain), k)
	require.NoError(t, err)
	return env
}

// cidOf returns the CID string of data as `ipfs add` with layout l gives it.
func cidOf(t testing.TB, data []byte, l dagLayout) string {
	t.Helper()
	c, err := cidForLayout(data, l)
	require.NoError(t, err)
	return c.String()
}

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	for _, plain := range []string{"", "x", testRecord, strings.Repeat("0123456789abcdef", 64)} {
		env := seal(t, k, plain)
		assert.Equal(t, "PT-000123", env.PatientID)
		assert.Equal(t, DataHash([]byte(plain)), env.DataHash)
		assert.True(t, strings.HasPrefix(env.IPFSCID, "bafkrei"), env.IPFSCID)
		assert.Equal(t, cidOf(t, []byte(env.EncryptedData), layoutV1), env.IPFSCID)
		got, err := k.Open(t.Context(), env)
		require.NoError(t, err)
		assert.Equal(t, plain, string(got))
	}
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	oldRing, err := NewKeyring(testKey(1))
	require.NoError(t, err)
	env := seal(t, oldRing, testRecord)

	rotated, err := NewKeyring(testKey(2), testKey(1)) // new key first, old one kept for decryption
	require.NoError(t, err)
	got, err := rotated.Open(t.Context(), env)
	require.NoError(t, err)
	assert.Equal(t, testRecord, string(got))

	// New envelopes use the new key: a ring of only the old key cannot open them.
	fresh := seal(t, rotated, testRecord)
	_, err = oldRing.Open(t.Context(), fresh)
	require.ErrorIs(t, err, ErrDecrypt)

	// After the old key is retired, old envelopes no longer open.
	retired, err := NewKeyring(testKey(2))
	require.NoError(t, err)
	_, err = retired.Open(t.Context(), env)
	require.ErrorIs(t, err, ErrDecrypt)
}

func TestOpenEncodings(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	env := seal(t, k, testRecord)
	tok := env.EncryptedData
	raw, err := base64.URLEncoding.DecodeString(tok)
	require.NoError(t, err)
	wrapped := base64.StdEncoding.EncodeToString([]byte(tok))
	var lines strings.Builder // as base64(1) writes it: 76 columns
	for i := 0; i < len(wrapped); i += 76 {
		lines.WriteString(wrapped[i:min(i+76, len(wrapped))])
		lines.WriteString("\n")
	}
	forms := map[string]string{
		"token":                   tok,
		"token unpadded":          strings.TrimRight(tok, "="),
		"token std alphabet":      base64.StdEncoding.EncodeToString(raw),
		"base64 std of token":     wrapped,
		"base64 std raw of token": base64.RawStdEncoding.EncodeToString([]byte(tok)),
		"base64 url of token":     base64.URLEncoding.EncodeToString([]byte(tok)),
		"base64 url raw of token": base64.RawURLEncoding.EncodeToString([]byte(tok)),
		"base64 line-wrapped":     lines.String(),
	}
	for name, form := range forms {
		t.Run("ok/"+name, func(t *testing.T) {
			t.Parallel()
			// CID of the token text (what Seal made) ...
			e := env
			e.EncryptedData = form
			if form != tok && !strings.HasPrefix(name, "token") {
				got, err := k.Open(t.Context(), e)
				require.NoError(t, err)
				assert.Equal(t, testRecord, string(got))
			}
			// ... and CID of the string exactly as received.
			e.IPFSCID = cidOf(t, []byte(form), layoutV1)
			got, err := k.Open(t.Context(), e)
			require.NoError(t, err)
			assert.Equal(t, testRecord, string(got))
		})
	}
}

// Every CID shape that Open accepts for the same ciphertext.
func TestOpenCIDShapes(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	env := seal(t, k, testRecord)
	data := []byte(env.EncryptedData)
	c1, err := cid.Decode(env.IPFSCID)
	require.NoError(t, err)
	b58, err := c1.StringOfBase(multibase.Base58BTC)
	require.NoError(t, err)
	b36, err := c1.StringOfBase(multibase.Base36)
	require.NoError(t, err)
	sum := func(code uint64) string {
		h, err := multihash.Sum(data, code, -1)
		require.NoError(t, err)
		return cid.NewCidV1(cid.Raw, h).String()
	}
	shapes := map[string]string{
		"v1 raw base32 (Seal)":         env.IPFSCID,
		"v1 raw base58btc":             b58,
		"v1 raw base36":                b36,
		"v0 dag-pb (ipfs add)":         cidOf(t, data, layoutV0),
		"v1 dag-pb without raw leaves": cidOf(t, data, layoutPB),
		"v1 raw sha2-512":              sum(multihash.SHA2_512),
		"v1 raw sha3-256":              sum(multihash.SHA3_256),
		"v1 raw sha3-512":              sum(multihash.SHA3_512),
		"v1 raw blake2b-256":           sum(multihash.BLAKE2B_MIN + 31),
		"v1 raw blake3":                sum(multihash.BLAKE3),
	}
	for name, c := range shapes {
		e := env
		e.IPFSCID = c
		got, err := k.Open(t.Context(), e)
		require.NoError(t, err, name)
		assert.Equal(t, testRecord, string(got), name)
	}
}

// TestOpenRefusesUncheckedCIDs: a CID must address the ciphertext by a
// hash the service recomputes. An identity CID (which carries bytes, even
// the ciphertext itself), a truncated digest, an unsupported hash or codec
// is refused before decryption with ErrCIDUnchecked; a supported hash over
// other bytes is ErrCIDMismatch.
func TestOpenRefusesUncheckedCIDs(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	env := seal(t, k, testRecord)
	data := []byte(env.EncryptedData)
	mh := func(b []byte, code uint64, length int) multihash.Multihash {
		h, err := multihash.Sum(b, code, length)
		require.NoError(t, err)
		return h
	}
	for name, tc := range map[string]struct {
		cid  cid.Cid
		want error
	}{
		"identity of the ciphertext":  {cid.NewCidV1(cid.Raw, mh(data[:64], multihash.IDENTITY, -1)), ErrCIDUnchecked},
		"identity, dag-pb":            {cid.NewCidV1(cid.DagProtobuf, mh([]byte("x"), multihash.IDENTITY, -1)), ErrCIDUnchecked},
		"truncated sha2-256":          {cid.NewCidV1(cid.Raw, mh(data, multihash.SHA2_256, 20)), ErrCIDUnchecked},
		"sha1":                        {cid.NewCidV1(cid.Raw, mh(data, multihash.SHA1, -1)), ErrCIDUnchecked},
		"murmur3":                     {cid.NewCidV1(cid.Raw, mh(data, multihash.MURMUR3X64_64, -1)), ErrCIDUnchecked},
		"dag-cbor codec":              {cid.NewCidV1(cid.DagCBOR, mh(data, multihash.SHA2_256, -1)), ErrCIDUnchecked},
		"dag-pb sha2-512":             {cid.NewCidV1(cid.DagProtobuf, mh(data, multihash.SHA2_512, -1)), ErrCIDUnchecked},
		"sha2-512 of other bytes":     {cid.NewCidV1(cid.Raw, mh([]byte("other"), multihash.SHA2_512, -1)), ErrCIDMismatch},
		"blake3 of other bytes":       {cid.NewCidV1(cid.Raw, mh([]byte("other"), multihash.BLAKE3, -1)), ErrCIDMismatch},
		"sha2-256 raw of other bytes": {cid.NewCidV1(cid.Raw, mh([]byte("other"), multihash.SHA2_256, -1)), ErrCIDMismatch},
	} {
		e := env
		e.IPFSCID = tc.cid.String()
		_, err := k.Open(t.Context(), e)
		require.ErrorIs(t, err, tc.want, name)
		var ee *EnvelopeError
		require.ErrorAs(t, err, &ee, name)
		assert.Equal(t, FieldIPFSCID, ee.Field, name)
	}
	// Refused before any decryption: a bad token with an identity CID is
	// still an unchecked CID.
	e := env
	e.IPFSCID = cid.NewCidV1(cid.Raw, mh(data[:64], multihash.IDENTITY, -1)).String()
	e.EncryptedData = "not a token"
	_, err := k.Open(t.Context(), e)
	require.ErrorIs(t, err, ErrCIDUnchecked)
}

// Above one chunk the dag-pb roots of `ipfs add` are recomputed too.
func TestOpenMultiChunkCID(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	plain := strings.Repeat("a record line\n", 300<<10/14) // ~300 KiB: token ~400 KB, two chunks
	env := seal(t, k, plain)
	require.Greater(t, len(env.EncryptedData), chunkSize)
	assert.True(t, strings.HasPrefix(env.IPFSCID, "bafybei"), env.IPFSCID)
	data := []byte(env.EncryptedData)
	for _, c := range []string{env.IPFSCID, cidOf(t, data, layoutV0), cidOf(t, data, layoutPB)} {
		e := env
		e.IPFSCID = c
		_, err := k.Open(t.Context(), e)
		require.NoError(t, err, c)
	}
	// A raw CID of the whole text is a valid (if unusual) address too.
	e := env
	e.IPFSCID = cid.NewCidV1(cid.Raw, sha256Multihash(data)).String()
	_, err := k.Open(t.Context(), e)
	require.NoError(t, err)
	// One byte of difference in the addressed bytes is a mismatch.
	other := []byte(strings.Clone(env.EncryptedData))
	other[len(other)/2] ^= 1
	e.IPFSCID = cidOf(t, other, layoutV0)
	_, err = k.Open(t.Context(), e)
	require.ErrorIs(t, err, ErrCIDMismatch)
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	env := seal(t, k, testRecord)
	foreignRing, err := NewKeyring(testKey(200))
	require.NoError(t, err)
	foreign := seal(t, foreignRing, testRecord)
	raw, err := base64.URLEncoding.DecodeString(env.EncryptedData)
	require.NoError(t, err)
	badVersion := append([]byte{0x81}, raw[1:]...)
	tampered := append([]byte(nil), raw...)
	tampered[40] ^= 1
	enc := base64.URLEncoding.EncodeToString

	with := func(f func(e *Envelope)) Envelope { e := env; f(&e); return e }
	tests := []struct {
		name  string
		env   Envelope
		want  error
		field string
	}{
		{"fail/missing patient_id", with(func(e *Envelope) { e.PatientID = "" }), ErrMissingField, FieldPatientID},
		{"fail/missing encrypted_data", with(func(e *Envelope) { e.EncryptedData = "" }), ErrMissingField, FieldEncryptedData},
		{"fail/missing ipfs_cid", with(func(e *Envelope) { e.IPFSCID = "" }), ErrMissingField, FieldIPFSCID},
		{"fail/missing data_hash", with(func(e *Envelope) { e.DataHash = "" }), ErrMissingField, FieldDataHash},
		{"fail/all missing reports patient_id first", Envelope{}, ErrMissingField, FieldPatientID},
		{"fail/patient_id over 64 bytes", with(func(e *Envelope) { e.PatientID = strings.Repeat("P", MaxPatientIDLength+1) }), ErrInvalidPatientID, FieldPatientID},
		{"fail/patient_id of 33 two-byte characters", with(func(e *Envelope) { e.PatientID = strings.Repeat("é", 33) }), ErrInvalidPatientID, FieldPatientID},
		{"fail/patient_id with a newline", with(func(e *Envelope) { e.PatientID = "PT-1\nforged log line" }), ErrInvalidPatientID, FieldPatientID},
		{"fail/patient_id with DEL", with(func(e *Envelope) { e.PatientID = "PT-\x7f" }), ErrInvalidPatientID, FieldPatientID},
		{"fail/patient_id checked before the hash", with(func(e *Envelope) { e.PatientID = "a\tb"; e.DataHash = "XYZ" }), ErrInvalidPatientID, FieldPatientID},
		{"fail/hash uppercase", with(func(e *Envelope) { e.DataHash = strings.ToUpper(e.DataHash) }), ErrInvalidHashFormat, FieldDataHash},
		{"fail/hash short", with(func(e *Envelope) { e.DataHash = e.DataHash[:63] }), ErrInvalidHashFormat, FieldDataHash},
		{"fail/hash long", with(func(e *Envelope) { e.DataHash += "0" }), ErrInvalidHashFormat, FieldDataHash},
		{"fail/hash not hex", with(func(e *Envelope) { e.DataHash = strings.Repeat("g", 64) }), ErrInvalidHashFormat, FieldDataHash},
		{"fail/hash format before cid", with(func(e *Envelope) { e.DataHash = "XYZ"; e.IPFSCID = "nope" }), ErrInvalidHashFormat, FieldDataHash},
		{"fail/cid garbage", with(func(e *Envelope) { e.IPFSCID = "Qm-not-a-cid" }), ErrInvalidCID, FieldIPFSCID},
		{"fail/cid truncated v0", with(func(e *Envelope) { e.IPFSCID = "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5" }), ErrInvalidCID, FieldIPFSCID},
		{"fail/cid bad multibase", with(func(e *Envelope) { e.IPFSCID = "!" + e.IPFSCID[1:] }), ErrInvalidCID, FieldIPFSCID},
		{"fail/cid before encoding", with(func(e *Envelope) { e.IPFSCID = "x"; e.EncryptedData = "%%%" }), ErrInvalidCID, FieldIPFSCID},
		{"fail/not base64", with(func(e *Envelope) { e.EncryptedData = "%%%not base64%%%" }), ErrInvalidEncoding, FieldEncryptedData},
		{"fail/base64 but not a token", with(func(e *Envelope) { e.EncryptedData = base64.StdEncoding.EncodeToString([]byte(testRecord)) }), ErrInvalidEncoding, FieldEncryptedData},
		{"fail/token too short", with(func(e *Envelope) { e.EncryptedData = enc(raw[:72]) }), ErrInvalidEncoding, FieldEncryptedData},
		{"fail/token not whole blocks", with(func(e *Envelope) { e.EncryptedData = enc(raw[:len(raw)-1]) }), ErrInvalidEncoding, FieldEncryptedData},
		{"fail/too large", with(func(e *Envelope) { e.EncryptedData = strings.Repeat("A", MaxEncryptedSize+1) }), ErrInvalidEncoding, FieldEncryptedData},
		{"fail/wrong key", with(func(e *Envelope) { e.EncryptedData = foreign.EncryptedData }), ErrDecrypt, FieldEncryptedData},
		{"fail/bad hmac", with(func(e *Envelope) { e.EncryptedData = enc(tampered) }), ErrDecrypt, FieldEncryptedData},
		{"fail/unsupported version", with(func(e *Envelope) { e.EncryptedData = enc(badVersion) }), ErrDecrypt, FieldEncryptedData},
		{"fail/base64 of a foreign token", with(func(e *Envelope) {
			e.EncryptedData = base64.StdEncoding.EncodeToString([]byte(foreign.EncryptedData))
		}), ErrDecrypt, FieldEncryptedData},
		{"fail/cid of other bytes", with(func(e *Envelope) { e.IPFSCID = foreign.IPFSCID }), ErrCIDMismatch, FieldIPFSCID},
		{"fail/v0 cid of other bytes", with(func(e *Envelope) { e.IPFSCID = "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" }), ErrCIDMismatch, FieldIPFSCID},
		{"fail/raw cid of the binary token", with(func(e *Envelope) { e.IPFSCID = cidOf(t, raw, layoutV1) }), ErrCIDMismatch, FieldIPFSCID},
		{"fail/dag-pb codec over raw-block hash", with(func(e *Envelope) {
			e.IPFSCID = cid.NewCidV1(cid.DagProtobuf, sha256Multihash([]byte(env.EncryptedData))).String()
		}), ErrCIDMismatch, FieldIPFSCID},
		{"fail/hash of other data", with(func(e *Envelope) { e.DataHash = strings.Repeat("ab", 32) }), ErrHashMismatch, FieldDataHash},
		{"fail/cid mismatch before hash mismatch", with(func(e *Envelope) { e.IPFSCID = foreign.IPFSCID; e.DataHash = strings.Repeat("ab", 32) }), ErrCIDMismatch, FieldIPFSCID},
	}
	sentinels := []error{ErrMissingField, ErrInvalidPatientID, ErrInvalidHashFormat, ErrInvalidCID, ErrCIDUnchecked, ErrInvalidEncoding, ErrDecrypt, ErrEnvelopeExpired, ErrCIDMismatch, ErrHashMismatch}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := k.Open(t.Context(), tt.env)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, tt.want)
			for _, s := range sentinels {
				if s != tt.want {
					assert.NotErrorIs(t, err, s, "wraps exactly one sentinel")
				}
			}
			var fe *FieldError
			if tt.want == ErrMissingField {
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tt.field, fe.Field)
			} else {
				assert.False(t, errors.As(err, &fe), "*FieldError means a missing field only")
				var ee *EnvelopeError
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, tt.field, ee.Field)
			}
			msg := err.Error()
			assert.NotContains(t, msg, "SECRET-MARKER")
			assert.NotContains(t, msg, testKey(11).Encode())
			if len(tt.env.EncryptedData) > 40 {
				assert.NotContains(t, msg, tt.env.EncryptedData[20:40])
			}
			assert.NotContains(t, msg, env.EncryptedData[20:40])
		})
	}
}

func TestOpenContext(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	env := seal(t, k, testRecord)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got, err := k.Open(ctx, env)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, got)
	// Cheap field checks still come first, so a bad request is reported as such.
	env.DataHash = "bad"
	_, err = k.Open(ctx, env)
	require.ErrorIs(t, err, ErrInvalidHashFormat)
}

// TestPatientIDBound: 64 bytes open, 65 do not; the error names the field
// and the reason, never the id.
func TestPatientIDBound(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	id := strings.Repeat("P", MaxPatientIDLength)
	env, err := Seal(id, []byte(testRecord), k)
	require.NoError(t, err)
	_, err = k.Open(t.Context(), env)
	require.NoError(t, err, "64 bytes are accepted")

	env.PatientID = id + "Q"
	_, err = k.Open(t.Context(), env)
	require.ErrorIs(t, err, ErrInvalidPatientID)
	assert.Equal(t, "cipher: patient_id: invalid patient_id (is longer than 64 characters)", err.Error())
	env.PatientID = "PT\x00SECRET"
	_, err = k.Open(t.Context(), env)
	require.ErrorIs(t, err, ErrInvalidPatientID)
	assert.Equal(t, "cipher: patient_id: invalid patient_id (contains control characters)", err.Error())

	_, err = Seal(id+"Q", []byte(testRecord), k)
	require.ErrorIs(t, err, ErrInvalidPatientID, "Seal makes nothing Open refuses")
}

func TestSealErrors(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	_, err := Seal("", []byte("x"), k)
	require.ErrorIs(t, err, ErrMissingField)
	_, err = Seal("p", []byte("x"), nil)
	require.Error(t, err)
	_, err = Seal("p", []byte("x"), &Keyring{})
	require.Error(t, err)

	// The largest plaintext whose token fits MaxEncryptedSize seals and opens;
	// one block more is refused.
	n := 0
	for tokenLen(n+16) <= MaxEncryptedSize {
		n += 16
	}
	for tokenLen(n+1) <= MaxEncryptedSize {
		n++
	}
	big := make([]byte, n)
	env, err := Seal("p", big, k)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(env.EncryptedData), MaxEncryptedSize)
	_, err = k.Open(t.Context(), env)
	require.NoError(t, err)
	_, err = Seal("p", make([]byte, n+1), k)
	require.ErrorIs(t, err, ErrInvalidEncoding)
	var ee *EnvelopeError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, FieldEncryptedData, ee.Field)
}

func TestDataHash(t *testing.T) {
	t.Parallel()
	// FIPS 180-2 example: SHA-256("abc").
	assert.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", DataHash([]byte("abc")))
	assert.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", DataHash(nil))
}

// TestOpenEnvelopeTTL: with an envelope TTL, a token made longer ago is
// refused as ErrEnvelopeExpired once it authenticates, one within the TTL
// opens, one stamped far in the future is ErrDecrypt; without a TTL, age
// does not matter; Decrypt (values the service seals itself) ignores it.
func TestOpenEnvelopeTTL(t *testing.T) {
	t.Parallel()
	k := testRing(t)
	made := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	k.now = func() time.Time { return made }
	env := seal(t, k, testRecord)

	at := func(ring *Keyring, now time.Time) error {
		r := *ring
		r.now = func() time.Time { return now }
		_, err := r.Open(t.Context(), env)
		return err
	}
	ttl := k.WithEnvelopeTTL(time.Hour)
	assert.Equal(t, time.Hour, ttl.EnvelopeTTL())
	require.NoError(t, at(ttl, made.Add(59*time.Minute)))
	err := at(ttl, made.Add(61*time.Minute))
	require.ErrorIs(t, err, ErrEnvelopeExpired)
	var ee *EnvelopeError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, FieldEncryptedData, ee.Field)
	assert.Equal(t, "was sealed more than 1h0m0s ago", ee.Reason)
	require.ErrorIs(t, at(ttl, made.Add(-10*time.Minute)), ErrDecrypt, "stamped 10 minutes in the future")
	require.NoError(t, at(k, made.Add(24*365*time.Hour)), "no TTL: no age limit")

	// An expired token of another key is a decryption failure, not an
	// expiry: the timestamp counts only once the HMAC vouches for it.
	foreign, err := NewKeyring(testKey(201))
	require.NoError(t, err)
	foreign.now = func() time.Time { return made }
	other := seal(t, foreign, testRecord)
	r := *ttl
	r.now = func() time.Time { return made.Add(48 * time.Hour) }
	_, err = r.Open(t.Context(), other)
	require.ErrorIs(t, err, ErrDecrypt)

	tok, err := ttl.Encrypt([]byte("kept at rest"))
	require.NoError(t, err)
	got, err := r.Decrypt(tok, 0)
	require.NoError(t, err, "Decrypt is not bound by the envelope TTL")
	assert.Equal(t, "kept at rest", string(got))
}
