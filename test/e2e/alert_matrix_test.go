package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
	"github.com/workflow-exporter/workflow-exporter/test/sim"
)

// The alert matrix: every failure window of at-least-once workers, caused
// on the real stack by the workload simulator (test/sim), must reach
// Alertmanager as the alert meant for it, routed by deploy/alertmanager.yml
// to the receiver of its severity, with the labels that name the lane; and
// nothing else may fire for that lane. Before any fault, a healthy stretch
// of several rule windows must notify nothing at all. Two alerting stacks
// watch the one exporter at once, Prometheus and Alertmanager in both
// tested versions (test/harness/promtest's flavors), and each must do all of
// it.
//
// To keep the test minutes long, not hours, the rules are rendered through
// the generator (alerts/rules) from matrixAlertsConfig: 1m windows (the
// minimum the generator accepts for rules written for an exporter polling
// every 15s; this one polls every second), for: durations and ages of
// seconds. The shipped defaults are covered by the promtool tests in
// alerts/tests.

// matrixAlertsConfig shortens windows and for: durations; every rule's
// logic stays the shipped one. in_doubt_for is 0s: the slow worker's
// records are in doubt for about 39s of each minute (from the lapse of its
// 20s lock to its late completion), and with a for: of 10s the alert fired
// for about 29s of each, less than the ticket receiver's 30s group_wait, so
// whether Alertmanager notified depended on luck (the explanation of a
// missing alert, explainMissing, showed it firing and resolving again).
const matrixAlertsConfig = `
outbox: {stalled_window: 1m, stalled_for: 0s, oldest_age: 30m, oldest_age_for: 0s, growing_window: 10m, growing_for: 5m, failed_for: 30s, keep_firing_for: 1m}
inbox: {oldest_age: 30m, for: 0s, stalled_window: 1m, stalled_for: 0s, growing_window: 10m, growing_for: 5m}
idempotency: {unknown_outcome_age: 30s, unknown_outcome_for: 0s, stale_for: 0s, conflicts_window: 1m, conflicts_max: 0, completed_task_open_for: 10s, in_doubt_for: 0s, processed_job_task_open_for: 10s}
camunda: {retries_exhausted_for: 0s, lock_expirations_window: 1m, lock_expirations_max: 0, retry_storm_window: 1m, retry_storm_min_failures: 50, retry_storm_for: 0s, backlog_stalled_age: 30s, backlog_stalled_window: 1m, backlog_stalled_for: 0s, incidents_for: 0s, duplicate_execution_window: 1m}
exporter: {source_down_for: 20s, down_for: 20s, min_interval: 15s}
`

// matrixCase is one row of the matrix: a fault on its own lane (or on the
// exporter's path to a source) and the alerts it must raise.
type matrixCase struct {
	window  string // the failure window, in words
	fault   string
	target  string // lane, or database for database-down
	metrics string
	alerts  []string
}

