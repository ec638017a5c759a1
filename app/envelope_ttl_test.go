package app_test

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/app"
	hacipher "github.com/healthagents/healthagents/cipher"
)

// fernetAt makes a Fernet token of plain under key (URL-safe Base64, 32
// bytes) stamped at, as a client whose token has aged would send it.
func fernetAt(t *testing.T, key string, plain []byte, at time.Time) string {
	t.Helper()
	k, err := base64.URLEncoding.DecodeString(key)
	require.NoError(t, err)
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	padded := append(append([]byte(nil), plain...), make([]byte, pad)...)
	for i := len(plain); i < len(padded); i++ {
		padded[i] = byte(pad)
	}
	tok := make([]byte, 1+8+aes.BlockSize, 1+8+aes.BlockSize+len(padded)+sha256.Size)
	tok[0] = 0x80
	binary.BigEndian.PutUint64(tok[1:], uint64(at.Unix()))
	_, err = rand.Read(tok[9 : 9+aes.BlockSize])
	require.NoError(t, err)
	block, err := aes.NewCipher(k[16:])
	require.NoError(t, err)
	ct := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, tok[9:9+aes.BlockSize]).CryptBlocks(ct, padded)
	tok = append(tok, ct...)
	mac := hmac.New(sha256.New, k[:16])
	mac.Write(tok)
	return base64.URLEncoding.EncodeToString(mac.Sum(tok))
}

// TestEnvelopeTTL: with ENVELOPE_TTL=1h, an envelope whose token was made
// two hours ago is refused with 400 and a detail saying so, one made now
// is accepted; the setting is checked.
func TestEnvelopeTTL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg, err := app.ConfigFromEnv(func(k string) string { return map[string]string{"ENVELOPE_TTL": "1h"}[k] })
	require.NoError(t, err)
	require.Equal(t, time.Hour, cfg.EnvelopeTTL)
	for _, bad := range []string{"soon", "0", "500ms", "-1h"} {
		_, err := app.ConfigFromEnv(func(k string) string { return map[string]string{"ENVELOPE_TTL": bad}[k] })
		require.ErrorContains(t, err, "ENVELOPE_TTL must be a duration", bad)
	}

	key, err := hacipher.GenerateKey()
	require.NoError(t, err)
	cfg.DataDir, cfg.FernetKey = keyedDir(t), key
	a, err := app.OpenWithOutput(ctx, cfg, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()

	plain, err := os.ReadFile("../testdata/record.json")
	require.NoError(t, err)
	envAt := func(at time.Time) healthagents.PatientData {
		tok := fernetAt(t, key, plain, at)
		c, err := hacipher.CIDFor([]byte(tok))
		require.NoError(t, err)
		sum := sha256.Sum256(plain)
		return healthagents.PatientData{PatientID: "PT-000123", EncryptedData: tok, IPFSCID: c.String(), DataHash: hex.EncodeToString(sum[:])}
	}
	old := envAt(time.Now().Add(-2 * time.Hour))
	status, body := post(t, ts.URL+"/validate-prescription", map[string]any{"patient_data": old, "drug_code": "6809"})
	assert.Equal(t, 400, status)
	assert.Equal(t, "Prescription validation failed: Envelope expired: encrypted_data was sealed more than 1h0m0s ago", body["detail"])

	fresh := envAt(time.Now())
	_, err = a.Service.OpenTrainingRecord(ctx, &fresh)
	require.NoError(t, err, "a token made now opens")
}
