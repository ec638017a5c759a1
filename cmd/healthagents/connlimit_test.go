package main

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
)

func TestLimitConnections(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := limitConnections(inner, 2).(*limitListener)
	defer ln.Close()

	type result struct {
		c   net.Conn
		err error
	}
	accepted := make(chan result, 4)
	go func() {
		for {
			c, err := ln.Accept()
			accepted <- result{c, err}
			if err != nil {
				return
			}
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		clients = append(clients, c)
	}
	first, second := <-accepted, <-accepted
	require.NoError(t, first.err)
	require.NoError(t, second.err)
	// Both slots are taken: the accept loop now waits for one, so the third
	// connection stays in the backlog.
	require.Eventually(t, func() bool { return len(ln.slots) == 2 }, 10*time.Second, time.Millisecond)
	assert.Empty(t, accepted, "a third connection was accepted beyond the limit")

	require.NoError(t, first.c.Close())
	_ = first.c.Close() // a second Close gives nothing back twice
	third := <-accepted
	require.NoError(t, third.err, "closing a connection frees its slot")
	assert.Len(t, ln.slots, 2)

	require.NoError(t, second.c.Close())
	require.NoError(t, third.c.Close())
	require.Eventually(t, func() bool { return len(ln.slots) <= 1 }, 10*time.Second, time.Millisecond)

	// Closing the listener ends a waiting Accept.
	require.NoError(t, ln.Close())
	for r := range accepted {
		if r.err != nil {
			assert.True(t, errors.Is(r.err, net.ErrClosed), "%v", r.err)
			break
		}
		r.c.Close()
	}
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
}
