package webhook_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/webhook"
)

// The test vector published with the Standard Webhooks specification (and
// Svix's libraries).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheSpecVector(t *testing.T) {
	t.Parallel()
	sig, err := webhook.Sign(vectorSecret, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	require.NoError(t, err)
	assert.Equal(t, vectorSignature, sig)

	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,bm90IHRoaXMgb25l "+vectorSignature)
	assert.True(t, verifyStandardWebhooks(vectorSecret, h, []byte(vectorBody)), "the test's own verifier agrees")
	assert.False(t, verifyStandardWebhooks(vectorSecret, h, []byte(vectorBody+" ")))
}

func TestSignRefusesMalformedSecrets(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_!!!!", "whsec_c2hvcnQ="} {
		_, err := webhook.Sign(s, "msg_1", time.Unix(1, 0), nil)
		assert.Error(t, err, "%q", s)
		if err != nil && len(s) > 6 {
			assert.NotContains(t, err.Error(), s[6:], "errors never echo a secret")
		}
	}
}

func ExampleSign() {
	sig, err := webhook.Sign(vectorSecret, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	if err != nil {
		panic(err)
	}
	fmt.Println(sig)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}
