package cipher

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fernet/fernet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specVector is one case of the Fernet spec's generate.json, verify.json or
// invalid.json (https://github.com/fernet/spec), copied into testdata.
type specVector struct {
	Desc   string    `json:"desc"`
	Token  string    `json:"token"`
	Now    time.Time `json:"now"`
	IV     []byte    `json:"-"`
	IVInts []int     `json:"iv"`
	TTLSec int       `json:"ttl_sec"`
	Src    string    `json:"src"`
	Secret string    `json:"secret"`
}

func loadVectors(t testing.TB, name string) []specVector {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fernet-spec", name))
	require.NoError(t, err)
	var vs []specVector
	require.NoError(t, json.Unmarshal(b, &vs))
	require.NotEmpty(t, vs)
	for i := range vs {
		for _, x := range vs[i].IVInts {
			vs[i].IV = append(vs[i].IV, byte(x))
		}
	}
	return vs
}

// ringAt returns a ring of the vector's secret whose clock reads now and whose
// IV source yields iv: the unexported test hooks.
func ringAt(t *testing.T, secret string, now time.Time, iv []byte) *Keyring {
	t.Helper()
	k, err := ParseKeyring(secret)
	require.NoError(t, err)
	k.now = func() time.Time { return now }
	if iv != nil {
		k.rand = bytes.NewReader(iv)
	}
	return k
}

func TestFernetSpecGenerate(t *testing.T) {
	t.Parallel()
	for i, v := range loadVectors(t, "generate.json") {
		t.Run(fmt.Sprintf("ok/%d", i), func(t *testing.T) {
			t.Parallel()
			require.Len(t, v.IV, 16)
			k := ringAt(t, v.Secret, v.Now, v.IV)
			tok, err := k.Encrypt([]byte(v.Src))
			require.NoError(t, err)
			assert.Equal(t, v.Token, string(tok))
		})
	}
}

func TestFernetSpecVerify(t *testing.T) {
	t.Parallel()
	for i, v := range loadVectors(t, "verify.json") {
		t.Run(fmt.Sprintf("ok/%d", i), func(t *testing.T) {
			t.Parallel()
			k := ringAt(t, v.Secret, v.Now, nil)
			msg, err := k.Decrypt([]byte(v.Token), time.Duration(v.TTLSec)*time.Second)
			require.NoError(t, err)
			assert.Equal(t, v.Src, string(msg))
			// With ttl 0 (our default) the timestamp is not checked at all.
			k.now = func() time.Time { return v.Now.Add(100 * 365 * 24 * time.Hour) }
			msg, err = k.Decrypt([]byte(v.Token), 0)
			require.NoError(t, err)
			assert.Equal(t, v.Src, string(msg))
		})
	}
}

func TestFernetSpecInvalid(t *testing.T) {
	t.Parallel()
	// Which sentinel each case of invalid.json must produce.
	want := map[string]error{
		"incorrect mac":  ErrDecrypt,
		"too short":      ErrInvalidEncoding,
		"invalid base64": ErrInvalidEncoding,
		"payload size not multiple of block size": ErrInvalidEncoding,
		"payload padding error":                   ErrDecrypt,
		"far-future TS (unacceptable clock skew)": ErrDecrypt,
		"expired TTL":                         ErrDecrypt,
		"incorrect IV (causes padding error)": ErrDecrypt,
	}
	vs := loadVectors(t, "invalid.json")
	require.Len(t, vs, len(want), "a new invalid.json case needs an expectation here")
	for _, v := range vs {
		t.Run("fail/"+v.Desc, func(t *testing.T) {
			t.Parallel()
			sentinel, ok := want[v.Desc]
			require.True(t, ok, "unexpected case %q", v.Desc)
			k := ringAt(t, v.Secret, v.Now, nil)
			msg, err := k.Decrypt([]byte(v.Token), time.Duration(v.TTLSec)*time.Second)
			require.Error(t, err)
			assert.Nil(t, msg)
			assert.ErrorIs(t, err, sentinel)
			var te *TokenError
			assert.ErrorAs(t, err, &te)
			assert.NotContains(t, err.Error(), v.Secret)
			assert.NotContains(t, err.Error(), v.Token[10:30])
		})
	}
}

// The two time-based cases pass once the ttl no longer rules them out, which
// shows the failure above came from the clock rule and nothing else.
func TestFernetTTLIsTheOnlyReason(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t, "invalid.json") {
		if v.Desc != "expired TTL" && !strings.HasPrefix(v.Desc, "far-future") {
			continue
		}
		k := ringAt(t, v.Secret, v.Now, nil)
		_, err := k.Decrypt([]byte(v.Token), 0)
		assert.NoError(t, err, v.Desc)
	}
}

func testKey(b byte) *fernet.Key {
	var k fernet.Key
	for i := range k {
		k[i] = b + byte(i)
	}
	return &k
}

// Interoperability with github.com/fernet/fernet-go in both directions.
func TestFernetInterop(t *testing.T) {
	t.Parallel()
	old, cur := testKey(1), testKey(100)
	ring, err := NewKeyring(cur, old)
	require.NoError(t, err)
	for _, msg := range []string{"", "x", "exactly 16 bytes", strings.Repeat("r", 1000)} {
		theirs, err := fernet.EncryptAndSign([]byte(msg), old)
		require.NoError(t, err)
		got, err := ring.Decrypt(theirs, time.Minute)
		require.NoError(t, err)
		assert.Equal(t, msg, string(got))

		ours, err := ring.Encrypt([]byte(msg))
		require.NoError(t, err)
		assert.Equal(t, msg, string(fernet.VerifyAndDecrypt(ours, time.Minute, []*fernet.Key{cur})))
		assert.Nil(t, fernet.VerifyAndDecrypt(ours, 0, []*fernet.Key{old}), "encrypts with the first key only")
	}
}