// matrixLanes are the simulator's lanes, one per lane fault, plus a healthy
// one; "billing" lives in a second database for database-down.
func matrixCases() (lane []matrixCase, exporterSide []matrixCase) {
	lane = []matrixCase{
		{"worker crashes after the side effect, before complete", sim.FaultCrashAfterSideEffect, "crash",
			"workflow_idempotency_completed_task_open, workflow_processed_job_task_open, camunda_external_task_lock_expirations_total, camunda_external_task_redeliveries_total",
			[]string{rules.WorkflowCompletedSideEffectTaskOpen, rules.WorkflowProcessedJobTaskOpen, rules.CamundaExternalTaskLockExpirations, rules.CamundaExternalTaskDuplicateExecution}},
		{"work slower than the lock: lapse, redelivery, duplicate execution", sim.FaultSlowWorker, "slow",
			"camunda_external_task_lock_expirations_total, camunda_external_task_redeliveries_total, workflow_idempotency_in_doubt",
			[]string{rules.CamundaExternalTaskLockExpirations, rules.CamundaExternalTaskDuplicateExecution, rules.WorkflowIdempotencyInDoubt}},
		{"unknown outcome of the downstream call", sim.FaultUnknownOutcome, "unknown",
			"workflow_idempotency_records{status=\"UNKNOWN_OUTCOME\"}, workflow_idempotency_oldest_record_age_seconds",
			[]string{rules.WorkflowUnknownOutcomeRecords}},
		{"duplicate message delivery (the protection working)", sim.FaultDuplicateDelivery, "dupmsg",
			"workflow_inbox_messages_processed_total{status=\"IGNORED_DUPLICATE\"}", nil},
		{"outbox publisher stopped", sim.FaultPublisherStopped, "publisher",
			"workflow_outbox_events_pending, workflow_outbox_oldest_pending_age_seconds, workflow_outbox_events_published_total",
			[]string{rules.WorkflowOutboxBacklogStalled}},
		{"inbox consumer stopped", sim.FaultConsumerStopped, "consumer",
			"workflow_inbox_messages, workflow_inbox_oldest_message_age_seconds, workflow_inbox_messages_processed_total",
			[]string{rules.WorkflowInboxBacklogStalled}},
		{"retries exhausted (an incident)", sim.FaultRetriesExhausted, "exhausted",
			"camunda_external_tasks{state=\"retries_exhausted\"}, camunda_incidents", []string{rules.CamundaExternalTaskRetriesExhausted}},
		{"retry storm (downstream down)", sim.FaultRetryStorm, "storm",
			"camunda_external_task_failures_total, camunda_external_task_completions_total", []string{rules.CamundaExternalTaskRetryStorm}},
		{"record stuck in progress", sim.FaultStuckInProgress, "stuck",
			"workflow_idempotency_stale_records", []string{rules.WorkflowIdempotencyStaleInProgress}},
		{"idempotency conflict (same key, different request)", sim.FaultIdempotencyConflict, "conflict",
			"workflow_idempotency_conflicts_total", []string{rules.WorkflowIdempotencyConflicts}},
		{"BPMN error (a business outcome)", sim.FaultBPMNError, "bpmnerror",
			"camunda_external_task_bpmn_errors_total", nil},
		{"no worker fetches the topic", sim.FaultWorkersStopped, "noworkers",
			"camunda_external_task_oldest_waiting_age_seconds, camunda_external_tasks{state=\"waiting\"}", []string{rules.CamundaExternalTaskBacklogStalled}},
		{"healthy (no fault)", "", "healthy", "", nil},
	}
	exporterSide = []matrixCase{
		{"database stopped (as the exporter sees it)", sim.FaultDatabaseDown, "billing",
			"workflow_exporter_source_up{source=\"database\"}", []string{rules.WorkflowExporterSourceDown}},
		{"engine answering 500", sim.FaultEngine500, "main",
			"workflow_exporter_source_up{source=\"camunda\"}, camunda_up", []string{rules.WorkflowExporterSourceDown}},
	}
	return lane, exporterSide
}

// ownerOf names the lane (or source) an alert is about, from its labels.
func ownerOf(l map[string]string) string {
	switch {
	case l["alertname"] == rules.WorkflowExporterSourceDown && l["database"] != "":
		return l["database"]
	case l["alertname"] == rules.WorkflowExporterSourceDown && l["engine"] != "":
		return l["engine"]
	case strings.HasPrefix(l["topic"], "sim."):
		return strings.TrimPrefix(l["topic"], "sim.")
	case strings.HasPrefix(l["scope"], "SIM_"):
		return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(l["scope"], "SIM_")), "_", "-")
	case strings.HasPrefix(l["aggregate_type"], "sim-"):
		return strings.TrimPrefix(l["aggregate_type"], "sim-")
	case strings.HasSuffix(l["message_type"], ".validated"):
		return strings.TrimSuffix(l["message_type"], ".validated")
	case strings.HasPrefix(l["activity_id"], "submit-"):
		return strings.TrimPrefix(l["activity_id"], "submit-")
	}
	return "?"
}

// matrixDatabase is a database with the reference schema, the
// duplicate_count extension and the exporter's indexes.
func matrixDatabase(t *testing.T) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	pgtest.ExecRepoFiles(t, pgtest.Connect(t, dsn), nil,
		"deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql")
	return dsn
}

func withHost(t *testing.T, dsn, hostPort string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = hostPort
	return u.String()
}

// alertmanagerAlerts returns the alerts Alertmanager holds, with the
// receivers they are routed to.
func alertmanagerAlerts(t *testing.T, am string) []amAlert {
	t.Helper()
	resp, err := http.Get(am + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []amAlert
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("alertmanager alerts: %v: %s", err, b)
	}
	return out
}

