package healthagents_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/trust"
)

func TestCoverageRefusal(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err    error
		code   healthagents.Code
		detail string
	}{
		"fail/expired":          {credential.ErrExpired, healthagents.CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: the payer's coverage credential has expired"},
		"fail/revoked":          {fmt.Errorf("wrapped: %w", trust.ErrRevoked), healthagents.CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: " + trust.ErrRevoked.Error()},
		"fail/unknown issuer":   {trust.ErrUnknownIssuer, healthagents.CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: " + trust.ErrUnknownIssuer.Error()},
		"fail/subject mismatch": {credential.ErrSubjectMismatch, healthagents.CodeInvalid, "Eligibility check failed: Invalid patient record: the coverage credential's subject is not the coverage's member"},
		"fail/no credential":    {trust.ErrNoCredential, healthagents.CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: " + trust.ErrNoCredential.Error()},
		"fail/unsupported":      {fmt.Errorf("%w: %w", trust.ErrUnsupported, credential.ErrEncoding), healthagents.CodeUnprocessable, "Eligibility check failed: Invalid patient record: " + trust.ErrUnsupported.Error()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := healthagents.CoverageRefusal("Eligibility check failed", tc.err)
			require.Error(t, err)
			var he *healthagents.Error
			require.True(t, errors.As(err, &he))
			assert.Equal(t, tc.code, he.Code)
			assert.Equal(t, tc.detail, he.Detail)
			assert.ErrorIs(t, err, tc.err)
		})
	}
	assert.NoError(t, healthagents.CoverageRefusal("x", errors.New("chain down")), "not a refusal")
}
