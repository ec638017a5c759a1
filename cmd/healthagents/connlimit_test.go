package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
)

// limitedServer serves h through newHTTPServer behind a connection limiter
// of max connections, as serve does.
func limitedServer(t *testing.T, h http.Handler, lim httpLimits, max int) (*connLimiter, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	conns := limitConnections(inner, max)
	srv := newHTTPServer(h, slog.New(slog.DiscardHandler), lim, conns)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(conns) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.ErrorIs(t, <-done, http.ErrServerClosed)
	})
	return conns, inner.Addr().String()
}

// rawConn is a client connection that sends requests by hand.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	// Only a guard against a hang; nothing is timed.
	require.NoError(t, c.SetDeadline(time.Now().Add(time.Minute)))
	return &rawConn{Conn: c, r: bufio.NewReader(c)}
}

// get sends GET path on the connection (kept alive) and returns the status.
func (c *rawConn) get(t *testing.T, path string) int {
	t.Helper()
	_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: test\r\n\r\n", path)
	require.NoError(t, err)
	resp, err := http.ReadResponse(c.r, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// closedByServer reports whether the server closed the connection: a read
// ends with EOF or a reset, not with the guard deadline.
func (c *rawConn) closedByServer(t *testing.T) bool {
	t.Helper()
	_, err := c.r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestIdleConnectionsDoNotLockOut: with the cap filled by idle keep-alive
// connections (one host holding them open), a new client is still served:
// the idlest connection is closed to make room, and nothing else is.
func TestIdleConnectionsDoNotLockOut(t *testing.T) {
	t.Parallel()
	const max = 3
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	conns, addr := limitedServer(t, ok, defaultHTTPLimits(), max)
	var idle []*rawConn
	for i := range max {
		c := dial(t, addr)
		require.Equal(t, http.StatusNoContent, c.get(t, "/"))
		idle = append(idle, c) // kept alive, idle between requests
		require.Eventually(t, func() bool { return conns.inState(http.StateIdle) == i+1 }, time.Minute, time.Millisecond)
	}

	newcomer := dial(t, addr)
	require.Equal(t, http.StatusNoContent, newcomer.get(t, "/"), "a new client is served at the cap")
	assert.EqualValues(t, 1, conns.evicted.Load())
	assert.True(t, idle[0].closedByServer(t), "the connection idle longest made room")
	assert.LessOrEqual(t, conns.open(), max)
	// The others still work.
	for _, c := range idle[1:] {
		assert.Equal(t, http.StatusNoContent, c.get(t, "/"))
	}

}

// TestSilentConnectionGivesWay: a connection that never sends a byte holds
// the only place; a client arriving after it is served, and the silent one
// is closed.
func TestSilentConnectionGivesWay(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	conns, addr := limitedServer(t, ok, defaultHTTPLimits(), 1)
	silent := dial(t, addr)
	require.Eventually(t, func() bool { return conns.open() == 1 }, time.Minute, time.Millisecond)
	assert.Equal(t, http.StatusNoContent, dial(t, addr).get(t, "/"))
	assert.EqualValues(t, 1, conns.evicted.Load())
	assert.True(t, silent.closedByServer(t))
}

// TestActiveConnectionsAtTheCapWait: when every connection at the cap is
// serving a request, none is closed; the newcomer waits, accepted, and is
// served once a request finishes.
func TestActiveConnectionsAtTheCapWait(t *testing.T) {
	t.Parallel()
	const max = 2
	entered, release := make(chan struct{}, 4), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusNoContent)
	})
	conns, addr := limitedServer(t, h, defaultHTTPLimits(), max)
	busy := make(chan int, max)
	for range max {
		c := dial(t, addr)
		go func() { busy <- c.get(t, "/block") }()
		<-entered
	}
	waiting := dial(t, addr)
	answered := make(chan int, 1)
	go func() { answered <- waiting.get(t, "/") }()
	require.Eventually(t, conns.waiting.Load, time.Minute, time.Millisecond, "the newcomer waits for room")
	assert.Zero(t, conns.evicted.Load(), "no connection serving a request is closed")
	select {
	case s := <-answered:
		t.Fatalf("answered (%d) while every connection was busy", s)
	default:
	}
	close(release)
	for range max {
		assert.Equal(t, http.StatusNoContent, <-busy)
	}
	assert.Equal(t, http.StatusNoContent, <-answered, "served once a request finished")
}

// TestLimiterCloseEndsAWaitingAccept: closing the listener wakes an Accept
// that waits for room.
func TestLimiterCloseEndsAWaitingAccept(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := limitConnections(inner, 1)
	first := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		assert.NoError(t, err)
		first <- c
	}()
	c1 := dial(t, inner.Addr().String())
	held := <-first
	l.track(held, http.StateActive) // serving a request: not evictable
	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		accepted <- err
	}()
	dial(t, inner.Addr().String())
	require.Eventually(t, l.waiting.Load, time.Minute, time.Millisecond)
	require.NoError(t, l.Close())
	assert.ErrorIs(t, <-accepted, net.ErrClosed)
	require.NoError(t, held.Close())
	_ = held.Close() // a second Close gives nothing back twice
	assert.Zero(t, l.open())
	_ = c1
}

func TestLoadSettings(t *testing.T) {
	t.Parallel()
	cfg, err := app.ConfigFromEnv(env(map[string]string{"MAX_IN_FLIGHT": "3", "MAX_CONNECTIONS": "100"}))
	require.NoError(t, err)
	assert.Equal(t, 3, cfg.MaxInFlight)
	assert.Equal(t, 100, cfg.MaxConnections)
	cfg, err = app.ConfigFromEnv(env(nil))
	require.NoError(t, err)
	assert.Zero(t, cfg.MaxInFlight, "0: GOMAXPROCS")
	assert.Zero(t, cfg.MaxConnections, "0: defaultMaxConnections")
	assert.Nil(t, cfg.AdmissionQueue, "unset: eight per slot")
	assert.Zero(t, cfg.AdmissionWait, "unset: server.DefaultAdmissionWait")
	cfg, err = app.ConfigFromEnv(env(map[string]string{"ADMISSION_QUEUE": "0", "ADMISSION_WAIT": "1500ms"}))
	require.NoError(t, err)
	require.NotNil(t, cfg.AdmissionQueue)
	assert.Equal(t, 0, *cfg.AdmissionQueue, "0 is kept: shed at once")
	assert.Equal(t, 1500*time.Millisecond, cfg.AdmissionWait)
	for k, v := range map[string]string{"ADMISSION_QUEUE": "-1", "ADMISSION_WAIT": "5", "MAX_IN_FLIGHT": "0"} {
		_, err := app.ConfigFromEnv(env(map[string]string{k: v}))
		require.Error(t, err, k)
		assert.True(t, strings.HasPrefix(err.Error(), k+" "), err.Error())
	}
}
