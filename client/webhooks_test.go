package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/webhook"
)

// The test vector published with the Standard Webhooks specification.
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func hookHeaders(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	return h
}

func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	at := func(sec int64) client.WebhookOption {
		return client.WithWebhookClock(func() time.Time { return time.Unix(sec, 0) })
	}
	atNano := func(sec, nsec int64) client.WebhookOption {
		return client.WithWebhookClock(func() time.Time { return time.Unix(sec, nsec) })
	}
	other := "whsec_c2VjcmV0LW9mLWFub3RoZXItZW5kcG9pbnQtMTIzNA=="
	tests := []struct {
		name   string
		secret string
		h      http.Header
		body   string
		opts   []client.WebhookOption
		want   error
	}{
		{"ok/spec vector", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS)}, nil},
		{"ok/secret without prefix", vecSecret[6:], hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS)}, nil},
		{"ok/one of several signatures", vecSecret, hookHeaders(vecID, vecTS, "v1,Zm9v v1a,abc "+vecSig), vecBody, []client.WebhookOption{at(vecTS)}, nil},
		{"ok/just within tolerance", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS + 300)}, nil},
		{"ok/tolerance widened", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS + 3600), client.WithWebhookTolerance(time.Hour)}, nil},
		{"fail/too old", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS + 301)}, client.ErrWebhookTimestamp},
		{"fail/from the future", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS - 301)}, client.ErrWebhookTimestamp},
		{"fail/tampered body", vecSecret, hookHeaders(vecID, vecTS, vecSig), `{"test": 2432232315}`, []client.WebhookOption{at(vecTS)}, client.ErrWebhookSignature},
		{"fail/other id", vecSecret, hookHeaders("msg_other", vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS)}, client.ErrWebhookSignature},
		{"fail/wrong secret", other, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS)}, client.ErrWebhookSignature},
		{"fail/unknown version only", vecSecret, hookHeaders(vecID, vecTS, "v2"+vecSig[2:]), vecBody, []client.WebhookOption{at(vecTS)}, client.ErrWebhookSignature},
		{"fail/missing signature", vecSecret, hookHeaders(vecID, vecTS, ""), vecBody, []client.WebhookOption{at(vecTS)}, client.ErrWebhookHeaders},
		{"fail/bad timestamp", vecSecret, func() http.Header {
			h := hookHeaders(vecID, 0, vecSig)
			h.Set("webhook-timestamp", "yesterday")
			return h
		}(), vecBody, nil, client.ErrWebhookHeaders},
		{"fail/bad secret", "whsec_***", hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS)}, client.ErrWebhookSecret},
		{"fail/zero tolerance", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS), client.WithWebhookTolerance(0)}, client.ErrWebhookTolerance},
		{"fail/negative tolerance", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS + 86400), client.WithWebhookTolerance(-time.Second)}, client.ErrWebhookTolerance},
		{"ok/explicitly unchecked", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{at(vecTS + 86400), client.WithoutWebhookTimestampCheck()}, nil},
		{"fail/unchecked still verifies", vecSecret, hookHeaders(vecID, vecTS, vecSig), `{}`, []client.WebhookOption{client.WithoutWebhookTimestampCheck()}, client.ErrWebhookSignature},
		// A sub-second tolerance is not exact-second matching: the sender
		// signed somewhere within the header's second.
		{"ok/sub-second tolerance, same second", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{atNano(vecTS, 700e6), client.WithWebhookTolerance(500 * time.Millisecond)}, nil},
		{"ok/sub-second tolerance, next second", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{atNano(vecTS+1, 300e6), client.WithWebhookTolerance(500 * time.Millisecond)}, nil},
		{"ok/sub-second tolerance, a bit early", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{atNano(vecTS-1, 600e6), client.WithWebhookTolerance(500 * time.Millisecond)}, nil},
		{"fail/sub-second tolerance, too late", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{atNano(vecTS+1, 600e6), client.WithWebhookTolerance(500 * time.Millisecond)}, client.ErrWebhookTimestamp},
		{"fail/sub-second tolerance, too early", vecSecret, hookHeaders(vecID, vecTS, vecSig), vecBody, []client.WebhookOption{atNano(vecTS-1, 400e6), client.WithWebhookTolerance(500 * time.Millisecond)}, client.ErrWebhookTimestamp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := client.VerifyWebhook(tt.secret, tt.h, []byte(tt.body), tt.opts...)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// The service's signer (package webhook) and the SDK's verifier are written
// apart; they must agree, and both match the vector above.
func TestVerifyWebhookAcceptsTheServiceSignature(t *testing.T) {
	t.Parallel()
	secret := "whsec_" + "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	now := time.Now()
	body := []byte(`{"event":"eligibility.verified","timestamp":"2026-11-21T10:00:00Z","data":{"patient_id":"ab","coverage_percentage":80,"requires_auth":false}}`)
	sig, err := webhook.Sign(secret, "msg_abc", now, body)
	require.NoError(t, err)
	ev, err := client.ParseWebhook(secret, hookHeaders("msg_abc", now.Unix(), sig), body)
	require.NoError(t, err)
	assert.Equal(t, "msg_abc", ev.ID)
	assert.Equal(t, "eligibility.verified", ev.Event)
	assert.JSONEq(t, `{"patient_id":"ab","coverage_percentage":80,"requires_auth":false}`, string(ev.Data))
}

func FuzzVerifyWebhook(f *testing.F) {
	f.Add(vecID, "1614265330", vecSig, []byte(vecBody))
	f.Add("", "", "", []byte{})
	f.Add("msg_1", "-1", "v1, v1,=== v1a,xx", []byte("{}"))
	now := client.WithWebhookClock(func() time.Time { return time.Unix(vecTS, 0) })
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		err := client.VerifyWebhook(vecSecret, h, body, now)
		if err == nil && !(id == vecID && string(body) == vecBody) {
			t.Fatalf("accepted a forged delivery: id=%q ts=%q sig=%q body=%q", id, ts, sig, body)
		}
		if err != nil && !errors.Is(err, client.ErrWebhookHeaders) && !errors.Is(err, client.ErrWebhookTimestamp) && !errors.Is(err, client.ErrWebhookSignature) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// A receiver verifies each delivery before acting on it.
func ExampleVerifyWebhook() {
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	body := []byte(`{"test": 2432232314}`)
	sentAt := client.WithWebhookClock(func() time.Time { return time.Unix(1614265330, 0) }) // a receiver uses the real clock
	err := client.VerifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", h, body, sentAt)
	fmt.Println(err)
	err = client.VerifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", h, body)
	fmt.Println(err)
	// Output:
	// <nil>
	// client: webhook timestamp outside the tolerance
}
