package camundatest_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestBasicAuthAndTimeZone starts a second engine per flavor with basic auth on /engine-rest and
// a JVM time zone west of UTC, and stops it at the end, checking the JVM is gone.
func TestBasicAuthAndTimeZone(t *testing.T) {
	testkit.SkipIfShort(t, "a JVM")
	for _, flavor := range camundatest.Flavors() {
		t.Run(string(flavor), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			e, err := camundatest.Start(ctx, camundatest.Options{
				Flavor: flavor, Username: "exporter", Password: "s3cret-pw", TimeZone: "America/New_York",
				ExtraArgs: []string{"--" + flavor.PropertyPrefix() + ".generic-properties.properties.query-max-results-limit=50"},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s engine with basic auth started in %s", flavor, e.StartupTime.Round(100*time.Millisecond))
			stopped := false
			defer func() {
				if !stopped {
					e.Stop()
				}
			}()
			c := e.Client()
			status := func(user, pw, ep string) int {
				t.Helper()
				resp, err := c.WithCredentials(user, pw).Raw(ctx, http.MethodGet, ep, nil, "")
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
					t.Errorf("401 without a Basic challenge: %v", resp.Header)
				}
				return resp.Status
			}
			for _, ep := range []string{"/version", "/external-task/count", "/incident/count", "/history/external-task-log/count"} {
				if got := status("exporter", "s3cret-pw", ep); got != 200 {
					t.Errorf("GET %s with the right credentials: HTTP %d, want 200", ep, got)
				}
				if got := status("", "", ep); got != 401 {
					t.Errorf("GET %s without credentials: HTTP %d, want 401", ep, got)
				}
				if got := status("nobody", "s3cret-pw", ep); got != 401 {
					t.Errorf("GET %s as an unknown user: HTTP %d, want 401", ep, got)
				}
			}
			// GET /engine (the engine list) is not behind the filter: it answers without credentials.
			if got := status("", "", "/engine"); got != 200 {
				t.Errorf("GET /engine without credentials: HTTP %d, want 200 (the filter lets it through)", got)
			}
			// One wrong password throttles the real user: the engine's login delay
			// (loginDelayBase 3 s by default) makes even the right password fail for a while.
			if got := status("exporter", "wrong", "/version"); got != 401 {
				t.Errorf("GET /version with a wrong password: HTTP %d, want 401", got)
			}
			wrongAt := time.Now()
			if got := status("exporter", "s3cret-pw", "/version"); got != 401 && time.Since(wrongAt) < 2*time.Second {
				t.Errorf("right password right after a wrong one: HTTP %d, want 401 (login throttling)", got)
			}
			for status("exporter", "s3cret-pw", "/version") != 200 {
				if time.Since(wrongAt) > 30*time.Second {
					t.Fatalf("right password still refused %s after one wrong attempt", time.Since(wrongAt))
				}
				time.Sleep(250 * time.Millisecond)
			}
			t.Logf("after one wrong password the right one was refused for %s", time.Since(wrongAt).Round(100*time.Millisecond))
			var apiErr *engineclient.APIError
			if _, err := c.WithCredentials("nobody", "nope").Version(ctx); !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Endpoint != "/version" {
				t.Errorf("unknown user: %v, want an APIError naming /version and 401", err)
			}

			// Drive a task with credentials; dates come back in the JVM's offset (-0500 in winter, -0400 in summer).
			key := camundatest.UniqueName(t.Name())
			topic := key + ".t1"
			if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.StartProcess(ctx, key, "", nil); err != nil {
				t.Fatal(err)
			}
			tasks, err := engineclient.NewWorker(c, "w-auth").FetchAndLock(ctx, topic, time.Minute, 1)
			if err != nil || len(tasks) != 1 {
				t.Fatalf("fetchAndLock with auth: %d tasks, %v", len(tasks), err)
			}
			le := *tasks[0].LockExpirationTime
			if !strings.HasSuffix(le, "-0500") && !strings.HasSuffix(le, "-0400") {
				t.Errorf("lockExpirationTime %q does not carry the JVM's America/New_York offset", le)
			}
			if _, err := engineclient.ParseTime(le); err != nil {
				t.Errorf("ParseTime(%q): %v", le, err)
			}
			// queryMaxResultsLimit (set to 50 here; unlimited by default) applies to authenticated
			// users: a list without maxResults, or with more, is refused; counts are not limited.
			for _, c2 := range []struct {
				query string
				want  int
			}{
				{"/external-task", 400},
				{"/external-task?maxResults=51", 400},
				{"/external-task?maxResults=50", 200},
				{"/external-task/count", 200},
				{"/external-task/topic-names", 200},
			} {
				resp, err := c.Raw(ctx, http.MethodGet, c2.query, nil, "")
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("queryMaxResultsLimit=50, authenticated GET %s -> HTTP %d %s", c2.query, resp.Status, truncate(resp.Body, 200))
				if resp.Status != c2.want {
					t.Errorf("queryMaxResultsLimit=50, authenticated GET %s: HTTP %d, want %d; body %s", c2.query, resp.Status, c2.want, resp.Body)
				}
			}

			pid := e.PID
			e.Stop()
			stopped = true
			if !e.Exited() {
				t.Errorf("Stop returned but the JVM (pid %d) has not exited", pid)
			}
			if p, err := os.FindProcess(pid); err == nil && p.Signal(syscall.Signal(0)) == nil {
				t.Errorf("JVM pid %d still alive after Stop", pid)
			}
			if _, err := os.Stat(e.LogPath); !os.IsNotExist(err) {
				t.Errorf("engine log %s not removed by Stop: %v", e.LogPath, err)
			}
		})
	}
}
