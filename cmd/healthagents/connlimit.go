package main

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// defaultMaxConnections caps open client connections when MAX_CONNECTIONS
// is not set. An idle HTTP/1.1 connection costs the server about 20 KiB (a
// goroutine and its buffers), so the cap bounds that part of memory near
// 80 MiB; the heavy routes are bounded separately by the admission gates.
const defaultMaxConnections = 4096

// connLimiter is a listener that holds at most max client connections open.
// A connection arriving at the cap takes the place of the one idle longest
// (a keep-alive connection between requests, or one that has not sent a
// byte yet), which is closed: idle connections, however many one host
// opens, never lock other clients out. Only when every open connection is
// in the middle of a request does the newcomer wait, accepted but unserved,
// until one finishes or closes; connections behind it wait in the kernel's
// accept backlog, as behind any connection-limited load balancer.
//
// The limiter learns each connection's state from http.Server.ConnState
// (track); closing an idle connection is what IdleTimeout does anyway, and
// HTTP clients retry a request that meets a closed idle connection.
type connLimiter struct {
	net.Listener
	max       int
	mu        sync.Mutex
	conns     map[*limitConn]struct{}
	changed   chan struct{} // one pending wake-up: a connection closed or turned idle
	done      chan struct{}
	closeOnce sync.Once
	waiting   atomic.Bool  // an accepted connection waits for room
	evicted   atomic.Int64 // idle connections closed to make room
}

// limitConn is an accepted connection; it gives its place back once, on
// the first Close.
type limitConn struct {
	net.Conn
	l     *connLimiter
	state http.ConnState // guarded by l.mu
	since time.Time      // when it entered state; guarded by l.mu
	once  sync.Once
}

// limitConnections wraps ln; serve sets the server's ConnState to track.
func limitConnections(ln net.Listener, max int) *connLimiter {
	return &connLimiter{
		Listener: ln, max: max, conns: make(map[*limitConn]struct{}, min(max, 1024)),
		changed: make(chan struct{}, 1), done: make(chan struct{}),
	}
}

// Accept accepts a connection and returns it once there is room for it,
// closing the idlest connection if that is what it takes.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitConn{Conn: c, l: l, state: http.StateNew, since: time.Now()}
	for {
		l.mu.Lock()
		if len(l.conns) < l.max {
			l.conns[lc] = struct{}{}
			l.mu.Unlock()
			return lc, nil
		}
		if victim := l.idlest(); victim != nil {
			delete(l.conns, victim) // its place is the newcomer's from now on
			l.conns[lc] = struct{}{}
			l.mu.Unlock()
			l.evicted.Add(1)
			_ = victim.Close()
			return lc, nil
		}
		l.mu.Unlock()
		// Every connection is serving a request: wait for one to finish.
		l.waiting.Store(true)
		select {
		case <-l.changed:
			l.waiting.Store(false)
		case <-l.done:
			l.waiting.Store(false)
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// idlest returns the connection idle longest, preferring one between
// requests to one that has not sent a request yet, or nil when all are
// active. l.mu is held.
func (l *connLimiter) idlest() *limitConn {
	var idle, fresh *limitConn
	for c := range l.conns {
		switch c.state {
		case http.StateIdle:
			if idle == nil || c.since.Before(idle.since) {
				idle = c
			}
		case http.StateNew:
			if fresh == nil || c.since.Before(fresh.since) {
				fresh = c
			}
		}
	}
	if idle != nil {
		return idle
	}
	return fresh
}

// track is the server's ConnState hook.
func (l *connLimiter) track(c net.Conn, s http.ConnState) {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok { // *tls.Conn over ours
		c = nc.NetConn()
	}
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	lc.state, lc.since = s, time.Now()
	l.mu.Unlock()
	if s == http.StateIdle {
		l.wake()
	}
}

func (l *connLimiter) wake() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// open reports how many connections hold a place.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// inState reports how many connections are in state s.
func (l *connLimiter) inState(s http.ConnState) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := range l.conns {
		if c.state == s {
			n++
		}
	}
	return n
}

// Close stops the listener and wakes an Accept waiting for room.
func (l *connLimiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.l.wake()
	})
	return err
}
