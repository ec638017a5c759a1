package api_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/healthagents/healthagents/api"
)

// A usable X25519 public key (the base point, u = 9) and a low-order one.
var (
	goodKey = "09" + strings.Repeat("00", 31)
	zeroKey = strings.Repeat("00", 32)
)

func TestValidate(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		req    interface{ Validate() error }
		detail string // "" for valid
	}{
		"ok/organization":             {api.OrganizationRequest{OrganizationName: "Mercy", Endpoint: "https://mercy.example.org", EncryptionKey: goodKey}, ""},
		"fail/organization name":      {api.OrganizationRequest{OrganizationName: " ", Endpoint: "https://m.example.org", EncryptionKey: goodKey}, "Validation error: field 'organization_name' must be 1-200 printable characters"},
		"fail/organization endpoint":  {api.OrganizationRequest{OrganizationName: "M", Endpoint: "ftp://m.example.org", EncryptionKey: goodKey}, "Validation error: field 'endpoint' must be an http(s) URL with a host and no user info"},
		"fail/organization key":       {api.OrganizationRequest{OrganizationName: "M", Endpoint: "https://m.example.org", EncryptionKey: zeroKey}, "Validation error: field 'encryption_key' must be an X25519 public key: 32 bytes as 64 hex digits or Base64"},
		"ok/keys":                     {api.KeysSubmission{CipherPublicKey: goodKey, MaskPublicKey: goodKey}, ""},
		"fail/keys not hex":           {api.KeysSubmission{CipherPublicKey: "zz", MaskPublicKey: goodKey}, "Validation error: field 'cipher_public_key' must be hex"},
		"fail/keys low order":         {api.KeysSubmission{CipherPublicKey: goodKey, MaskPublicKey: zeroKey}, "Validation error: X25519 public key of low order"},
		"ok/shares":                   {api.SharesSubmission{Commitment: "ab", Shares: []api.SealedShare{{To: "b", Ciphertext: "cd"}}}, ""},
		"fail/shares commitment":      {api.SharesSubmission{Commitment: "x"}, "Validation error: field 'commitment' must be hex"},
		"fail/shares ciphertext":      {api.SharesSubmission{Commitment: "ab", Shares: []api.SealedShare{{To: "b", Ciphertext: "q"}}}, "Validation error: field 'shares.ciphertext' must be hex"},
		"ok/gradients":                {api.GradientSubmission{GradientsEncrypted: hex.EncodeToString([]byte("HASM"))}, ""},
		"fail/gradients sample count": {api.GradientSubmission{SampleCount: -1}, "Validation error: field 'sample_count' must be at least 0"},
		"fail/gradients not hex":      {api.GradientSubmission{GradientsEncrypted: "HASM"}, "Validation error: field 'gradients_encrypted' must be hex"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tc.req.Validate()
			if tc.detail == "" {
				assert.NoError(t, err)
				return
			}
			var ve *api.ValidationError
			if assert.True(t, errors.As(err, &ve), "%v", err) {
				assert.Equal(t, tc.detail, ve.Detail)
			}
		})
	}
}
