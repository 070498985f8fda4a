package sim

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// The exporter reads the engine and the databases through these proxies,
// so that database-down, engine-down and engine-500 change what the
// exporter sees without stopping what the workers use: a fault on the
// observer's path, told apart from faults in the workload.

// tcpProxy forwards TCP connections (PostgreSQL) to target. While
// database-down is on it accepts and closes new connections at once and
// has cut the open ones.
type tcpProxy struct {
	l      net.Listener
	target string
	faults *faultSet

	mu    sync.Mutex
	conns map[net.Conn]bool
}

func startTCPProxy(listen, target string) (*tcpProxy, error) {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &tcpProxy{l: l, target: target, faults: &faultSet{}, conns: map[net.Conn]bool{}}
	go p.serve()
	return p, nil
}

func (p *tcpProxy) addr() string { return p.l.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		if p.faults.on(FaultDatabaseDown) {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *tcpProxy) pipe(c net.Conn) {
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

// cut closes every open connection (database-down injected).
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *tcpProxy) close() {
	p.l.Close()
	p.cut()
}

// httpProxy forwards HTTP requests to the engine's REST API. While
// engine-down is on it closes connections without an answer; while
// engine-500 is on it answers 500 as a failing engine does.
type httpProxy struct {
	srv    *http.Server
	l      net.Listener
	faults *faultSet
}

func startHTTPProxy(listen, target string) (*httpProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &httpProxy{l: l, faults: &faultSet{}}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
		r.Out.Host = u.Host
	}}
	p.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case p.faults.on(FaultEngineDown):
			// Hang up without an answer, like a stopped engine behind a
			// load balancer.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			http.Error(w, "engine down", http.StatusBadGateway)
		case p.faults.on(FaultEngine500):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"type":"ProcessEngineException","message":"simulated engine failure (workflow-sim engine-500)"}`)
		default:
			rp.ServeHTTP(w, r)
		}
	})}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func (p *httpProxy) addr() string { return p.l.Addr().String() }

func (p *httpProxy) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}
