package dashboards

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
)

// zeroWhenUpExpr returns the expression built with zeroWhenUp of the panel
// with this title (a dashboard may also have a time series of that title),
// as committed, with the variables at "All".
func zeroWhenUpExpr(t *testing.T, uid, title string) string {
	t.Helper()
	qs := mustQueries(t)
	var found []string
	for _, q := range qs {
		if q.Dashboard == uid && q.Panel == title && strings.Contains(q.Expr, " or (0 * (min(") {
			found = append(found, q.Expr)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s/%q: %d queries, want 1", uid, title, len(found))
	}
	return Substitute(found[0], "1m")
}

// TestZeroWhenUpWithPromtool evaluates the stats built with zeroWhenUp in
// Prometheus's own engine (promtool test rules, promql_expr_test), with
// the promtool of each flavor (Debian's 2.42 and the current 3.x): 0 when
// nothing was seen and every source is up, the value when there is one, and
// no result ("No data") when a source that would report it is down.
func TestZeroWhenUpWithPromtool(t *testing.T) {
	flavors := promtest.Flavors(t)
	const l = `job="workflow-exporter", instance="e:7840"`
	up := func(metric, labels string, v int) string {
		return fmt.Sprintf("      - series: '%s{%s, %s}'\n        values: '%d'\n", metric, l, labels, v)
	}
	engineUp := func(engine, tasks int) string {
		return up("camunda_up", `engine="main"`, engine) +
			up("workflow_exporter_collector_up", `source="camunda", name="main", collector="camunda"`, tasks) +
			up("workflow_exporter_collector_up", `source="camunda", name="main", collector="camunda_jobs"`, 1)
	}
	joinUpWith := func(db, collectors, engine, tasks int) string {
		return up("workflow_exporter_source_up", `source="database", name="orders"`, db) +
			up("workflow_exporter_collector_up", `source="database", name="orders", collector="idempotency_camunda"`, collectors) +
			up("workflow_exporter_collector_up", `source="database", name="orders", collector="outbox"`, 1) +
			engineUp(engine, tasks)
	}
	joinUp := func(db, collectors, engine int) string { return joinUpWith(db, collectors, engine, 1) }
	inDoubt := up("workflow_idempotency_in_doubt", `database="orders", scope="S", engine="main", topic="t"`, 2)
	processedOpen := up("workflow_processed_job_task_open", `database="orders", engine="main", topic="t", activity_id="a"`, 1)
	incidents := up("camunda_incidents", `engine="main", incident_type="failedExternalTask", process_definition_key="p", activity_id="a"`, 3)

	cases := []struct {
		name, uid, panel, series string
		want                     string // "" = no result
	}{
		{"join: nothing matched, all up", UIDIdempotency, "In doubt", joinUp(1, 1, 1), "0"},
		{"join: a record in doubt", UIDIdempotency, "In doubt", joinUp(1, 1, 1) + inDoubt, "2"},
		{"join: engine down", UIDIdempotency, "In doubt", joinUp(1, 1, 0), ""},
		{"join: database down", UIDIdempotency, "In doubt", joinUp(0, 1, 1), ""},
		{"join: join collector failing", UIDIdempotency, "Completed, task still open", joinUp(1, 0, 1), ""},
		{"join: exporter not scraped", UIDIdempotency, "Completed, task still open", "", ""},
		{"join: the engine's camunda collector failing", UIDIdempotency, "In doubt", joinUpWith(1, 1, 1, 0), ""},
		{"overview: nothing in doubt, all up", UIDOverview, "Side effects in doubt", joinUp(1, 1, 1), "0"},
		{"overview: a record in doubt", UIDOverview, "Side effects in doubt", joinUp(1, 1, 1) + inDoubt, "2"},
		{"overview: in doubt, engine down", UIDOverview, "Side effects in doubt", joinUp(1, 1, 0), ""},
		{"overview: nothing done with its task open, all up", UIDOverview, "Side effects done, task open", joinUp(1, 1, 1), "0"},
		{"overview: a processed job with its task open", UIDOverview, "Side effects done, task open", joinUp(1, 1, 1) + processedOpen, "1"},
		{"overview: done with the task open, database down", UIDOverview, "Side effects done, task open", joinUp(0, 1, 1), ""},
		{"incidents: none, engine up", UIDExternalTask, "Open incidents", engineUp(1, 1), "0"},
		{"incidents: three open", UIDExternalTask, "Open incidents", engineUp(1, 1) + incidents, "3"},
		{"incidents: engine down", UIDExternalTask, "Open incidents", engineUp(0, 1), ""},
		{"incidents: camunda collector failing", UIDExternalTask, "Open incidents", engineUp(1, 0), ""},
	}
	var b strings.Builder
	b.WriteString("rule_files: []\nevaluation_interval: 1m\ntests:\n")
	for _, c := range cases {
		series := c.series
		if series == "" {
			series = "      - series: 'up{job=\"other\"}'\n        values: '1'\n" // unrelated to the panel
		}
		fmt.Fprintf(&b, "  - name: %q\n    interval: 1m\n    input_series:\n%s    promql_expr_test:\n      - expr: %q\n        eval_time: 0m\n        exp_samples:", c.name, series, zeroWhenUpExpr(t, c.uid, c.panel))
		if c.want == "" {
			b.WriteString(" []\n")
		} else {
			fmt.Fprintf(&b, "\n          - labels: '{}'\n            value: %s\n", c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "zero_when_up_test.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtest.Each(t, flavors, func(t *testing.T, f promtest.Flavor) {
		out, err := exec.Command(f.Tool(t, f.Promtool), "test", "rules", path).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool test rules: %v\n%s\ntest file:\n%s", err, out, b.String())
		}
	})
}
