package main

import (
	"net"
	"sync"
)

// defaultMaxConnections caps open client connections when MAX_CONNECTIONS
// is not set. An idle HTTP/1.1 connection costs the server about 20 KiB (a
// goroutine and its buffers), so the cap bounds that part of memory near
// 80 MiB; the heavy routes are bounded separately by the admission gate.
const defaultMaxConnections = 4096

// limitConnections returns a listener that holds at most n connections
// open at once: beyond that, Accept waits until one closes, and new
// connections wait in the kernel's accept backlog, as behind any
// connection-limited load balancer.
func limitConnections(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close stops the listener and wakes an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
