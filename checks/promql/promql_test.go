package promql

import (
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/checks/internal/checktest"
	"github.com/workflow-exporter/workflow-exporter/dashboards"
)

var panelOpts = Options{RequireMatchers: []string{"job", "instance"}}

// TestDashboardQueries parses every panel expression of every generated
// dashboard and fails on any series outside the catalog and any misuse.
// (That every catalog metric is on some panel is a test of the dashboards
// package itself, so the main module's go test runs it.)
func TestDashboardQueries(t *testing.T) {
	qs := nonEmpty(t, "queries", dashboards.Queries)
	for _, q := range qs {
		for _, p := range CheckExpr(q.Expr, panelOpts) {
			t.Errorf("%s / %q / %s: %s\n\t%s", q.Dashboard, q.Panel, q.RefID, p, q.Expr)
		}
	}
	t.Logf("%d panel queries checked", len(qs))
}

// nonEmpty returns what list returns, failing on an error or nothing.
func nonEmpty[T any](t *testing.T, what string, list func() ([]T, error)) []T {
	t.Helper()
	xs, err := list()
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) == 0 {
		t.Fatalf("no %s", what)
	}
	return xs
}

func TestVariableQueries(t *testing.T) {
	for _, v := range nonEmpty(t, "variable queries", dashboards.VariableQueries) {
		for _, p := range CheckVariableQuery(v.Query, Options{}) {
			t.Errorf("%s / $%s: %s\n\t%s", v.Dashboard, v.Variable, p, v.Query)
		}
	}
}

// TestCheckCatchesMistakes proves each rule can fail.
func TestCheckCatchesMistakes(t *testing.T) {
	sel := `{job=~"$job",instance=~"$instance"}`
	for expr, want := range map[string]string{
		`workflow_outbox_oldest_pending_seconds` + sel:                                                                                 "not in the catalog",
		`sum(camunda_external_task_failures_total` + sel + `)`:                                                                         "without rate() or increase()",
		`sum(rate(camunda_external_task_failures_total` + sel + `[5m]))`:                                                               "not $__rate_interval",
		`sum(irate(camunda_external_task_failures_total` + sel + `[$__rate_interval]))`:                                                "without rate() or increase()",
		`max_over_time(camunda_external_task_failures_total` + sel + `[$__rate_interval])`:                                             "without rate() or increase()",
		`sum by (topic) (workflow_outbox_events_pending` + sel + `)`:                                                                   `no label "topic"`,
		`workflow_outbox_events_pending{job=~"$job",instance=~"$instance",scope=~"$scope"}`:                                            `no label "scope"`,
		`workflow_outbox_events_pending{job=~"$job"}`:                                                                                  `lacks instance`,
		`histogram_quantile(0.9, sum by (database) (rate(workflow_outbox_publish_delay_seconds_bucket` + sel + `[$__rate_interval])))`: "sum by (le",
		`histogram_quantile(0.9, rate(workflow_outbox_publish_delay_seconds_bucket` + sel + `[$__rate_interval]))`:                     "sum by (le",
		`sum(rate(x` + sel + `[$__rate_interval])`:                                                                                     "does not parse",
		`{job=~"$job"}`: "names no metric",
	} {
		ps := CheckExpr(expr, panelOpts)
		if !strings.Contains(strings.Join(ps, "\n"), want) {
			t.Errorf("CheckExpr(%s) = %q, want a problem containing %q", expr, ps, want)
		}
	}
	for q, want := range map[string]string{
		`label_values(workflow_outbox_events_pending, scope)`: `no label "scope"`,
		`label_values(nope_metric, job)`:                      "not in the catalog",
		`query_result(up)`:                                    "not of the form",
	} {
		ps := CheckVariableQuery(q, Options{})
		if !strings.Contains(strings.Join(ps, "\n"), want) {
			t.Errorf("CheckVariableQuery(%s) = %q, want %q", q, ps, want)
		}
	}
	// And accepts what the bundle writes.
	for _, ok := range []string{
		`sum(rate(camunda_external_task_failures_total` + sel + `[$__rate_interval]))`,
		`sum(increase(camunda_external_task_failures_total{job=~"${job:regex}",instance=~"$instance"}[$__rate_interval]))`,
		`count(ALERTS{alertstate="firing"}) or vector(0)`,
		`histogram_quantile(0.95, sum by (le, database) (rate(workflow_outbox_publish_delay_seconds_bucket` + sel + `[$__rate_interval])))`,
		`up{job=~"$job",instance=~"$instance"} and on (job, instance) max_over_time(workflow_exporter_build_info` + sel + `[1d])`,
	} {
		if ps := CheckExpr(ok, panelOpts); len(ps) != 0 {
			t.Errorf("CheckExpr(%s) = %q, want none", ok, ps)
		}
	}
}

func TestSubstitute(t *testing.T) {
	got := Substitute(`rate(x{a=~"${topic:regex}",b=~"$scope",c="[[engine]]"}[$__rate_interval])`)
	want := `rate(x{a=~"topic",b=~"scope",c="engine"}[8869990787ms])`
	if got != want {
		t.Errorf("Substitute = %s, want %s", got, want)
	}
}

// TestDashboardQueriesWithClusterAndNamespace renders the dashboards with the
// optional cluster and namespace variables and a selector: every panel and
// variable query still parses and every selector carries job, instance,
// cluster and namespace.
func TestDashboardQueriesWithClusterAndNamespace(t *testing.T) {
	ds := checktest.RenderDashboards(t, "selector: env=\"prod\"\ncluster: {enabled: true}\nnamespace: {enabled: true}\n")
	opts := Options{RequireMatchers: []string{"job", "instance", "cluster", "namespace"}, TargetLabels: []string{"cluster", "namespace", "env"}}
	varOpts := Options{TargetLabels: opts.TargetLabels}
	n := 0
	for _, d := range ds {
		qs, vs, err := dashboards.QueriesOf(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			n++
			for _, p := range CheckExpr(q.Expr, opts) {
				t.Errorf("%s / %q / %s: %s\n\t%s", q.Dashboard, q.Panel, q.RefID, p, q.Expr)
			}
		}
		for _, v := range vs {
			for _, p := range CheckVariableQuery(v.Query, varOpts) {
				t.Errorf("%s / $%s: %s\n\t%s", v.Dashboard, v.Variable, p, v.Query)
			}
		}
	}
	if n == 0 {
		t.Fatal("no queries")
	}
	// And the check notices a selector without the namespace.
	if ps := CheckExpr(`workflow_outbox_events_pending{job=~"$job",instance=~"$instance",cluster=~"$cluster"}`, opts); len(ps) == 0 {
		t.Error("a selector without namespace passed")
	}
}