type amAlert struct {
	Labels    map[string]string `json:"labels"`
	Receivers []struct {
		Name string `json:"name"`
	} `json:"receivers"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
}

func receiverFor(severity string) string {
	switch severity {
	case rules.Critical:
		return "pager"
	case rules.Warning:
		return "ticket"
	}
	return "null"
}

func TestAlertMatrix(t *testing.T) {
	promtest.SkipIfMissing(t, promtest.PrometheusBinary(), promtest.AlertmanagerBinary())
	laneCases, exporterCases := matrixCases()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ordersDSN, billingDSN := matrixDatabase(t), matrixDatabase(t)
	engine := sharedEngine(t)

	var lanes []sim.Lane
	for _, c := range laneCases {
		lanes = append(lanes, sim.Lane{Name: c.target, Database: "orders"})
	}
	lanes = append(lanes, sim.Lane{Name: "billing", Database: "billing"})
	var simLog testkit.LogBuffer
	s, err := sim.New(ctx, sim.Config{
		EngineURL: engine.BaseURL, EngineName: "main",
		Databases: map[string]string{"orders": ordersDSN, "billing": billingDSN},
		Lanes:     lanes, Interval: 3 * time.Second, Workers: 2, LockDuration: 20 * time.Second,
		EngineProxy: "127.0.0.1:0", DatabaseProxies: map[string]string{"billing": "127.0.0.1:0"},
		Logger: slog.New(slog.NewTextHandler(&simLog, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	simDone := make(chan struct{})
	go func() { defer close(simDone); _ = s.Run(ctx) }()
	defer func() { cancel(); <-simDone }()

	exporterAddr := exportertest.Start(t, exportertest.Options{Config: fmt.Sprintf(`
camunda:
  - name: main
    url: http://%s/engine-rest
    min_interval: 1s
    timeout: 15s
    request_timeout: 5s
databases:
  - name: orders
    dsn_env: MATRIX_ORDERS_DSN
    min_interval: 1s
    late_commit_window: 1m
    tables:
      idempotency: {stale_after: 90s}
      processed_jobs: {}
      inbox: {}
      outbox: {}
  - name: billing
    dsn_env: MATRIX_BILLING_DSN
    min_interval: 1s
    late_commit_window: 1m
`, s.EngineProxyAddr()), Env: []string{"MATRIX_ORDERS_DSN=" + ordersDSN, "MATRIX_BILLING_DSN=" + withHost(t, billingDSN, s.DatabaseProxyAddr("billing"))}}).Addr

	// One alerting stack of each flavor (Debian's 2.42 and 0.25, the
	// current 3.x and 0.31), both watching the one exporter: each fault is
	// injected once and every stack must notify it.
	stacks := promtest.StartAlertingEach(t, promtest.AlertingOptions{Rules: promtest.GenerateRules(t, matrixAlertsConfig), Target: exporterAddr})

	// Phase 0: healthy. Every lane's workload runs, no fault, for three
	// times the longest rule window: nothing may notify.
	const window = time.Minute
	healthy := 3*window + 30*time.Second // + the ticket receiver's group_wait
	t.Logf("healthy stretch: %s with the workload on and no fault", healthy)
	time.Sleep(healthy)
	eachStack(t, "healthy", stacks, func(t *testing.T, a *promtest.Alerting) {
		for _, n := range a.Receiver.Notifications() {
			t.Errorf("healthy stretch notified %s: %v", n.Receiver, n.Labels)
		}
	})
	if t.Failed() {
		t.Logf("simulator log:\n%s", simLog.String())
		t.FailNow()
	}
	for _, l := range s.Status().Lanes {
		if l.Counts["completed"] == 0 {
			t.Fatalf("lane %s completed no task in the healthy stretch: %+v", l.Name, l)
		}
	}

	// took[flavor]["owner/alert"]: injection to notification.
	var mu sync.Mutex
	took := map[string]map[string]time.Duration{}
	record := func(flavor string, m map[string]time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if took[flavor] == nil {
			took[flavor] = map[string]time.Duration{}
		}
		maps.Copy(took[flavor], m)
	}

	// Phase 1: every lane fault at once, each on its own lane.
	injected := map[string]time.Time{}
	for _, c := range laneCases {
		if c.fault == "" {
			continue
		}
		if err := s.Inject(ctx, c.fault, c.target); err != nil {
			t.Fatal(err)
		}
		injected[c.target] = time.Now()
	}
	eachStack(t, "lane-faults", stacks, func(t *testing.T, a *promtest.Alerting) {
		record(a.Flavor.Name, waitForMatrix(t, a, laneCases, injected, 4*time.Minute))
		prom := a.Prometheus
		// The duplicate delivery is visible in the metrics, and is not an
		// alert: the protection is working.
		if v := promQuery(t, prom.URL, `sum(increase(workflow_inbox_messages_processed_total{message_type="dupmsg.validated", status="IGNORED_DUPLICATE"}[3m]))`); v <= 0 {
			t.Errorf("duplicate-delivery: no IGNORED_DUPLICATE messages counted (got %v)", v)
		}
		// So is a BPMN error: a business outcome the process models, counted
		// per topic, never an incident or a failure.
		if v := promQuery(t, prom.URL, `sum(increase(camunda_external_task_bpmn_errors_total{topic="sim.bpmnerror"}[3m]))`); v <= 0 {
			t.Errorf("bpmn-error: no BPMN errors counted on topic sim.bpmnerror (got %v)", v)
		}
	})

	// Phase 2: the exporter loses a database and the engine.
	for _, c := range exporterCases {
		if err := s.Inject(ctx, c.fault, c.target); err != nil {
			t.Fatal(err)
		}
		injected[c.target] = time.Now()
	}
	eachStack(t, "exporter-faults", stacks, func(t *testing.T, a *promtest.Alerting) {
		record(a.Flavor.Name, waitForMatrix(t, a, exporterCases, injected, 3*time.Minute))
	})

	// Nothing unexpected, and every expected alert routed to the receiver
	// of its severity (Alertmanager's own view, beside the webhook's).
	expected := map[string]map[string]bool{}
	for _, c := range append(laneCases, exporterCases...) {
		expected[c.target] = map[string]bool{}
		for _, a := range c.alerts {
			expected[c.target][a] = true
		}
	}
	eachStack(t, "nothing-else", stacks, func(t *testing.T, a *promtest.Alerting) {
		for _, n := range a.Receiver.Notifications() {
			owner := ownerOf(n.Labels)
			if !expected[owner][n.Labels["alertname"]] {
				t.Errorf("unexpected notification to %s for %q: %v", n.Receiver, owner, n.Labels)
			}
		}
		for _, am := range alertmanagerAlerts(t, a.Alertmanager.URL) {
			al, ok := rules.Lookup(am.Labels["alertname"])
			if !ok {
				t.Errorf("Alertmanager holds an alert not of the bundle: %v", am.Labels)
				continue
			}
			if len(am.Receivers) != 1 || am.Receivers[0].Name != receiverFor(al.Severity) {
				t.Errorf("%s (severity %s) routed to %+v, want %s", al.Name, al.Severity, am.Receivers, receiverFor(al.Severity))
			}
		}
	})

	// The measured times, as docs/alerts.md quotes them: one column per
	// flavor.
	var b strings.Builder
	b.WriteString("\n| failure window | fault | metrics | alert | severity |")
	var sep strings.Builder
	sep.WriteString("|---|---|---|---|---|")
	for _, a := range stacks {
		fmt.Fprintf(&b, " injection to notification (%s) |", a.Flavor.Name)
		sep.WriteString("---|")
	}
	b.WriteString("\n" + sep.String() + "\n")
	for _, c := range append(laneCases, exporterCases...) {
		if c.fault == "" {
			continue
		}
		if len(c.alerts) == 0 {
			fmt.Fprintf(&b, "| %s | `%s` | %s | none (by design) | |%s\n", c.window, c.fault, c.metrics, strings.Repeat(" |", len(stacks)))
		}
		for _, name := range c.alerts {
			al, _ := rules.Lookup(name)
			fmt.Fprintf(&b, "| %s | `%s` | %s | `%s` | %s |", c.window, c.fault, c.metrics, name, al.Severity)
			for _, a := range stacks {
				fmt.Fprintf(&b, " %s |", took[a.Flavor.Name][c.target+"/"+name].Round(time.Second))
			}
			b.WriteString("\n")
		}
	}
	t.Logf("alert matrix (rules rendered from matrixAlertsConfig; scrape and evaluation every 1s; exporter min_interval 1s; worker lock 20s; shipped Alertmanager routing):%s", b.String())
	if t.Failed() {
		t.Logf("simulator log:\n%s", simLog.String())
	}
}

// eachStack runs fn on every stack at once (promtest.Each) as the subtests
// PHASE/debian and PHASE/current.
func eachStack(t *testing.T, phase string, stacks []*promtest.Alerting, fn func(t *testing.T, a *promtest.Alerting)) {
	t.Helper()
	t.Run(phase, func(t *testing.T) { promtest.Each(t, stacks, fn) })
}

// waitForMatrix waits until every expected alert of the cases has been
// notified to the receiver of its severity with the owner's labels, and
// returns the time from injection to notification per "owner/alert".
func waitForMatrix(t *testing.T, stack *promtest.Alerting, cases []matrixCase, injected map[string]time.Time, bound time.Duration) map[string]time.Duration {
	t.Helper()
	hook := stack.Receiver
	took := map[string]time.Duration{}
	want := 0
	for _, c := range cases {
		want += len(c.alerts)
	}
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		for _, n := range hook.Notifications() {
			if n.Status != "firing" {
				continue
			}
			owner := ownerOf(n.Labels)
			key := owner + "/" + n.Labels["alertname"]
			if _, seen := took[key]; seen {
				continue
			}
			for _, c := range cases {
				if c.target != owner {
					continue
				}
				for _, a := range c.alerts {
					if a != n.Labels["alertname"] {
						continue
					}
					al, _ := rules.Lookup(a)
					if n.Receiver != receiverFor(al.Severity) || n.Labels["severity"] != al.Severity {
						t.Errorf("%s on %s reached %s with severity %q, want %s via %s", a, owner, n.Receiver, n.Labels["severity"], al.Severity, receiverFor(al.Severity))
					}
					took[key] = n.At.Sub(injected[owner])
				}
			}
		}
		if len(took) == want {
			break
		}
		time.Sleep(time.Second)
	}
	// Let the stragglers of the same groups arrive, then report what is
	// missing.
	time.Sleep(35 * time.Second)
	for _, c := range cases {
		for _, a := range c.alerts {
			if _, ok := took[c.target+"/"+a]; !ok {
				t.Errorf("%s (fault %s on %s) did not reach Alertmanager's receiver within %s\n%s", a, c.fault, c.target, bound, explainMissing(t, stack.Prometheus, a, bound+time.Minute))
			}
		}
	}
	return took
}

// promQuery returns the value of an instant query's first sample (0 when
// none).
func promQuery(t *testing.T, base, q string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Data.Result) == 0 {
		return 0
	}
	var v float64
	fmt.Sscan(fmt.Sprint(out.Data.Result[0].Value[1]), &v)
	return v
}

// explainMissing says what this stack's Prometheus saw of an alert that did
// not notify, over the last span: the alert's expression per evaluation
// second (1 where it held; a run shorter than the rule's for: never fires)
// and whether the alert was ever pending or firing.
func explainMissing(t *testing.T, prom *promtest.Server, alert string, span time.Duration) string {
	t.Helper()
	var rulesResp struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name     string  `json:"name"`
					Query    string  `json:"query"`
					Duration float64 `json:"duration"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := getJSON(prom.URL+"/api/v1/rules?type=alert", &rulesResp); err != nil {
		return fmt.Sprintf("  (%s Prometheus: rules: %v)", prom.Flavor.Name, err)
	}
	expr, hold := "", 0.0
	for _, g := range rulesResp.Data.Groups {
		for _, r := range g.Rules {
			if r.Name == alert {
				expr, hold = r.Query, r.Duration
			}
		}
	}
	if expr == "" {
		return fmt.Sprintf("  (%s Prometheus has no rule %s)", prom.Flavor.Name, alert)
	}
	end := time.Now()
	start := end.Add(-span)
	held := func(q string) string {
		var rr struct {
			Data struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Values [][2]any          `json:"values"`
				} `json:"result"`
			} `json:"data"`
		}
		u := fmt.Sprintf("%s/api/v1/query_range?query=%s&start=%d&end=%d&step=1", prom.URL, url.QueryEscape(q), start.Unix(), end.Unix())
		if err := getJSON(u, &rr); err != nil {
			return err.Error()
		}
		var b strings.Builder
		for _, r := range rr.Data.Result {
			at := map[int64]bool{}
			for _, v := range r.Values {
				if f, ok := v[0].(float64); ok {
					at[int64(f)] = true
				}
			}
			fmt.Fprintf(&b, "\n    %v: ", r.Metric)
			for ts := start.Unix(); ts <= end.Unix(); ts++ {
				if at[ts] {
					b.WriteByte('1')
				} else {
					b.WriteByte('.')
				}
			}
		}
		if b.Len() == 0 {
			return " never"
		}
		return b.String()
	}
	return fmt.Sprintf("  %s Prometheus, the last %s, one character per second:\n  expression (for: %gs) %s held:%s\n  ALERTS pending or firing:%s",
		prom.Flavor.Name, span, hold, expr, held(expr), held(`ALERTS{alertname="`+alert+`"}`))
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
