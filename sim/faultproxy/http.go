// Package faultproxy stands between a client under test and a real server
// and does, on demand, what the server cannot be made to do: Proxy is an
// HTTP reverse proxy (in front of a Camunda engine's REST API) that injects
// one fault at a time, counts the requests per endpoint, may require basic
// auth or serve TLS, and runs per-request hooks; TCP forwards connections
// (to PostgreSQL) and can refuse or cut them.
//
// The exporter's tests use it to break the engine or the database the
// exporter reads (test/reliability, cmd/exporter, the collectors' request
// counts, the Camunda benchmark), and the workload simulator (sim/)
// uses it for the faults on the exporter's path, so a fault of the
// observer is told apart from a fault of the workload.
package faultproxy

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/certs"
)

// Kind is what a proxy does instead of forwarding faithfully.
type Kind string

// The faults: the failures of a server, or of what stands between it and
// its clients, that a real server cannot be made to produce on demand.
const (
	// None forwards every request.
	None Kind = ""
	// Status answers Fault.Status with Fault.Body, or with an engine-style
	// JSON error that echoes the request's password, as some gateways do
	// (the client must scrub it from what it logs).
	Status Kind = "status"
	// Slow waits Fault.Delay (or until the client gives up) before
	// forwarding.
	Slow Kind = "slow"
	// Hang never answers: it waits until the client gives up.
	Hang Kind = "hang"
	// Truncate forwards and cuts the server's 2xx body in half, with a
	// Content-Length that matches the cut body: valid HTTP, broken JSON.
	Truncate Kind = "truncate"
	// Body answers 200 with Fault.Body (valid JSON of the wrong shape, say).
	Body Kind = "body"
	// Reset closes the connection without an answer (TCP: accepts and
	// closes new connections at once, and cuts the open ones).
	Reset Kind = "reset"
	// Refuse stops listening: connections are refused (and open ones cut).
	Refuse Kind = "refuse"
	// BadCertificate presents a certificate from another CA (TLS proxies
	// only): clients trusting the proxy's CA refuse the handshake.
	BadCertificate Kind = "bad-certificate"
)

// Fault is what the proxy injects and where.
type Fault struct {
	Kind Kind
	// Endpoint is the path below the target's path ("/incident/count"
	// below /engine-rest) the fault applies to; empty: every endpoint.
	Endpoint string
	Status   int
	Delay    time.Duration
	Body     string
}

// Hook is a per-request behaviour that lasts until the proxy closes, beside
// the one fault of the moment: a missing endpoint, a rewritten header.
// Hooks run in the order they were added, after the request is counted and
// its credentials checked, and before the fault.
type Hook struct {
	// Request, when set, sees each request with its endpoint (the path
	// below the target's path). Returning true means it answered the
	// request itself: nothing else runs.
	Request func(w http.ResponseWriter, r *http.Request, endpoint string) bool
	// Response, when set, may change each answer the server gave before
	// the client gets it.
	Response func(resp *http.Response, endpoint string) error
}

// Options configure a Proxy.
type Options struct {
	// Listen is the address to listen on (default "127.0.0.1:0").
	Listen string
	// TLS serves HTTPS with a certificate of a throwaway CA (Proxy.CAFile).
	TLS bool
	// Username and Password, when Username is set, are required from
	// clients as basic auth (a request without them is answered 401 and
	// counted in AuthFailures) and removed before forwarding, so a server
	// without authentication stands behind a proxy that has it.
	Username, Password string
}

var quiet = log.New(io.Discard, "", 0)

// Proxy is a reverse proxy in front of one server.
type Proxy struct {
	// URL is the target's root through the proxy, e.g.
	// http(s)://127.0.0.1:port/engine-rest.
	URL string
	// CAFile is the PEM file of the CA that signed the proxy's certificate
	// (TLS proxies).
	CAFile string

	target    *url.URL
	opts      Options
	addr      string
	certDir   string
	good, bad *certs.Certificates
	srv       *http.Server
	rp        *httputil.ReverseProxy
	transport *http.Transport

	mu        sync.Mutex
	fault     Fault
	hooks     []Hook
	ln        net.Listener
	conns     map[net.Conn]bool
	counts    map[string]int
	authFails int
	closed    bool
	serving   sync.WaitGroup
}

// Start starts a proxy in front of target (a URL such as
// http://127.0.0.1:8080/engine-rest) for the test, and closes it when the
// test ends.
func Start(t TB, target string, o Options) *Proxy {
	t.Helper()
	p, err := New(target, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// New starts a proxy in front of target. Close it when done.
func New(target string, o Options) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: target %q: %w", target, err)
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	p := &Proxy{target: u, opts: o, conns: map[net.Conn]bool{}, counts: map[string]int{}}
	// Its own transport, so Set and Close can drop its idle connections
	// to the server (the leak tests compare descriptors with none open),
	// with enough of them kept for collectors that send requests in
	// parallel (the default keeps two per host).
	p.transport = http.DefaultTransport.(*http.Transport).Clone()
	p.transport.MaxIdleConns, p.transport.MaxIdleConnsPerHost = 64, 64
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
			if o.Username != "" {
				r.Out.Header.Del("Authorization")
			}
		},
		Transport:      p.transport,
		ModifyResponse: p.modify,
		ErrorLog:       quiet, // a client giving up (Slow) is expected
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second,
		ConnState: p.connState, ErrorLog: quiet} // refused handshakes are expected
	scheme := "http"
	if o.TLS {
		if p.certDir, err = os.MkdirTemp("", "faultproxy-"); err != nil {
			return nil, err
		}
		p.good, err = certs.Write(p.certDir)
		if err == nil {
			p.bad, err = certs.Write(filepath.Join(p.certDir, "other"))
		}
		if err != nil {
			os.RemoveAll(p.certDir)
			return nil, err
		}
		p.CAFile = p.good.CAFile
		scheme = "https"
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		if p.certDir != "" {
			os.RemoveAll(p.certDir)
		}
		return nil, err
	}
	p.addr = ln.Addr().String()
	p.URL = scheme + "://" + p.addr + strings.TrimRight(u.Path, "/")
	p.serveOn(ln)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// serveOn serves on a new listener (p.mu not held).
