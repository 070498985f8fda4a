package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestConfigCheckNamesTheKey(t *testing.T) {
	bin := exportertest.Build(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("databases:\n  - name: orders\n    dsn_env: WFX_UNSET_FOR_TEST\n    tables:\n      outbox: {columns: {created_at: 'created at'}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--config.file", bad, "--config.check").CombinedOutput()
	if err == nil {
		t.Fatalf("invalid config accepted:\n%s", out)
	}
	for _, want := range []string{
		"databases[0] (line 2): dsn: environment variable WFX_UNSET_FOR_TEST is not set or empty",
		`databases[0].tables.outbox.columns.created_at (line 5): "created at" is not a column name`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	good := filepath.Join(dir, "good.yml")
	if err := os.WriteFile(good, []byte("databases: [{name: orders, dsn: 'postgres://127.0.0.1:1/x'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "--config.file", good, "--config.check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "configuration ok: 0 Camunda engine(s), 1 database(s)") {
		t.Fatalf("valid config rejected: %v\n%s", err, out)
	}
}

// TestConfigCheckRefusesWhatStartupRefuses: every config the exporter
// refuses at start-up, --config.check refuses too, with the same message,
// without connecting to anything.
func TestConfigCheckRefusesWhatStartupRefuses(t *testing.T) {
	bin := exportertest.Build(t)
	dir := t.TempDir()
	cases := []struct {
		name, doc, want string
	}{
		{"bad dsn", "databases: [{name: orders, dsn: 'postgres://127.0.0.1:notaport/x'}]\n",
			"databases[0]: database orders: the DSN cannot be parsed"},
		{"credentials in camunda url", "camunda: [{name: main, url: 'http://u:pw@127.0.0.1:1/engine-rest'}]\n",
			"camunda[0]: camunda: base URL must not contain credentials"},
		{"missing tls ca file", "camunda: [{name: main, url: 'https://127.0.0.1:1/engine-rest', tls: {ca_file: /nonexistent/ca.pem}}]\n",
			"camunda[0]: camunda: tls: reading CA file: open /nonexistent/ca.pem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yml")
			if err := os.WriteFile(f, []byte(tc.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, "--config.file", f, "--web.listen-address", "127.0.0.1:0").CombinedOutput()
			if code := exitCode(err); code != 1 || !strings.Contains(string(out), tc.want) {
				t.Fatalf("start-up: exit %d, want 1 and %q:\n%s", code, tc.want, out)
			}
			out, err = exec.CommandContext(ctx, bin, "--config.file", f, "--config.check").CombinedOutput()
			if code := exitCode(err); code != 1 || !strings.Contains(string(out), tc.want) {
				t.Errorf("--config.check: exit %d, want 1 and %q:\n%s", code, tc.want, out)
			}
		})
	}
}

// TestTelemetryPathIsValidated: a metrics path the HTTP mux cannot take (or
// that would hide the health endpoints) is refused at start-up with a message
// naming the flag, not a Go panic.
func TestTelemetryPathIsValidated(t *testing.T) {
	bin := exportertest.Build(t)
	cases := []struct {
		path string
		want string // "" means the exporter starts and serves metrics there
	}{
		{"metrics", `--web.telemetry-path "metrics": must start with /`},
		{"/", `--web.telemetry-path "/": must not be /`},
		{"/-/healthy", `--web.telemetry-path "/-/healthy": must not be /-/healthy`},
		{"/-/ready", `--web.telemetry-path "/-/ready": must not be /-/ready`},
		{"/metrics/{x", `--web.telemetry-path "/metrics/{x": must be a plain path`},
		{"/status", `--web.telemetry-path "/status": must not be /status (the status page`},
		{"/custom/metrics", ""},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			if tc.want == "" {
				x := exportertest.Start(t, exportertest.Options{Binary: bin, Flags: []string{"--web.telemetry-path=" + tc.path}})
				if body := get(t, x.URL+tc.path, 200); !strings.Contains(body, "workflow_exporter_build_info") {
					t.Errorf("no metrics at %s", tc.path)
				}
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, "--web.telemetry-path="+tc.path, "--web.listen-address", testkit.FreeAddr(t)).CombinedOutput()
			if code := exitCode(err); code != 1 || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "goroutine ") {
				t.Fatalf("exit %d, want 1 and %q without a stack trace:\n%s", code, tc.want, out)
			}
		})
	}
}

