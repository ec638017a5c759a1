package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPServerSettings: the server serve runs has every timeout and the
// header limit set, TLS 1.2 as the floor, and the connection limiter told
// of every connection's state.
func TestHTTPServerSettings(t *testing.T) {
	t.Parallel()
	lim := defaultHTTPLimits()
	assert.Equal(t, httpLimits{readHeader: 5 * time.Second, read: 30 * time.Second, write: 60 * time.Second, idle: 75 * time.Second, maxHeaderBytes: 64 << 10}, lim)
	conns := limitConnections(nil, 1)
	srv := newHTTPServer(http.NotFoundHandler(), slog.New(slog.DiscardHandler), lim, conns)
	assert.Equal(t, 5*time.Second, srv.ReadHeaderTimeout)
	assert.Equal(t, 30*time.Second, srv.ReadTimeout)
	assert.Equal(t, 60*time.Second, srv.WriteTimeout)
	assert.Equal(t, 75*time.Second, srv.IdleTimeout)
	assert.Equal(t, 64<<10, srv.MaxHeaderBytes)
	require.NotNil(t, srv.TLSConfig)
	assert.Equal(t, uint16(tls.VersionTLS12), srv.TLSConfig.MinVersion)
	assert.NotNil(t, srv.ConnState, "the limiter tracks connection states")
	assert.NotNil(t, srv.ErrorLog)
	assert.NotNil(t, srv.Handler)
}

// TestSlowlorisIsCutOff: a client that sends part of its headers and then
// nothing is disconnected once the read-header timeout passes (shortened
// here), while a client sending whole requests is served meanwhile. The
// minute-long client deadline only guards against a hang.
func TestSlowlorisIsCutOff(t *testing.T) {
	t.Parallel()
	lim := defaultHTTPLimits()
	lim.readHeader = 50 * time.Millisecond
	lim.read = time.Hour // so only the read-header timeout can cut it off within the guard
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	conns, addr := limitedServer(t, ok, lim, 8)

	slow := dial(t, addr)
	_, err := fmt.Fprint(slow, "GET / HTTP/1.1\r\nHost: test\r\nX-Slow: ")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, dial(t, addr).get(t, "/"), "others are served meanwhile")
	assert.True(t, slow.closedByServer(t), "the partial request is cut off, not left open")
	assert.Zero(t, conns.evicted.Load(), "by the timeout, not to make room")
	require.Eventually(t, func() bool { return conns.open() <= 1 }, time.Minute, time.Millisecond, "its place is given back")

	// Headers over the limit are refused outright (431). On a server of its
	// own with the default read-header timeout: sending 80 KiB on a loaded
	// machine can take longer than the 50 ms above, which would cut it off
	// before the size check (a flake seen under a parallel test run).
	_, bigAddr := limitedServer(t, ok, defaultHTTPLimits(), 8)
	big := dial(t, bigAddr)
	_, err = fmt.Fprintf(big, "GET / HTTP/1.1\r\nHost: test\r\nX-Big: %0*d\r\n\r\n", 80<<10, 0)
	require.NoError(t, err)
	resp, err := http.ReadResponse(big.r, nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

// TestServeListensBeforeOpening: a busy port or a HOST that cannot be
// listened on stops `healthagents serve` with one line naming HOST and
// PORT, before DATA_DIR, keys, chain or a bootstrap token exist.
func TestServeListensBeforeOpening(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	for name, tt := range map[string]struct {
		env  map[string]string
		want string
	}{
		"busy port":       {map[string]string{"HOST": "127.0.0.1", "PORT": port}, "address already in use"},
		"unknown address": {map[string]string{"HOST": "192.0.2.1", "PORT": "0"}, "HOST, PORT: cannot listen on 192.0.2.1:0"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		tt.env["DATA_DIR"] = dir
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"serve"}, env(tt.env), nil, &stdout, &stderr)
		require.Error(t, err, name)
		assert.True(t, strings.HasPrefix(err.Error(), "HOST, PORT: cannot listen on "), err.Error())
		assert.Contains(t, err.Error(), tt.want, name)
		assert.NotContains(t, err.Error(), "\n")
		_, statErr := os.Stat(dir)
		assert.True(t, os.IsNotExist(statErr), "%s: nothing created under DATA_DIR", name)
		assert.Empty(t, stdout.String()+stderr.String(), "%s: nothing printed", name)
	}
}