func (p *Proxy) serveOn(ln net.Listener) {
	if p.opts.TLS {
		ln = tls.NewListener(ln, &tls.Config{
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"http/1.1"}, // Reset hijacks connections
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				if p.current().Kind == BadCertificate {
					return &p.bad.Server, nil
				}
				return &p.good.Server, nil
			},
		})
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.serving.Add(1)
	go func() {
		defer p.serving.Done()
		_ = p.srv.Serve(ln)
	}()
}

func (p *Proxy) connState(c net.Conn, st http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch st {
	case http.StateNew:
		p.conns[c] = true
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
	}
}

func (p *Proxy) current() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// Set injects f (a Fault of Kind None clears). Open connections are closed
// on both sides, so the next request of a client that keeps connections
// alive meets the new fault (a new TLS handshake, a refused connection).
// Refuse closes the listener; any other fault listens again on the same
// address.
func (p *Proxy) Set(f Fault) error {
	p.mu.Lock()
	p.fault = f
	ln := p.ln
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.transport.CloseIdleConnections()
	if f.Kind == Refuse {
		if ln != nil {
			_ = ln.Close()
			p.serving.Wait()
			p.mu.Lock()
			p.ln = nil
			p.mu.Unlock()
		}
		return nil
	}
	if ln != nil {
		return nil
	}
	return listenAgain(p.addr, p.serveOn)
}

// listenAgain listens on the address a proxy had before a Refuse (the
// kernel may hold it a moment after the close) and serves on it.
func listenAgain(addr string, serve func(net.Listener)) error {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			serve(ln)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("faultproxy: listening again on %s: %w", addr, err)
}

// Use adds a hook for every later request.
func (p *Proxy) Use(h Hook) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hooks = append(p.hooks, h)
}

// Counts returns the requests per endpoint (the path below the target's
// path) since the last call, and resets them.
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.counts
	p.counts = map[string]int{}
	return out
}

// AuthFailures is how many requests came without the configured basic
// auth.
func (p *Proxy) AuthFailures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.authFails
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.srv.Close()
	p.serving.Wait()
	p.transport.CloseIdleConnections()
	if p.certDir != "" {
		_ = os.RemoveAll(p.certDir)
	}
}

func (p *Proxy) endpoint(r *http.Request) string {
	return strings.TrimPrefix(r.URL.Path, strings.TrimRight(p.target.Path, "/"))
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	endpoint := p.endpoint(r)
	p.mu.Lock()
	p.counts[endpoint]++
	f, hooks := p.fault, p.hooks
	p.mu.Unlock()
	if p.opts.Username != "" {
		if u, pw, ok := r.BasicAuth(); !ok || u != p.opts.Username || pw != p.opts.Password {
			p.mu.Lock()
			p.authFails++
			p.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Basic realm="fault proxy"`)
			http.Error(w, `{"type":"AuthenticationException","message":"fault proxy: missing or wrong credentials"}`, http.StatusUnauthorized)
			return
		}
	}
	for _, h := range hooks {
		if h.Request != nil && h.Request(w, r, endpoint) {
			return
		}
	}
	if f.Endpoint != "" && f.Endpoint != endpoint {
		f = Fault{}
	}
	switch f.Kind {
	case Status:
		w.Header().Set("Content-Type", "application/json")
		if f.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="default"`)
		}
		w.WriteHeader(f.Status)
		if f.Body != "" {
			_, _ = io.WriteString(w, f.Body)
			return
		}
		_, pw, _ := r.BasicAuth()
		_, _ = fmt.Fprintf(w, `{"type":"InjectedFault","message":"injected HTTP %d (the request carried the password %q)"}`, f.Status, pw)
		return
	case Body:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
		_, _ = io.WriteString(w, f.Body)
		return
	case Slow:
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	case Hang:
		<-r.Context().Done()
		return
	case Reset:
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				reset(c)
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	p.rp.ServeHTTP(w, r)
}

// reset closes c with a RST, not a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// modify applies Truncate and the hooks to the server's answer.
func (p *Proxy) modify(resp *http.Response) error {
	endpoint := p.endpoint(resp.Request)
	p.mu.Lock()
	f, hooks := p.fault, p.hooks
	p.mu.Unlock()
	if f.Kind == Truncate && (f.Endpoint == "" || f.Endpoint == endpoint) && resp.StatusCode/100 == 2 {
		if err := truncate(resp); err != nil {
			return err
		}
	}
	for _, h := range hooks {
		if h.Response != nil {
			if err := h.Response(resp, endpoint); err != nil {
				return err
			}
		}
	}
	return nil
}

func truncate(resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if len(body) < 2 {
		return errors.New("faultproxy: body too short to truncate")
	}
	body = body[:len(body)/2]
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}