// exitCode is the exit status of a finished command, -1 if it did not run
// to an exit.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// TestServesRealDatabase starts the binary against a real database and
// scrapes it like Prometheus does.
func TestServesRealDatabase(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql")
	pgtest.Exec(t, conn, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
		VALUES (gen_random_uuid(), 'Order', 'o1', 'OrderCreated', 'k', '{}', 'PENDING', now() - interval '90 seconds')`)
	// The DSN carries a password the server ignores (trust auth): it must
	// never show up in a log line.
	secretDSN := strings.Replace(dsn, "postgres@", "postgres:hunter2-secret@", 1)
	x := exportertest.Start(t, exportertest.Options{Config: `
camunda:
  - name: nowhere
    url: http://127.0.0.1:1/engine-rest
    username: exporter
    password_env: WFX_TEST_CAMUNDA_PW
databases:
  - name: orders
    dsn_env: WFX_TEST_DSN
`, Flags: []string{"--log.level", "debug"}, Env: []string{"WFX_TEST_DSN=" + secretDSN, "WFX_TEST_CAMUNDA_PW=camunda-secret-pw"}})
	base := x.URL

	body := get(t, base+"/metrics", 200)
	for _, want := range []string{
		`workflow_outbox_events_pending{aggregate_type="Order",database="orders",event_type="OrderCreated"} 1`,
		`workflow_exporter_source_up{name="orders",source="database"} 1`,
		`workflow_exporter_source_up{name="nowhere",source="camunda"} 0`,
		`camunda_up{engine="nowhere"} 0`,
		`workflow_exporter_collector_up{collector="outbox",name="orders",source="database"} 1`,
		`workflow_exporter_build_info{`,
		"go_goroutines",
		"process_cpu_seconds_total",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !strings.Contains(body, `workflow_outbox_oldest_pending_age_seconds{aggregate_type="Order",database="orders",event_type="OrderCreated"} 9`) {
		t.Errorf("oldest pending age is not ~90s by the database clock:\n%s", grep(body, "oldest_pending"))
	}
	get(t, base+"/-/ready", 200)
	landing := get(t, base+"/", 200)
	if !strings.Contains(landing, "/metrics") || !strings.Contains(landing, `href="/status"`) {
		t.Errorf("landing page does not link the metrics and the status page:\n%s", landing)
	}
	// The status page, from the same snapshots: the database up with its
	// pending event named, the engine down with the class of its failure
	// and nothing listed from it; no credential anywhere.
	var rep struct {
		SchemaVersion int `json:"schema_version"`
		Sources       []struct {
			Kind, Name, State string
			Failures          []struct{ Collector, Class string }
		}
		Lists []struct {
			Kind   string
			Source struct{ Kind, Name string }
			Total  int
			Items  []struct {
				EventID   string `json:"event_id"`
				EventType string `json:"event_type"`
			}
		}
	}
	statusJSON := get(t, base+"/status.json", 200)
	if err := json.Unmarshal([]byte(statusJSON), &rep); err != nil {
		t.Fatalf("%v\n%s", err, statusJSON)
	}
	states := map[string]string{}
	for _, s := range rep.Sources {
		states[s.Kind+"/"+s.Name] = s.State
		if s.Name == "nowhere" && (len(s.Failures) != 1 || s.Failures[0].Class != "unreachable") {
			t.Errorf("engine failures %+v, want one of class %q", s.Failures, "unreachable")
		}
	}
	if rep.SchemaVersion != 1 || states["database/orders"] != "up" || states["camunda/nowhere"] != "down" {
		t.Errorf("schema %d, source states %v", rep.SchemaVersion, states)
	}
	pending := 0
	for _, l := range rep.Lists {
		if l.Source.Name == "nowhere" {
			t.Errorf("a list from the engine that is down: %+v", l)
		}
		if l.Kind == "outbox_pending" {
			pending++
			if l.Total != 1 || len(l.Items) != 1 || l.Items[0].EventType != "OrderCreated" || len(l.Items[0].EventID) != 36 {
				t.Errorf("outbox_pending list %+v", l)
			}
		}
	}
	if pending != 1 {
		t.Errorf("%d outbox_pending lists:\n%s", pending, statusJSON)
	}
	page := get(t, base+"/status", 200)
	for _, body := range []string{statusJSON, page} {
		for _, secret := range []string{"hunter2-secret", "camunda-secret-pw", "127.0.0.1"} {
			if strings.Contains(body, secret) {
				t.Errorf("the status page shows %q", secret)
			}
		}
	}

	if err := x.Stop(); err != nil {
		t.Errorf("stopping the exporter: %v", err)
	}
	out := x.Log.String()
	for _, secret := range []string{"hunter2-secret", "camunda-secret-pw"} {
		if strings.Contains(out, secret) {
			t.Errorf("a credential appears in the logs:\n%s", out)
		}
	}
	if !strings.Contains(out, "series are dropped") || !strings.Contains(out, "kind=camunda name=nowhere") {
		t.Errorf("unreachable engine not logged:\n%s", out)
	}
}

func TestCheckCommandAgainstRealDatabase(t *testing.T) {
	bin := exportertest.Build(t)
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgFile, []byte("databases: [{name: orders, dsn_env: WFX_TEST_DSN}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file", cfgFile, "check")
	cmd.Env = append(os.Environ(), "WFX_TEST_DSN="+dsn)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("check passed on an empty database:\n%s", out)
	}
	if !strings.Contains(string(out), "outbox: table event_outbox\n    ERROR table does not exist") || !strings.Contains(string(out), "4 error(s)") {
		t.Fatalf("unexpected report:\n%s", out)
	}
}

func get(t *testing.T, url string, status int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d\n%s", url, resp.StatusCode, status, b)
	}
	return string(b)
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return fmt.Sprint(out)
}

// TestStatusPageCanBeDisabled: with --web.disable-status nothing serves the
// page, the landing page does not link it, and its path is free.
func TestStatusPageCanBeDisabled(t *testing.T) {
	base := exportertest.Start(t, exportertest.Options{Flags: []string{"--web.disable-status", "--web.telemetry-path=/status"}}).URL
	if body := get(t, base+"/status", 200); !strings.Contains(body, "workflow_exporter_build_info") {
		t.Errorf("/status does not serve the metrics it was given")
	}
	get(t, base+"/status.json", 404)
	if landing := get(t, base+"/", 200); strings.Contains(landing, "status.json") {
		t.Errorf("the landing page links the disabled status page:\n%s", landing)
	}
}
