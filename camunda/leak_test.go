package camunda

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// No error string and no log line may contain the username, the password or
// the basic-auth token, whatever goes wrong.
func TestCredentialsNeverLeak(t *testing.T) {
	const (
		user = "exporter-user-7f3a"
		pass = "pa55-W0rd+secret/9"
	)
	token := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))

	f := newFakeEngine(t)
	f.handle("/version", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="default"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	// An engine (or proxy) that echoes the password back in its message.
	f.handle("/incident/count", jsonStatus(403, []byte(`{"type":"AuthorizationException","message":"bad password `+pass+` for user"}`)))
	f.handle("/job/count", jsonStatus(503, []byte(`{"message":"busy"}`)))
	f.handle("/external-task/count", func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	f.fixture(t, "/external-task/topic-names", "topic_names.json")

	logger, logs := newCapturingLogger()
	c := newTestClient(t, f.url(), func(cfg *Config) {
		cfg.Username, cfg.Password = user, pass
		cfg.Logger = logger
		cfg.Retry = fastRetry(2)
		cfg.Timeout = 100 * time.Millisecond
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	ln.Close()
	dead := newTestClient(t, "http://"+deadAddr+"/engine-rest", func(cfg *Config) {
		cfg.Username, cfg.Password = user, pass
		cfg.Logger = logger
		cfg.Retry = fastRetry(1)
	})

	ctx := ctxT(t)
	var errs []error
	collect := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	_, err = c.Version(ctx)
	collect(err)
	_, err = c.CountIncidents(ctx, IncidentQuery{})
	collect(err)
	_, err = c.CountJobs(ctx, JobQuery{})
	collect(err)
	_, err = c.CountExternalTasks(ctx, ExternalTaskQuery{})
	collect(err)
	_, err = c.TopicNames(ctx, true, false, false) // a success, logged at debug
	collect(err)
	_, err = dead.Version(ctx)
	collect(err)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Version(cancelled)
	collect(err)
	_, err = New(Config{BaseURL: "http://" + user + ":" + pass + "@localhost/engine-rest"})
	collect(err)

	if len(errs) != 7 {
		t.Fatalf("expected 7 failures, got %d: %v", len(errs), errs)
	}
	if logs.String() == "" {
		t.Fatal("nothing was logged; the test would prove nothing")
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Error("no retry was logged")
	}
	for _, secret := range []string{user, pass, token, "Basic "} {
		for _, err := range errs {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error contains %q: %v", secret, err)
			}
		}
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs.String())
		}
	}
	if !strings.Contains(errs[1].Error(), "bad password *** for user") {
		t.Errorf("echoed password not scrubbed: %v", errs[1])
	}
}

// A password echoed in an error body is scrubbed before the message is
// collapsed to one line and cut to maxErrorMessage bytes: a password with
// repeated whitespace, or one straddling the cut, must not survive in part.
// Both paths that read error bodies are checked: requests (attempt) and
// GET /version (VersionAt).
func TestEchoedPasswordScrubbedBeforeCollapsing(t *testing.T) {
	const pass = "Zq9vX  k3\tpR7  w" // two spaces, a tab
	collapsed := strings.Join(strings.Fields(pass), " ")
	straddle := strings.Repeat("x", maxErrorMessage-6) + " " + pass + " tail" // the cut falls inside the password
	bodies := []struct {
		name, contentType, body string
	}{
		{"json message", "application/json", `{"type":"AuthorizationException","message":"bad password ` + strings.ReplaceAll(pass, "\t", `\t`) + ` for user"}`},
		{"proxy text", "text/html", "<html><body>bad password\n" + pass + "\nfor user</body></html>"},
		{"json message straddling the cut", "application/json", `{"type":"X","message":"` + strings.ReplaceAll(straddle, "\t", `\t`) + `"}`},
		{"proxy text straddling the cut", "text/plain", straddle},
	}
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			f := newFakeEngine(t)
			h := func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", b.contentType)
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(b.body))
			}
			f.handle("/incident/count", h)
			f.handle("/version", h)
			c := newTestClient(t, f.url(), func(cfg *Config) {
				cfg.Username, cfg.Password = "u", pass
				cfg.Retry = fastRetry(0)
			})
			_, err1 := c.CountIncidents(ctxT(t), IncidentQuery{})
			_, _, err2 := c.VersionAt(ctxT(t))
			for _, err := range []error{err1, err2} {
				if err == nil {
					t.Fatal("no error for a 403")
				}
				msg := err.Error()
				for _, part := range []string{pass, collapsed, "Zq9v"} {
					if strings.Contains(msg, part) {
						t.Errorf("error contains %q: %s", part, msg)
					}
				}
				if !strings.Contains(msg, "***") {
					t.Errorf("no scrubbed password in the message: %s", msg)
				}
			}
		})
	}
}
