package healthagents

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/trust"
)

func TestCoverageRefusal(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err    error
		code   Code
		detail string
	}{
		"fail/expired":          {credential.ErrExpired, CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: the payer's coverage credential has expired"},
		"fail/revoked":          {fmt.Errorf("wrapped: %w", trust.ErrRevoked), CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: " + trust.ErrRevoked.Error()},
		"fail/unknown issuer":   {trust.ErrUnknownIssuer, CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: " + trust.ErrUnknownIssuer.Error()},
		"fail/subject mismatch": {credential.ErrSubjectMismatch, CodeInvalid, "Eligibility check failed: Invalid patient record: the coverage credential's subject is not the coverage's member"},
		"fail/no credential":    {trust.ErrNoCredential, CodeUnprocessable, "Eligibility check failed: Untrusted coverage credential: " + trust.ErrNoCredential.Error()},
		"fail/unsupported":      {fmt.Errorf("%w: %w", trust.ErrUnsupported, credential.ErrEncoding), CodeUnprocessable, "Eligibility check failed: Invalid patient record: " + trust.ErrUnsupported.Error()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := coverageRefusal("Eligibility check failed", tc.err)
			require.Error(t, err)
			var he *Error
			require.True(t, errors.As(err, &he))
			assert.Equal(t, tc.code, he.Code)
			assert.Equal(t, tc.detail, he.Detail)
			assert.ErrorIs(t, err, tc.err)
		})
	}
	assert.NoError(t, coverageRefusal("x", errors.New("chain down")), "not a refusal")
}
