package collectors

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/camundatest"
)

// TestCamundaBasicAuth runs the exporter against an engine with basic auth
// on /engine-rest: the right credentials give camunda_up 1 and data; wrong
// ones give camunda_up 0, no data series, and a log line saying the engine
// refused the credentials (HTTP 401); no log line (debug level included)
// carries a password or the Authorization header.
func TestCamundaBasicAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM per flavor")
	}
	t.Parallel()
	const user, password, wrong = "exporter", "Rt7-s3cret-pw", "Wr0ng-s3cret-pw"
	for _, flavor := range camundatest.Flavors() {
		t.Run(string(flavor), func(t *testing.T) {
			t.Parallel()
			e := startCamundaEngine(t, camundatest.Options{Flavor: flavor, Username: user, Password: password})
			ctx := t.Context()
			key := camundatest.UniqueName(t.Name())
			topic := key + ".topic"
			c := e.Client()
			if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": camundatest.ExternalTaskProcess(key, topic)}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.StartProcess(ctx, key, "", nil); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			exporterWith := func(pw string) *camExporter {
				t.Helper()
				file := filepath.Join(dir, "pw-"+pw)
				if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				return newCamundaExporter(t, camundaConfig(e.BaseURL, topic,
					"    username: "+user+"\n    password_file: "+file+"\n"))
			}
			secrets := []string{password, wrong,
				base64.StdEncoding.EncodeToString([]byte(user + ":" + password)),
				base64.StdEncoding.EncodeToString([]byte(user + ":" + wrong))}
			noSecrets := func(x *camExporter) {
				t.Helper()
				logs := x.logs.String()
				for _, s := range secrets {
					if strings.Contains(logs, s) {
						t.Errorf("a credential (%q) appears in the log:\n%s", s, logs)
					}
				}
			}

			// Right credentials first: a wrong password makes the engine
			// refuse even the right one for a while (login throttling).
			good := exporterWith(password)
			good.collect()
			if v, ok := good.get(catalog.CamundaUp, nil); !ok || v != 1 {
				t.Fatalf("right credentials: camunda_up = %v (present %v), want 1; log:\n%s", v, ok, good.logs)
			}
			if _, ok := good.get(catalog.CamundaEngineInfo, map[string]string{"version": e.Version}); !ok {
				t.Errorf("right credentials: no camunda_engine_info for %s", e.Version)
			}
			if v := good.must(catalog.CamundaExternalTasks, map[string]string{"topic": topic, "state": stateWaiting}); v != 1 {
				t.Errorf("right credentials: waiting = %v, want 1", v)
			}
			noSecrets(good)

			bad := exporterWith(wrong)
			start := time.Now()
			bad.collect()
			if v, ok := bad.get(catalog.CamundaUp, nil); !ok || v != 0 {
				t.Fatalf("wrong credentials: camunda_up = %v (present %v), want 0", v, ok)
			}
			for _, name := range []string{catalog.CamundaEngineInfo, catalog.CamundaExternalTasks, catalog.CamundaIncidents,
				catalog.CamundaExternalTaskCompletions, catalog.CamundaJobsRetriesExhausted} {
				if s := bad.samples(name); len(s) != 0 {
					t.Errorf("wrong credentials: %s present: %v", name, s)
				}
			}
			logs := bad.logs.String()
			if !strings.Contains(logs, "HTTP 401") || !strings.Contains(logs, "refused the configured credentials") || !strings.Contains(logs, "GET /version") {
				t.Errorf("wrong credentials: the log does not say the engine refused them (401, endpoint):\n%s", logs)
			}
			if strings.Count(logs, "HTTP 401") > 2 {
				t.Errorf("the exporter retried a 401 (the engine throttles logins):\n%s", logs)
			}
			t.Logf("wrong credentials reported in %s: %s", time.Since(start).Round(time.Millisecond), firstLine(logs, "401"))
			noSecrets(bad)
		})
	}
}

func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