func TestDecryptForms(t *testing.T) {
	t.Parallel()
	ring, err := NewKeyring(testKey(7))
	require.NoError(t, err)
	tok, err := ring.Encrypt([]byte("payload"))
	require.NoError(t, err)
	raw, err := base64.URLEncoding.DecodeString(string(tok))
	require.NoError(t, err)
	for name, form := range map[string]string{
		"ok/url padded": string(tok),
		"ok/url raw":    base64.RawURLEncoding.EncodeToString(raw),
		"ok/std padded": base64.StdEncoding.EncodeToString(raw),
		"ok/std raw":    base64.RawStdEncoding.EncodeToString(raw),
	} {
		got, err := ring.Decrypt([]byte(form), 0)
		require.NoError(t, err, name)
		assert.Equal(t, "payload", string(got), name)
	}
	// A token whose version byte is not 0x80 is rejected even though its HMAC
	// would be recomputed over the changed byte anyway.
	bad := bytes.Clone(raw)
	bad[0] = 0x81
	_, err = ring.Decrypt([]byte(base64.URLEncoding.EncodeToString(bad)), 0)
	require.ErrorIs(t, err, ErrDecrypt)
	assert.Contains(t, err.Error(), "version")

	var zero Keyring
	_, err = zero.Decrypt(tok, 0)
	require.Error(t, err)
	_, err = zero.Encrypt(nil)
	require.Error(t, err)
}

func TestParseKeyring(t *testing.T) {
	t.Parallel()
	a, b := testKey(1), testKey(50)
	url := a.Encode()
	std := base64.StdEncoding.EncodeToString(b[:])
	tests := []struct {
		name  string
		in    string
		n     int
		fails string
	}{
		{"ok/one", url, 1, ""},
		{"ok/two with spaces", " " + url + " ,\t" + std + "\n", 2, ""},
		{"ok/unpadded", strings.TrimRight(url, "="), 1, ""},
		{"ok/std unpadded", strings.TrimRight(std, "="), 1, ""},
		{"fail/empty", "", 0, "entry 1 of 1 is empty"},
		{"fail/trailing comma", url + ",", 0, "entry 2 of 2 is empty"},
		{"fail/not base64", url + ",@@@@" + url[4:], 0, "entry 2 of 2 is not Base64"},
		{"fail/short", base64.URLEncoding.EncodeToString(a[:16]), 0, "decodes to 16 bytes, want 32"},
		{"fail/hex is not accepted", fmt.Sprintf("%x", a[:]), 0, "want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, err := ParseKeyring(tt.in)
			if tt.fails != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.fails)
				assert.NotContains(t, err.Error(), url[5:25])
				assert.NotContains(t, err.Error(), std[5:25])
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.n, k.Len())
		})
	}
	// Key order: the first one encrypts.
	k, err := ParseKeyring(url + "," + std)
	require.NoError(t, err)
	tok, err := k.Encrypt([]byte("m"))
	require.NoError(t, err)
	assert.Equal(t, "m", string(fernet.VerifyAndDecrypt(tok, 0, []*fernet.Key{a})))
}

func TestNewKeyringAndGenerateKey(t *testing.T) {
	t.Parallel()
	_, err := NewKeyring()
	require.Error(t, err)
	_, err = NewKeyring(testKey(1), nil)
	require.Error(t, err)

	// The ring copies its keys: changing the caller's key later changes nothing.
	k := testKey(3)
	ring, err := NewKeyring(k)
	require.NoError(t, err)
	tok, err := ring.Encrypt([]byte("m"))
	require.NoError(t, err)
	k[0] ^= 0xff
	_, err = ring.Decrypt(tok, 0)
	require.NoError(t, err)

	s1, err := GenerateKey()
	require.NoError(t, err)
	s2, err := GenerateKey()
	require.NoError(t, err)
	assert.Len(t, s1, 44)
	assert.NotEqual(t, s1, s2)
	ring, err = ParseKeyring(s1 + "," + s2)
	require.NoError(t, err)
	assert.Equal(t, 2, ring.Len())
}

func TestKeyringNeverPrintsKeys(t *testing.T) {
	t.Parallel()
	key := testKey(9)
	ring, err := NewKeyring(key, testKey(40))
	require.NoError(t, err)
	assert.Equal(t, "cipher.Keyring(2 keys)", ring.String())
	one, err := NewKeyring(key)
	require.NoError(t, err)
	assert.Equal(t, "cipher.Keyring(1 key)", one.String())

	secretForms := []string{key.Encode(), fmt.Sprintf("%x", key[:]), fmt.Sprint(key[:]), fmt.Sprintf("%d", key[0:4])}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		for _, v := range []any{ring, *ring, []any{ring}, struct{ K *Keyring }{ring}} {
			out := fmt.Sprintf(verb, v)
			for _, s := range secretForms {
				assert.NotContains(t, out, s, "verb %s printed key material: %s", verb, out)
			}
		}
	}
	//lint:ignore SA9005 the point: a Keyring marshals to nothing
	b, err := json.Marshal(ring)
	require.NoError(t, err)
	assert.JSONEq(t, "{}", string(b))
}
