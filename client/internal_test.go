package client

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
)

func TestServerWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p := &policy{now: func() time.Time { return now }}
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"ok/seconds", 503, map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"ok/zero", 429, map[string]string{"Retry-After": "0"}, 0, true},
		{"ok/HTTP date", 503, map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"ok/HTTP date in the past", 503, map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"ok/reset on 429", 429, map[string]string{"X-RateLimit-Reset": strconv.FormatInt(now.Add(42*time.Second).Unix(), 10)}, 42 * time.Second, true},
		{"ok/reset in the past", 429, map[string]string{"X-RateLimit-Reset": strconv.FormatInt(now.Add(-5*time.Second).Unix(), 10)}, 0, true},
		{"ok/Retry-After wins over reset", 429, map[string]string{"Retry-After": "3", "X-RateLimit-Reset": strconv.FormatInt(now.Add(time.Hour).Unix(), 10)}, 3 * time.Second, true},
		{"fail/reset ignored on 503", 503, map[string]string{"X-RateLimit-Reset": strconv.FormatInt(now.Add(time.Hour).Unix(), 10)}, 0, false},
		{"fail/negative seconds", 503, map[string]string{"Retry-After": "-1"}, 0, false},
		{"fail/garbage", 503, map[string]string{"Retry-After": "soon"}, 0, false},
		{"fail/none", 429, nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
			for k, v := range tc.header {
				resp.Header.Set(k, v)
			}
			got, ok := p.serverWait(resp)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestExponentialBackoffBounds(t *testing.T) {
	t.Parallel()
	s := &settings{backoffInitial: 100 * time.Millisecond, backoffMax: time.Second}
	for attempts, ceil := range map[int]time.Duration{
		1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 40: time.Second, 100: time.Second,
	} {
		p := &policy{s: s, attempts: attempts}
		var seenHigh bool
		for range 200 {
			d := p.exponential()
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.Less(t, d, ceil, "attempts=%d", attempts)
			seenHigh = seenHigh || d >= ceil/2
		}
		assert.True(t, seenHigh, "jitter spans the range (attempts=%d)", attempts)
	}
}

func TestV1Code(t *testing.T) {
	t.Parallel()
	for detail, want := range map[string]string{
		"NO_INSURANCE: no active coverage on 2026-11-21": "NO_INSURANCE",
		"PATIENT_NOT_FOUND: x":                           "PATIENT_NOT_FOUND",
		"PROOF_FAILED:":                                  "PROOF_FAILED",
		"Unauthorized: Invalid API key":                  "",
		"Eligibility check failed: Data hash mismatch":   "",
		"ID: short": "",
		"_BAD: x":   "",
		"1ABC: x":   "",
		"no colon":  "",
		"":          "",
	} {
		assert.Equal(t, want, v1Code(detail), detail)
	}
}

func TestCodeOfMatchesServerTable(t *testing.T) {
	t.Parallel()
	// The server's code → status table (server/errors.go), restated: the
	// client must map each status back to the code it came from. The
	// server answers its own timeouts with 500 and the operation's detail
	// (the spec's status table has no 504); a 504 or 408 comes from a proxy
	// or gateway in between, and reads as CodeTimeout.
	for code, status := range map[healthagents.Code]int{
		healthagents.CodeInvalid: 400, healthagents.CodeUnauthorized: 401, healthagents.CodeForbidden: 403,
		healthagents.CodeNotFound: 404, healthagents.CodeConflict: 409, healthagents.CodeTooLarge: 413,
		healthagents.CodeUnprocessable: 422, healthagents.CodeRateLimited: 429, healthagents.CodeInternal: 500,
		healthagents.CodeUnavailable: 503,
	} {
		assert.Equal(t, code, codeOf(status), "status %d", status)
	}
	assert.Equal(t, healthagents.CodeTimeout, codeOf(504))
	assert.Equal(t, healthagents.CodeTimeout, codeOf(408))
}

func FuzzParseError(f *testing.F) {
	f.Add(400, `{"detail":"Invalid encrypted data format"}`, "", "")
	f.Add(429, `{"detail":"Rate limit exceeded. Try again in 60 seconds."}`, "60", "1790000000")
	f.Add(502, "<html>bad gateway</html>", "Fri, 21 Nov 2026 10:00:00 GMT", "x")
	f.Add(404, `{"detail":"PATIENT_NOT_FOUND: PT-1"}`, "-1", "99999999999999999999")
	f.Add(500, "\xff\xfe not utf8", "", "")
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, body, retry, reset string) {
		h := http.Header{}
		h.Set("Retry-After", retry)
		h.Set("X-RateLimit-Reset", reset)
		e := parseError(status, h, []byte(body), now)
		if e.Detail == "" {
			t.Fatal("empty detail")
		}
		if len(e.Detail) > maxDetail+len("…") && !json200(body) {
			t.Fatalf("detail of %d bytes from a non-JSON body", len(e.Detail))
		}
		if healthagents.ErrorCode(e) != e.Code {
			t.Fatal("unwrapped code differs")
		}
		if e.RateLimit != nil && e.RateLimit.RetryAfter < 0 {
			t.Fatal("negative RetryAfter")
		}
	})
}

// json200 reports whether body starts like a JSON object, whose detail is
// kept whole.
func json200(body string) bool { return len(body) > 0 && body[0] == '{' }
