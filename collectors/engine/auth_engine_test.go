//go:build !pgonly

package engine_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The engines of TestCamundaEngine run with basic auth on /engine-rest as
// this user.
const (
	engineUser     = "exporter"
	enginePassword = "Rt7-s3cret-pw"
	wrongPassword  = "Wr0ng-s3cret-pw"
)

// credentialsConfig writes the password to a file and returns the config
// lines that make the exporter use it (passwords never live in the config).
func credentialsConfig(t *testing.T, password string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "camunda-password")
	if err := os.WriteFile(file, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "    username: " + engineUser + "\n    password_file: " + file + "\n"
}

// engineBasicAuth runs the exporter against an engine with basic auth on
// /engine-rest: the right credentials give camunda_up 1 and data; a wrong
// password gives camunda_up 0, no data series, and a log line saying the
// engine refused the credentials (HTTP 401, naming the endpoint); no log
// line (debug level included) carries a password or the Authorization
// header. It must run last on its engine: after a wrong password the engine
// refuses the right one too for a few seconds (login throttling).
func engineBasicAuth(t *testing.T, e *camundatest.Engine) {
	ctx := t.Context()
	key := camundatest.UniqueName(t.Name())
	topic := key + ".topic"
	c := e.Client()
	startTasks(t, ctx, c, key, topic, 1)
	secrets := []string{enginePassword, wrongPassword,
		base64.StdEncoding.EncodeToString([]byte(engineUser + ":" + enginePassword)),
		base64.StdEncoding.EncodeToString([]byte(engineUser + ":" + wrongPassword))}
	noSecrets := func(x *camExporter) {
		t.Helper()
		logs := x.logs.String()
		for _, s := range secrets {
			if strings.Contains(logs, s) {
				t.Errorf("a credential (%q) appears in the log:\n%s", s, logs)
			}
		}
	}

	good := newCamundaExporter(t, camundaConfig(e.BaseURL, topic, credentialsConfig(t, enginePassword)))
	good.collect()
	if v, ok := good.get(catalog.CamundaUp, nil); !ok || v != 1 {
		t.Fatalf("right credentials: camunda_up = %v (present %v), want 1; log:\n%s", v, ok, good.logs)
	}
	if _, ok := good.get(catalog.CamundaEngineInfo, map[string]string{"version": e.Version}); !ok {
		t.Errorf("right credentials: no camunda_engine_info for %s", e.Version)
	}
	if v := good.must(catalog.CamundaExternalTasks, map[string]string{"topic": topic, "state": vocab.StateWaiting}); v != 1 {
		t.Errorf("right credentials: waiting = %v, want 1", v)
	}
	noSecrets(good)

	// Without credentials: 401, and the message says none are configured.
	none := newCamundaExporter(t, camundaConfig(e.BaseURL, topic, ""))
	none.collect()
	if v, _ := none.get(catalog.CamundaUp, nil); v != 0 || !strings.Contains(none.logs.String(), "no credentials are configured") {
		t.Errorf("no credentials: camunda_up %v; log:\n%s", v, none.logs)
	}

	bad := newCamundaExporter(t, camundaConfig(e.BaseURL, topic, credentialsConfig(t, wrongPassword)))
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
	if _, ok := bad.views.Get("e1"); ok {
		t.Error("wrong credentials: an in-flight view was published")
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
}

func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
