package camundatest

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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// FaultKind is what a FaultProxy does instead of forwarding faithfully.
type FaultKind string

// The faults a FaultProxy can inject: the failures of an engine, or of what
// stands between it and its clients, that a real engine cannot be made to
// produce on demand.
const (
	// FaultNone forwards every request to the engine.
	FaultNone FaultKind = ""
	// FaultStatus answers Status with an engine-style JSON error body.
	FaultStatus FaultKind = "status"
	// FaultSlow waits Delay (or until the client gives up) before
	// forwarding.
	FaultSlow FaultKind = "slow"
	// FaultHang never answers: it waits until the client gives up.
	FaultHang FaultKind = "hang"
	// FaultTruncate forwards and cuts the engine's 2xx body in half, with a
	// Content-Length that matches the cut body: valid HTTP, broken JSON.
	FaultTruncate FaultKind = "truncate"
	// FaultBody answers 200 with Body (valid JSON of the wrong shape, say).
	FaultBody FaultKind = "body"
	// FaultReset closes the connection without an answer.
	FaultReset FaultKind = "reset"
	// FaultRefuse stops listening: connections are refused.
	FaultRefuse FaultKind = "refuse"
	// FaultBadCertificate presents a certificate from another CA (TLS
	// proxies only): clients trusting the proxy's CA refuse the handshake.
	FaultBadCertificate FaultKind = "bad-certificate"
)

// Fault is what the proxy injects and where.
type Fault struct {
	Kind FaultKind
	// Endpoint is the path below the REST root ("/incident/count") the
	// fault applies to; empty: every endpoint.
	Endpoint string
	Status   int
	Delay    time.Duration
	Body     string
}

// FaultProxyOptions configure a FaultProxy.
type FaultProxyOptions struct {
	// TLS serves HTTPS with a certificate of a throwaway CA (CAFile).
	TLS bool
	// Username and Password, when set, are required from clients as basic
	// auth (a request without them is answered 401 and counted in
	// AuthFailures) and removed before forwarding, so an engine without
	// authentication stands behind a proxy that has it.
	Username, Password string
}

var quiet = log.New(io.Discard, "", 0)

// FaultProxy is a reverse proxy in front of a real engine that injects one
// fault at a time and counts the requests that reach it per endpoint.
type FaultProxy struct {
	// URL is the REST root through the proxy (http(s)://127.0.0.1:port/engine-rest).
	URL string
	// CAFile is the PEM file of the CA that signed the proxy's certificate
	// (TLS proxies).
	CAFile string

	target *url.URL
	opts   FaultProxyOptions
	addr   string
	good   *testkit.Certificates
	bad    *testkit.Certificates
	srv    *http.Server
	rp     *httputil.ReverseProxy

	mu        sync.Mutex
	fault     Fault
	ln        net.Listener
	conns     map[net.Conn]bool
	counts    map[string]int
	authFails int
	closed    bool
	serving   sync.WaitGroup
}

// StartFaultProxy starts a proxy on a free 127.0.0.1 port in front of the
// engine REST root engineURL (http://host:port/engine-rest). It is stopped
// when the test ends.
func StartFaultProxy(t testing.TB, engineURL string, opts FaultProxyOptions) *FaultProxy {
	t.Helper()
	target, err := url.Parse(engineURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{target: target, opts: opts, conns: map[net.Conn]bool{}, counts: map[string]int{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
			r.Out.Header.Del("Authorization")
		},
		ModifyResponse: p.modify,
		ErrorLog:       quiet, // a client giving up (FaultSlow) is expected
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second,
		ConnState: p.connState, ErrorLog: quiet} // refused handshakes are expected
	p.srv.SetKeepAlivesEnabled(true)
	scheme := "http"
	if opts.TLS {
		p.good, p.bad = testkit.NewCertificates(t), testkit.NewCertificates(t)
		p.CAFile = p.good.CAFile
		scheme = "https"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.URL = scheme + "://" + p.addr + strings.TrimRight(target.Path, "/")
	p.serveOn(ln)
	t.Cleanup(p.Close)
	return p
}

// serveOn serves on a new listener (p.mu not held).
func (p *FaultProxy) serveOn(ln net.Listener) {
	if p.opts.TLS {
		ln = tls.NewListener(ln, &tls.Config{
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"http/1.1"}, // FaultReset hijacks connections
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				if p.current().Kind == FaultBadCertificate {
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

func (p *FaultProxy) connState(c net.Conn, st http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch st {
	case http.StateNew:
		p.conns[c] = true
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
	}
}

func (p *FaultProxy) current() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// Set injects f (FaultNone clears). Open connections are closed, so the
// next request of a client that keeps connections alive meets the new
// fault (a new TLS handshake, a refused connection). FaultRefuse closes the
// listener; any other fault listens again on the same address.
func (p *FaultProxy) Set(f Fault) error {
	p.mu.Lock()
	p.fault = f
	ln := p.ln
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	if f.Kind == FaultRefuse {
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
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.serveOn(ln)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("fault proxy: listening again on %s: %w", p.addr, err)
}

// Counts returns the requests per endpoint (the path below the REST root)
// since the last call, and resets them.
func (p *FaultProxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.counts
	p.counts = map[string]int{}
	return out
}

// AuthFailures is how many requests came without the configured basic
// auth.
func (p *FaultProxy) AuthFailures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.authFails
}

// Close stops the proxy and closes every connection.
func (p *FaultProxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.srv.Close()
	p.serving.Wait()
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimPrefix(r.URL.Path, strings.TrimRight(p.target.Path, "/"))
	p.mu.Lock()
	p.counts[endpoint]++
	f := p.fault
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
	if f.Endpoint != "" && f.Endpoint != endpoint {
		f = Fault{}
	}
	switch f.Kind {
	case FaultStatus:
		w.Header().Set("Content-Type", "application/json")
		if f.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="default"`)
		}
		w.WriteHeader(f.Status)
		// Like some gateways, it echoes what it was sent: the client must
		// scrub the password from what it logs.
		_, pw, _ := r.BasicAuth()
		_, _ = fmt.Fprintf(w, `{"type":"InjectedFault","message":"injected HTTP %d (the request carried the password %q)"}`, f.Status, pw)
		return
	case FaultBody:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
		_, _ = io.WriteString(w, f.Body)
		return
	case FaultSlow:
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	case FaultHang:
		<-r.Context().Done()
		return
	case FaultReset:
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.SetLinger(0) // RST, not FIN
				}
				_ = c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	p.rp.ServeHTTP(w, r)
}

// modify applies FaultTruncate to the engine's answer.
func (p *FaultProxy) modify(resp *http.Response) error {
	f := p.current()
	endpoint := strings.TrimPrefix(resp.Request.URL.Path, strings.TrimRight(p.target.Path, "/"))
	if f.Kind != FaultTruncate || (f.Endpoint != "" && f.Endpoint != endpoint) || resp.StatusCode/100 != 2 {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if len(body) < 2 {
		return errors.New("fault proxy: body too short to truncate")
	}
	body = body[:len(body)/2]
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}
