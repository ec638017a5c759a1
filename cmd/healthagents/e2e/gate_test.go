package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gate is a participant's way to the server: a reverse proxy that passes
// every request on, except the first POST whose path ends in hold, which
// it holds until the test opens it. Held at round n's key advertisement
// (advertise(n)), the participant has closed the rounds before n (its
// state file says so) and joined no part of round n, and the round cannot
// leave its key advertisement without it (each run's rounds wait for all
// three hospitals); held at its first masked input, round 0 waits in its
// masked-input phase. A point the test kills a process at, the participant
// or the coordinator, whatever the machine's speed. (The participants' requests are not spaced out — --burst — and a
// round takes well under a second: a kill timed by reading their output
// landed anywhere in a later round.)
type gate struct {
	url  string
	hold string // the path suffix of the held request
	once sync.Once
	held chan struct{} // closed when the held request arrived
	open chan struct{} // closed to pass it on
}

// advertise is the path suffix of round n's key advertisement.
func advertise(n int) string { return "/rounds/" + strconv.Itoa(n) + "/keys" }

// maskedInput is the path suffix of a masked input (its round is in the
// body).
const maskedInput = "/federated/gradients"

// newGate starts a gate in front of base holding the first POST whose path
// ends in hold.
func newGate(t *testing.T, base, hold string) *gate {
	t.Helper()
	target, err := url.Parse(base)
	require.NoError(t, err)
	g := &gate{hold: hold, held: make(chan struct{}), open: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(target)
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, g.hold) {
			first := false
			g.once.Do(func() { first = true })
			if first {
				// Read the body first: the server notices a client gone
				// (the participant killed) only once it has.
				body, err := io.ReadAll(r.Body)
				if err != nil {
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				close(g.held)
				select {
				case <-g.open:
				case <-r.Context().Done(): // the participant was killed
					return
				case <-stop: // the test ended
					return
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	g.url = srv.URL
	return g
}

// waitHeld waits until the held request arrived.
func (g *gate) waitHeld(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-g.held:
	case <-time.After(within):
		t.Fatalf("no POST …%s within %v", g.hold, within)
	}
}

// pass lets the held request (and every later one) through.
func (g *gate) pass() { close(g.open) }
