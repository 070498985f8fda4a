package sources

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// transportConfig: a database without sslmode (libpq's default prefer), one
// that verifies, one on loopback without TLS, an engine over plain HTTP with
// a user, one over HTTPS, one on loopback, and an engine whose own database
// requires TLS without verifying.
const transportConfig = `
camunda:
  - {name: main, url: 'http://camunda.example:8080/engine-rest', username: exporter, password_env: WFX_TEST_CAMUNDA_PW}
  - {name: secure, url: 'https://camunda.example/engine-rest'}
  - {name: sidecar, url: 'http://127.0.0.1:8080/engine-rest'}
  - name: dbmode
    url: 'https://camunda.example/engine-rest'
    database: {dsn: 'host=camunda-db.example dbname=camunda sslmode=require', time_zone: UTC}
databases:
  - {name: orders, dsn: 'postgres://u@orders-db.example/orders', tables: {outbox: {}}%s}
  - {name: billing, dsn: 'postgres://u@billing-db.example/billing?sslmode=verify-full', tables: {inbox: {}}}
  - {name: local, dsn: 'postgres://u@127.0.0.1:1/local?sslmode=disable', tables: {inbox: {}}}
`

// TestTransportWarnings: start-up warns once about each source that does not
// verify its server (a DSN's sslmode, an engine's plain HTTP), naming the
// source, the key, the sslmode and the fix; a reload that keeps the source
// does not warn again, one that rebuilds it does; a source that verifies,
// or reaches its server on the host only, is not warned about.
func TestTransportWarnings(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	t.Setenv("WFX_TEST_CAMUNDA_PW", "secret")
	ctx := context.Background()
	var log testkit.LogBuffer
	m := New(Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	defer m.Close(ctx)
	if _, err := m.Apply(ctx, parse(t, strings.Replace(transportConfig, "%s", "", 1))); err != nil {
		t.Fatal(err)
	}
	warnings := func() []string {
		var out []string
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.Contains(l, "level=WARN") {
				out = append(out, l)
			}
		}
		return out
	}
	got := warnings()
	want := []*regexp.Regexp{
		regexp.MustCompile(`database orders: the DSN \(databases\[0\]\.dsn\) connects with sslmode=prefer \(not set: libpq's default\), which does not verify the server.*set sslmode=verify-full.* sslmode=prefer`),
		regexp.MustCompile(`engine main: the URL \(camunda\[0\]\.url\) is plain HTTP.*the password of user \\"exporter\\".*use https://`),
		regexp.MustCompile(`engine database dbmode: the DSN \(camunda\[3\]\.database\.dsn\) connects with sslmode=require, .*set sslmode=verify-full`),
	}
	if len(got) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, re := range want {
		n := 0
		for _, l := range got {
			if re.MatchString(l) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d warnings match %s, want 1:\n%s", n, re, strings.Join(got, "\n"))
		}
	}
	// A reload that keeps every source says nothing again; one that
	// rebuilds orders warns about orders once more.
	if _, err := m.Apply(ctx, parse(t, strings.Replace(transportConfig, "%s", "", 1))); err != nil {
		t.Fatal(err)
	}
	if n := len(warnings()); n != len(want) {
		t.Errorf("a reload that kept the sources warned again: %d warnings", n)
	}
	if _, err := m.Apply(ctx, parse(t, strings.Replace(transportConfig, "%s", ", min_interval: 1m", 1))); err != nil {
		t.Fatal(err)
	}
	if after := warnings(); len(after) != len(want)+1 || !want[0].MatchString(after[len(after)-1]) {
		t.Errorf("rebuilding orders: warnings\n%s", strings.Join(after, "\n"))
	}
}

// TestCheckWarnsAboutTransport: the check command prints the same warnings,
// one line per source, and counts them, although the sources cannot be
// reached.
func TestCheckWarnsAboutTransport(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	t.Setenv("WFX_TEST_CAMUNDA_PW", "secret")
	cfg := parse(t, `
camunda:
  - {name: main, url: 'http://camunda.invalid:8080/engine-rest', username: exporter, password_env: WFX_TEST_CAMUNDA_PW, request_timeout: 1s}
databases:
  - {name: orders, dsn: 'postgres://u@orders.invalid/orders?connect_timeout=1&sslmode=require', tables: {outbox: {}}}
  - {name: billing, dsn: 'postgres://u@billing.invalid/billing?connect_timeout=1&sslmode=verify-full', tables: {inbox: {}}}
`)
	var out strings.Builder
	rep := RunCheck(context.Background(), cfg, &out, slog.New(slog.DiscardHandler))
	text := out.String()
	for _, want := range []string{
		"camunda main: WARNING engine main: the URL (camunda[0].url) is plain HTTP",
		"database orders: WARNING database orders: the DSN (databases[0].dsn) connects with sslmode=require, which does not verify the server",
		"set sslmode=verify-full",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("check output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "database billing: WARNING") || rep.Warnings < 2 {
		t.Errorf("%d warnings; billing verifies its server and must not be warned about:\n%s", rep.Warnings, text)
	}
}
