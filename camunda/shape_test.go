package camunda

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWrongShapeIsAnError: a 2xx answer that decodes without a JSON error
// into zero values would read as "nothing there" (a count of 0, an empty
// list): every such shape is a failure that names the endpoint, never a
// value.
func TestWrongShapeIsAnError(t *testing.T) {
	cases := []struct {
		name, path, body string
		call             func(c *Client) error
	}{
		{"count without count", "/external-task/count", `{"total": 3}`, func(c *Client) error {
			_, err := c.CountExternalTasks(ctxT(t), ExternalTaskQuery{})
			return err
		}},
		{"count null", "/incident/count", `{"count": null}`, func(c *Client) error {
			_, err := c.CountIncidents(ctxT(t), IncidentQuery{})
			return err
		}},
		{"negative count", "/job/count", `{"count": -4}`, func(c *Client) error {
			_, err := c.CountJobs(ctxT(t), JobQuery{})
			return err
		}},
		{"count as an array", "/external-task/count", `[{"count": 1}]`, func(c *Client) error {
			_, err := c.CountExternalTasks(ctxT(t), ExternalTaskQuery{})
			return err
		}},
		{"list null", "/external-task", `null`, func(c *Client) error {
			_, err := c.ListExternalTasks(ctxT(t), ExternalTaskQuery{}, Page{})
			return err
		}},
		{"list as an object", "/incident", `{"items": []}`, func(c *Client) error {
			_, err := c.ListIncidents(ctxT(t), IncidentQuery{}, Page{})
			return err
		}},
		{"task without id", "/external-task", `[{"topicName": "a"}]`, func(c *Client) error {
			_, err := c.ListExternalTasks(ctxT(t), ExternalTaskQuery{}, Page{})
			return err
		}},
		{"history entry without timestamp", "/history/external-task-log", `[{"id": "1", "topicName": "a"}]`, func(c *Client) error {
			_, err := c.ListExternalTaskLog(ctxT(t), HistoryLogQuery{}, Page{})
			return err
		}},
		{"topic names null", "/external-task/topic-names", ` null `, func(c *Client) error {
			_, err := c.TopicNames(ctxT(t), false, false, false)
			return err
		}},
		{"version without version", "/version", `{"name": "7.24.0"}`, func(c *Client) error {
			_, _, err := c.VersionAt(ctxT(t))
			return err
		}},
		{"truncated", "/job", `[{"id": "j1", "retr`, func(c *Client) error {
			_, err := c.ListJobs(ctxT(t), JobQuery{}, Page{})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEngine(t)
			f.handle(tc.path, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			})
			err := tc.call(newTestClient(t, f.url(), nil))
			if err == nil {
				t.Fatalf("%s answering %s: no error", tc.path, tc.body)
			}
			ae, ok := err.(*APIError) //nolint:errorlint // the client returns the APIError itself, unwrapped: part of what is checked
			if !ok || !strings.Contains(err.Error(), tc.path) || ae.FailureClass() != "unexpected response from GET "+tc.path {
				t.Fatalf("err = %v (class %q), want an APIError naming %s, class unexpected response", err, classOf(err), tc.path)
			}
		})
	}
}

func classOf(err error) string {
	if ae, ok := err.(*APIError); ok { //nolint:errorlint // as above
		return ae.FailureClass()
	}
	return ""
}

// TestFailureClasses: the class a poll logs a failure by names the kind of
// failure and the endpoint where that matters, never an address, a port or
// the engine's message.
func TestFailureClasses(t *testing.T) {
	f := newFakeEngine(t)
	f.handle("/incident/count", jsonStatus(500, []byte(`{"type":"ProcessEngineException","message":"boom at 12:00:01"}`)))
	f.handle("/version", jsonStatus(401, nil))
	f.handle("/job/count", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := newTestClient(t, f.url(), func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := newTestClient(t, "http://"+ln.Addr().String()+"/engine-rest", nil)
	ln.Close()

	_, err500 := c.CountIncidents(ctxT(t), IncidentQuery{})
	_, err401 := c.Version(ctxT(t))
	_, errSlow := c.CountJobs(ctxT(t), JobQuery{})
	_, errRefused := dead.CountJobs(ctxT(t), JobQuery{})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{err500, "HTTP 500 from GET /incident/count"},
		{err401, "HTTP 401 from GET /version"},
		{errSlow, "request timeout"},
		{errRefused, "unreachable"},
	} {
		if got := classOf(tc.err); got != tc.want {
			t.Errorf("%v: class %q, want %q", tc.err, got, tc.want)
		}
	}
}
