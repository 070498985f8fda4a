package faultproxy

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// TCP forwards TCP connections (a client's to PostgreSQL) to a target, and
// on demand refuses them or cuts them.
type TCP struct {
	target string
	addr   string

	mu    sync.Mutex
	kind  Kind
	ln    net.Listener
	conns map[net.Conn]bool
	done  bool
}

// StartTCP starts a TCP proxy on a free 127.0.0.1 port in front of target
// (host:port) for the test, and closes it when the test ends.
func StartTCP(t TB, target string) *TCP {
	t.Helper()
	p, err := NewTCP("127.0.0.1:0", target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// NewTCP starts a TCP proxy listening on listen in front of target. Close
// it when done.
func NewTCP(listen, target string) (*TCP, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &TCP{target: target, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	p.serveOn(ln)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *TCP) Addr() string { return p.addr }

func (p *TCP) serveOn(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			kind := p.kind
			p.mu.Unlock()
			if kind == Reset {
				reset(c)
				continue
			}
			go p.pipe(c)
		}
	}()
}

func (p *TCP) pipe(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Set changes what the proxy does: None forwards; Reset accepts and closes
// new connections at once; Refuse stops listening, so connections are
// refused. Reset and Refuse also cut the open connections, as a server
// that goes away does. Other kinds are HTTP faults: an error.
func (p *TCP) Set(kind Kind) error {
	if kind != None && kind != Reset && kind != Refuse {
		return fmt.Errorf("faultproxy: %q is not a TCP fault", kind)
	}
	p.mu.Lock()
	p.kind = kind
	ln := p.ln
	if kind != None {
		for c := range p.conns {
			c.Close()
		}
	}
	if kind == Refuse && ln != nil {
		ln.Close()
		p.ln = nil
	}
	closed := p.done
	p.mu.Unlock()
	if kind == Refuse || ln != nil || closed {
		return nil
	}
	return listenAgain(p.addr, p.serveOn)
}

// Close stops listening and cuts every connection.
func (p *TCP) Close() {
	_ = p.Set(Refuse)
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}
