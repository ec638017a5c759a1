package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/server"
)

// BenchmarkHealth is the whole middleware path of GET /health as the binary
// runs it: JSON request log (to io.Discard here, stderr in the binary), the
// spec's rate limits in process, a dependency check, from many client
// addresses so the answers are 200s. Profile it with
//
//	go test ./server -run '^$' -bench Health -benchtime 200000x -cpuprofile /tmp/health.prof
func BenchmarkHealth(b *testing.B) {
	key, err := cipher.GenerateKey()
	require.NoError(b, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(b, err)
	svc, err := healthagents.New(kr)
	require.NoError(b, err)
	lim, err := ratelimit.New()
	require.NoError(b, err)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	h, err := server.New(server.Deps{
		Service: svc, Limiter: lim,
		Checks: []server.Check{{Name: "database", Ping: func(context.Context) error { return nil }}},
	}, server.WithLogger(logger))
	require.NoError(b, err)
	const clients = 4096
	reqs := make([]*http.Request, clients) // built once: the figure is the server's own cost
	for i := range reqs {
		reqs[i] = httptest.NewRequest("GET", "/health", nil)
		reqs[i].RemoteAddr = fmt.Sprintf("10.0.%d.%d:40000", i>>8, i&255)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := reqs[i%clients]
		i++
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
