package faultproxy

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// backend is the server behind the proxy: it answers every path with a
// JSON body naming it, and says whether it saw an Authorization header.
func backend(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, auth := r.Header["Authorization"]
		_, _ = io.WriteString(w, `{"path":"`+r.URL.Path+`","auth":`+map[bool]string{true: "true", false: "false"}[auth]+`}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestFaults(t *testing.T) {
	p := Start(t, backend(t).URL+"/engine-rest", Options{})
	c := &http.Client{Timeout: time.Second}
	for _, tc := range []struct {
		name   string
		fault  Fault
		path   string
		status int    // -1: no HTTP answer
		body   string // a substring of the body, or of the error
	}{
		{"forwarded", Fault{}, "/version", 200, `"path":"/engine-rest/version"`},
		{"status", Fault{Kind: Status, Status: 500}, "/version", 500, "injected HTTP 500"},
		{"status with a body", Fault{Kind: Status, Status: 500, Body: `{"type":"X"}`}, "/version", 500, `{"type":"X"}`},
		{"status on another endpoint", Fault{Kind: Status, Status: 500, Endpoint: "/incident"}, "/version", 200, `"path"`},
		{"body", Fault{Kind: Body, Body: `{"total":3}`}, "/version", 200, `{"total":3}`},
		{"truncated", Fault{Kind: Truncate}, "/version", 200, `{"path":"/engine-`},
		{"slow, within the client's patience", Fault{Kind: Slow, Delay: 50 * time.Millisecond}, "/version", 200, `"path"`},
		{"slow, past it", Fault{Kind: Slow, Delay: time.Minute}, "/version", -1, "Client.Timeout"},
		{"hang", Fault{Kind: Hang}, "/version", -1, "Client.Timeout"},
		{"reset", Fault{Kind: Reset}, "/version", -1, "reset"},
		{"refused", Fault{Kind: Refuse}, "/version", -1, "connection refused"},
		{"cleared after a refusal", Fault{}, "/version", 200, `"path"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.Set(tc.fault); err != nil {
				t.Fatal(err)
			}
			status, body := testkit.Get(c, p.URL+tc.path, "", "")
			if status != tc.status || !strings.Contains(body, tc.body) {
				t.Errorf("GET %s: %d %q, want %d with %q", tc.path, status, body, tc.status, tc.body)
			}
			if tc.fault.Kind == Truncate && strings.HasSuffix(body, "}") {
				t.Errorf("truncated body %q is whole", body)
			}
		})
	}
}

func TestAuthAndTLS(t *testing.T) {
	p := Start(t, backend(t).URL+"/engine-rest", Options{TLS: true, Username: "exporter", Password: "pw-123456"})
	pem, err := os.ReadFile(p.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, tc := range []struct {
		name, user, password string
		fault                Fault
		status               int
		body                 string
	}{
		{"right credentials, forwarded without them", "exporter", "pw-123456", Fault{}, 200, `"auth":false`},
		{"wrong password", "exporter", "nope", Fault{}, 401, "missing or wrong credentials"},
		{"no credentials", "", "", Fault{}, 401, "missing or wrong credentials"},
		{"a status fault echoes the password", "exporter", "pw-123456", Fault{Kind: Status, Status: 502}, 502, "pw-123456"},
		{"a certificate of another CA", "exporter", "pw-123456", Fault{Kind: BadCertificate}, -1, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.Set(tc.fault); err != nil {
				t.Fatal(err)
			}
			status, body := testkit.Get(c, p.URL+"/version", tc.user, tc.password)
			if status != tc.status || !strings.Contains(body, tc.body) {
				t.Errorf("%d %q, want %d with %q", status, body, tc.status, tc.body)
			}
		})
	}
	if n := p.AuthFailures(); n != 2 {
		t.Errorf("AuthFailures = %d, want 2", n)
	}
}

// TestHooks: a request hook answers in place of the server, a response hook
// changes the server's answer, and both see the endpoint.
func TestHooks(t *testing.T) {
	p := Start(t, backend(t).URL+"/engine-rest", Options{})
	p.Use(Hook{Request: func(w http.ResponseWriter, r *http.Request, endpoint string) bool {
		if endpoint == "/job/count" {
			http.NotFound(w, r)
			return true
		}
		return false
	}})
	p.Use(Hook{Response: func(resp *http.Response, endpoint string) error {
		resp.Header.Set("X-Endpoint", endpoint)
		return nil
	}})
	c := &http.Client{Timeout: 2 * time.Second}
	if status, body := testkit.Get(c, p.URL+"/job/count", "", ""); status != 404 || strings.Contains(body, "path") {
		t.Errorf("GET /job/count: %d %q, want the hook's 404", status, body)
	}
	resp, err := c.Get(p.URL + "/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Endpoint"); got != "/version" {
		t.Errorf("X-Endpoint = %q, want the response hook's /version", got)
	}
	if got := p.Counts(); got["/job/count"] != 1 || got["/version"] != 1 || len(got) != 2 {
		t.Errorf("counts %v, want one of each (requests a hook answered count too)", got)
	}
	if got := p.Counts(); len(got) != 0 {
		t.Errorf("Counts did not reset: %v", got)
	}
}

// TestTCP: forwarded, reset (accepted and closed), refused, and forwarded
// again; a fault cuts the connections that are open.
func TestTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // an echo server
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	p := StartTCP(t, ln.Addr().String())
	echo := func() (net.Conn, error) {
		c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
		if err != nil {
			return nil, err
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			c.Close()
			return nil, err
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping" {
			c.Close()
			return nil, io.ErrUnexpectedEOF
		}
		return c, nil
	}
	open, err := echo()
	if err != nil {
		t.Fatalf("forwarding: %v", err)
	}
	defer open.Close()
	for _, tc := range []struct {
		kind Kind
		ok   bool
	}{{Reset, false}, {Refuse, false}, {None, true}, {Refuse, false}, {None, true}} {
		if err := p.Set(tc.kind); err != nil {
			t.Fatal(err)
		}
		c, err := echo()
		if (err == nil) != tc.ok {
			t.Errorf("after Set(%q): echo error %v, want ok %v", tc.kind, err, tc.ok)
		}
		if c != nil {
			c.Close()
		}
	}
	if _, err := open.Read(make([]byte, 1)); err == nil {
		t.Error("a connection open before the fault was not cut")
	}
	if err := p.Set(Slow); err == nil {
		t.Error("Set accepted an HTTP fault")
	}
}
