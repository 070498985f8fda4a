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
	"os"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/sim"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// The alert matrix: every failure window of at-least-once workers, caused
// on the real stack by the workload simulator (sim/), must raise the
// alerts meant for it, and Alertmanager, routed and inhibited by
// deploy/alertmanager.yml, must send exactly one notification per fault: the
// root cause's, at the receiver of its severity, carrying the lane's labels
// and holding that lane's alerts only. The fault's other alerts stay visible
// in Alertmanager, inhibited (or, info, routed nowhere), and nothing else may
// fire for that lane. Faults on several lanes at once are one notification
// each. Before any fault, a healthy stretch of several rule windows must
// notify nothing but the Watchdog's dead man's switch. Two alerting stacks
// watch the one exporter at once, Prometheus and Alertmanager in both
// tested versions (test/harness/promtest's flavors), and each must do all
// of it.
//
// To keep the test minutes long, not hours, the rules are rendered through
// the generator (alerts/rules) from matrixAlertsConfig: 1m windows (the
// minimum the generator accepts for rules written for an exporter polling
// every 15s; this one polls every second), for: durations and ages of
// seconds. The shipped defaults are covered by the promtool tests in
// alerts/tests.

// matrixAlertsConfig shortens windows and for: durations; every rule's
// logic stays the shipped one. As in the shipped config, no consequence
// waits less than the root cause that inhibits it; here the consequences
// wait longer (30s against 10s), so that a root detected a collection or
// two after its consequence on a loaded machine still fires first. The
// lock alerts' windows (2m) keep them firing, inhibited, while the test
// looks.
const matrixAlertsConfig = `
outbox: {stalled_window: 1m, stalled_for: 0s, oldest_age: 2m, oldest_age_for: 0s, growing_window: 10m, growing_for: 5m, failed_for: 30s}
inbox: {oldest_age: 30m, for: 0s, stalled_window: 1m, stalled_for: 0s, growing_window: 10m, growing_for: 5m}
idempotency: {unknown_outcome_age: 30s, unknown_outcome_for: 0s, stale_for: 10s, conflicts_window: 1m, conflicts_max: 0, completed_task_open_for: 10s, in_doubt_for: 10s, processed_job_task_open_for: 30s}
camunda: {retries_exhausted_for: 0s, lock_expirations_window: 2m, lock_expirations_max: 0, lock_expirations_for: 30s, retry_storm_window: 1m, retry_storm_min_failures: 50, retry_storm_for: 0s, backlog_stalled_age: 30s, backlog_stalled_window: 1m, backlog_stalled_for: 0s, incidents_for: 0s, duplicate_execution_window: 2m, duplicate_execution_for: 30s}
exporter: {source_down_for: 20s, pages_keep_firing_for: 1m, down_for: 20s, min_interval: 15s}
delivery: {lost_for: 10s, duplicates_for: 30s}
relay: {lag: 45s}
`

// matrixCase is one row of the matrix: a fault on its own lane (or on the
// exporter's path to a source) and the alerts it must raise.
type matrixCase struct {
	window  string // the failure window, in words
	fault   string
	target  string // lane, or database for database-down
	metrics string
	// alerts are every alert the fault raises for its target: each must be
	// seen firing in Alertmanager, and none other of the target.
	alerts []string
	// notify is the one of alerts Alertmanager notifies, once, at the
	// receiver of its severity ("" for none); the others are inhibited by
	// it (or are info, routed nowhere).
	notify string
	// labels must be on the notification's alerts: the lane's.
	labels map[string]string
}

// laneLabels returns the named labels as the simulator's lane of that name
// in database orders sets them.
func laneLabels(lane string, names ...string) map[string]string {
	l := sim.Lane{Name: lane, Database: "orders"}
	all := map[string]string{
		"database": l.Database, "engine": "main", "topic": l.Topic(), "scope": l.Scope(),
		"aggregate_type": l.AggregateType(), "event_type": l.EventType(),
		"source_system": sim.SourceSystem, "message_type": l.MessageType(), "activity_id": l.ActivityID(),
	}
	out := map[string]string{}
	for _, n := range names {
		out[n] = all[n]
	}
	return out
}

// deliveringLane is the lane of messages-lost: its events are delivered
// from database orders to the inbox of database billing, a delivery of the
// exporter's config (deliveries[]).
var deliveringLane = sim.Lane{Name: "lost", Database: "orders", Consumer: "billing"}

// relayDatabase is the database of the relay lanes: a wal_level=logical
// server of its own (the shared one is not).
const relayDatabase = "cdc"

// relayLane reports whether the lane of that name is a relay lane: its
// outbox is drained by change data capture.
func relayLane(name string) bool { return name == "relay" }

// relayLabels are the labels of a relay lane's alerts.
func relayLabels(lane string) map[string]string {
	return map[string]string{"database": relayDatabase, "slot": sim.Lane{Name: lane}.Slot()}
}

// matrixLanes are the simulator's lanes, one per lane fault, plus a healthy
// one; "billing" lives in a second database for database-down, "relay" in
// a third, on a wal_level=logical server, for relay-stopped.
func matrixCases() (lane []matrixCase, exporterSide []matrixCase) {
	lane = []matrixCase{
		{"worker crashes after the side effect, before complete", sim.FaultCrashAfterSideEffect, "crash",
			"workflow_idempotency_completed_task_open, workflow_processed_job_task_open, camunda_external_task_lock_expirations_total, camunda_external_task_redeliveries_total",
			[]string{rules.WorkflowCompletedSideEffectTaskOpen, rules.WorkflowProcessedJobTaskOpen, rules.CamundaExternalTaskLockExpirations, rules.CamundaExternalTaskDuplicateExecution},
			rules.WorkflowCompletedSideEffectTaskOpen, laneLabels("crash", "database", "scope", "engine", "topic")},
		{"work slower than the lock: lapse, redelivery, duplicate execution", sim.FaultSlowWorker, "slow",
			"camunda_external_task_lock_expirations_total, camunda_external_task_redeliveries_total, workflow_idempotency_in_doubt, workflow_idempotency_stale_records",
			[]string{rules.WorkflowIdempotencyInDoubt, rules.CamundaExternalTaskLockExpirations, rules.CamundaExternalTaskDuplicateExecution, rules.WorkflowIdempotencyStaleInProgress},
			rules.WorkflowIdempotencyInDoubt, laneLabels("slow", "database", "scope", "engine", "topic")},
		{"unknown outcome of the downstream call", sim.FaultUnknownOutcome, "unknown",
			"workflow_idempotency_records{status=\"UNKNOWN_OUTCOME\"}, workflow_idempotency_oldest_record_age_seconds",
			[]string{rules.WorkflowUnknownOutcomeRecords}, rules.WorkflowUnknownOutcomeRecords, laneLabels("unknown", "database", "scope")},
		{"duplicate message delivery (the protection working)", sim.FaultDuplicateDelivery, "dupmsg",
			"workflow_inbox_messages_processed_total{status=\"IGNORED_DUPLICATE\"}", nil, "", nil},
		{"outbox publisher stopped", sim.FaultPublisherStopped, "publisher",
			"workflow_outbox_events_pending, workflow_outbox_oldest_pending_age_seconds, workflow_outbox_events_published_total",
			[]string{rules.WorkflowOutboxBacklogStalled, rules.WorkflowOutboxOldestEventTooOld},
			rules.WorkflowOutboxBacklogStalled, laneLabels("publisher", "database", "aggregate_type", "event_type")},
		{"outbox relay (change data capture) stopped while events keep coming", sim.FaultRelayStopped, "relay",
			"workflow_outbox_relay_lag_seconds, workflow_outbox_relay_slot_active",
			[]string{rules.WorkflowOutboxRelayBehind}, rules.WorkflowOutboxRelayBehind, relayLabels("relay")},
		{"inbox consumer stopped", sim.FaultConsumerStopped, "consumer",
			"workflow_inbox_messages, workflow_inbox_oldest_message_age_seconds, workflow_inbox_messages_processed_total",
			[]string{rules.WorkflowInboxBacklogStalled}, rules.WorkflowInboxBacklogStalled, laneLabels("consumer", "database", "source_system", "message_type")},
		{"retries exhausted (an incident)", sim.FaultRetriesExhausted, "exhausted",
			"camunda_external_tasks{state=\"retries_exhausted\"}, camunda_incidents", []string{rules.CamundaExternalTaskRetriesExhausted},
			rules.CamundaExternalTaskRetriesExhausted, laneLabels("exhausted", "engine", "topic")},
		{"retry storm (downstream down)", sim.FaultRetryStorm, "storm",
			"camunda_external_task_failures_total, camunda_external_task_completions_total", []string{rules.CamundaExternalTaskRetryStorm},
			rules.CamundaExternalTaskRetryStorm, laneLabels("storm", "engine", "topic")},
		{"record stuck in progress", sim.FaultStuckInProgress, "stuck",
			"workflow_idempotency_stale_records", []string{rules.WorkflowIdempotencyStaleInProgress},
			rules.WorkflowIdempotencyStaleInProgress, laneLabels("stuck", "database", "scope")},
		{"idempotency conflict (same key, different request)", sim.FaultIdempotencyConflict, "conflict",
			"workflow_idempotency_conflicts_total", []string{rules.WorkflowIdempotencyConflicts},
			rules.WorkflowIdempotencyConflicts, laneLabels("conflict", "database", "scope")},
		{"BPMN error (a business outcome)", sim.FaultBPMNError, "bpmnerror",
			"camunda_external_task_bpmn_errors_total", nil, "", nil},
		{"no worker fetches the topic", sim.FaultWorkersStopped, "noworkers",
			"camunda_external_task_oldest_waiting_age_seconds, camunda_external_tasks{state=\"waiting\"}", []string{rules.CamundaExternalTaskBacklogStalled},
			rules.CamundaExternalTaskBacklogStalled, laneLabels("noworkers", "engine", "topic")},
		{"events dropped between publish and receive (a delivery to another database)", sim.FaultMessagesLost, "lost",
			"workflow_delivery_lost_events, workflow_delivery_in_flight_events", []string{rules.WorkflowDeliveryEventsLost},
			rules.WorkflowDeliveryEventsLost, map[string]string{"delivery": deliveringLane.Delivery(), "event_type": deliveringLane.EventType()}},
		{"healthy (no fault)", "", "healthy", "", nil, "", nil},
	}
	exporterSide = []matrixCase{
		{"database stopped (as the exporter sees it)", sim.FaultDatabaseDown, "billing",
			"workflow_exporter_source_up{source=\"database\"}", []string{rules.WorkflowExporterSourceDown},
			rules.WorkflowExporterSourceDown, map[string]string{"source": "database", "name": "billing", "database": "billing"}},
		{"engine answering 500", sim.FaultEngine500, "main",
			"workflow_exporter_source_up{source=\"camunda\"}, camunda_up", []string{rules.WorkflowExporterSourceDown},
			rules.WorkflowExporterSourceDown, map[string]string{"source": "camunda", "name": "main", "engine": "main"}},
	}
	return lane, exporterSide
}

// ownerOf names the lane (or source) an alert is about, from its labels.
func ownerOf(l map[string]string) string {
	switch {
	case strings.HasPrefix(l["delivery"], "sim-"):
		return strings.TrimPrefix(l["delivery"], "sim-")
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
	case strings.HasSuffix(l["message_type"], ".delivered"):
		return strings.TrimSuffix(l["message_type"], ".delivered")
	case strings.HasPrefix(l["activity_id"], "submit-"):
		return strings.TrimPrefix(l["activity_id"], "submit-")
	case strings.HasPrefix(l["slot"], "sim_"):
		return strings.ReplaceAll(strings.TrimPrefix(l["slot"], "sim_"), "_", "-")
	}
	return "?"
}

// relayMatrixDatabase is matrixDatabase on a wal_level=logical server of
// the test's own, for the relay lanes (the simulator creates their outbox
// tables and slots).
func relayMatrixDatabase(t *testing.T) string {
	t.Helper()
	dsn, _ := relaytest.NewLogicalDatabase(t)
	pgtest.ExecRepoFiles(t, pgtest.Connect(t, dsn), nil,
		"deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql")
	return dsn
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
		State       string   `json:"state"`
		InhibitedBy []string `json:"inhibitedBy"`
	} `json:"status"`
}

func receiverFor(severity string) string {
	switch severity {
	case rulefile.Critical:
		return "pager"
	case rulefile.Warning:
		return "ticket"
	case rulefile.None:
		return "watchdog"
	}
	return "null"
}

// seenInAM is what Alertmanager showed of one alert of a lane while the
// test looked: firing at all, and muted by an inhibit rule at least once.
type seenInAM struct{ firing, inhibited bool }

// matrixWatch follows the run: Alertmanager's alerts, polled, by
// "owner/alertname".
type matrixWatch struct {
	am   string
	seen map[string]*seenInAM
}

func (w *matrixWatch) poll(t *testing.T) {
	t.Helper()
	for _, a := range alertmanagerAlerts(t, w.am) {
		if a.Labels["alertname"] == rules.WorkflowExporterWatchdog {
			continue
		}
		k := ownerOf(a.Labels) + "/" + a.Labels["alertname"]
		s := w.seen[k]
		if s == nil {
			s = &seenInAM{}
			w.seen[k] = s
		}
		s.firing = true
		if a.Status.State == "suppressed" && len(a.Status.InhibitedBy) > 0 {
			s.inhibited = true
		}
	}
}

// matrixOnly keeps the cases whose target ALERT_MATRIX_LANES lists
// (comma-separated, e.g. "lost" or "lost,billing"), and the healthy lane;
// unset, every case. For working on one lane: the run is the same, minus
// the other faults.
func matrixOnly(t *testing.T, cases []matrixCase) []matrixCase {
	only := os.Getenv("ALERT_MATRIX_LANES")
	if only == "" {
		return cases
	}
	keep := map[string]bool{"healthy": true}
	for _, l := range strings.Split(only, ",") {
		keep[strings.TrimSpace(l)] = true
	}
	var out []matrixCase
	for _, c := range cases {
		if keep[c.target] {
			out = append(out, c)
		}
	}
	t.Logf("ALERT_MATRIX_LANES=%s: %d of %d cases", only, len(out), len(cases))
	return out
}

func TestAlertMatrix(t *testing.T) {
	t.Parallel() // beside the package's other tests (besideTheMatrix)
	promtest.SkipIfMissing(t, promtest.PrometheusBinary(), promtest.AlertmanagerBinary())
	laneCases, exporterCases := matrixCases()
	laneCases, exporterCases = matrixOnly(t, laneCases), matrixOnly(t, exporterCases)
	ran := map[string]bool{}
	for _, c := range laneCases {
		ran[c.fault] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ordersDSN, billingDSN := matrixDatabase(t), matrixDatabase(t)
	databases := map[string]string{"orders": ordersDSN, "billing": billingDSN}
	// An engine of its own (the others' is sharedEngine): the other tests
	// of the package run beside this one.
	engine := camundatest.Shared(t, camundatest.FlavorCamunda)

	var lanes []sim.Lane
	// relayConfig is the exporter's config of the relay lane's database,
	// when the run has the lane.
	relayConfig := ""
	for _, c := range laneCases {
		if relayLane(c.target) {
			l := sim.Lane{Name: c.target, Database: relayDatabase, Relay: true}
			lanes = append(lanes, l)
			databases[relayDatabase] = relayMatrixDatabase(t)
			relayConfig = fmt.Sprintf(`  - name: %s
    dsn_env: MATRIX_RELAY_DSN
    min_interval: 1s
    tables:
      outbox: {table: %s, relay: {slot: %s}}
`, relayDatabase, l.RelayTable(), l.Slot())
			continue
		}
		l := sim.Lane{Name: c.target, Database: "orders"}
		if c.target == deliveringLane.Name {
			l = deliveringLane
		}
		lanes = append(lanes, l)
	}
	lanes = append(lanes, sim.Lane{Name: "billing", Database: "billing"})
	var simLog testkit.LogBuffer
	s, err := sim.New(ctx, sim.Config{
		EngineURL: engine.BaseURL, EngineName: "main",
		Databases: databases,
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
%sdeliveries:
  - name: %s
    from: {database: orders, event_types: [%s]}
    to: {database: billing, source_systems: [%s]}
    deadline: 20s
    window: 10m
    min_interval: 1s
`, s.EngineProxyAddr(), relayConfig, deliveringLane.Delivery(), deliveringLane.EventType(), deliveringLane.DeliverySourceSystem()),
		Env: []string{"MATRIX_ORDERS_DSN=" + ordersDSN, "MATRIX_BILLING_DSN=" + withHost(t, billingDSN, s.DatabaseProxyAddr("billing")), "MATRIX_RELAY_DSN=" + databases[relayDatabase]}}).Addr

	// One alerting stack of each flavor (Debian's 2.42 and 0.25, the
	// current 3.x and 0.31), both watching the one exporter: each fault is
	// injected once and every stack must notify it, once.
	stacks := promtest.StartAlertingEach(t, promtest.AlertingOptions{Rules: promtest.GenerateRules(t, matrixAlertsConfig), Target: exporterAddr})
	// What each stack's subtests keep between the phases (each stack's
	// own goroutine writes its own).
	type stackRun struct {
		watch *matrixWatch
		posts int
		took  map[string]time.Duration
	}
	runs := map[*promtest.Alerting]*stackRun{}
	for _, a := range stacks {
		runs[a] = &stackRun{watch: &matrixWatch{am: a.Alertmanager.URL, seen: map[string]*seenInAM{}}, took: map[string]time.Duration{}}
	}

	// Phase 0: healthy. Every lane's workload runs, no fault, for three
	// times the longest rule window: nothing may notify but the Watchdog,
	// which must (the dead man's switch hears the alerting path work).
	const window = time.Minute
	healthy := 3*window + 30*time.Second // + the ticket receiver's group_wait
	t.Logf("healthy stretch: %s with the workload on and no fault", healthy)
	time.Sleep(healthy)
	eachStack(t, "healthy", stacks, func(t *testing.T, a *promtest.Alerting) {
		watchdog := 0
		for _, n := range a.Receiver.Notifications() {
			if n.Receiver == "watchdog" && n.Labels["alertname"] == rules.WorkflowExporterWatchdog {
				watchdog++
				continue
			}
			t.Errorf("healthy stretch notified %s: %v", n.Receiver, n.Labels)
		}
		if watchdog == 0 {
			t.Errorf("healthy stretch: the Watchdog never reached its receiver")
		}
		runs[a].posts = lastPost(a.Receiver)
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

	// Phase 1: every lane fault at once, each on its own lane.
	injected := map[string]time.Time{}
	injectFaults(ctx, t, s, laneCases, injected)
	eachStack(t, "lane-faults", stacks, func(t *testing.T, a *promtest.Alerting) {
		r := runs[a]
		maps.Copy(r.took, waitForMatrix(t, a.Receiver, r.watch, laneCases, injected, 4*time.Minute))
		// The duplicate delivery is visible in the metrics, and is not an
		// alert: the protection is working.
		if ran[sim.FaultDuplicateDelivery] {
			if v := promQuery(t, a.Prometheus.URL, `sum(increase(workflow_inbox_messages_processed_total{message_type="dupmsg.validated", status="IGNORED_DUPLICATE"}[3m]))`); v <= 0 {
				t.Errorf("duplicate-delivery: no IGNORED_DUPLICATE messages counted (got %v)", v)
			}
		}
		// So is a BPMN error: a business outcome the process models, counted
		// per topic, never an incident or a failure.
		if ran[sim.FaultBPMNError] {
			if v := promQuery(t, a.Prometheus.URL, `sum(increase(camunda_external_task_bpmn_errors_total{topic="sim.bpmnerror"}[3m]))`); v <= 0 {
				t.Errorf("bpmn-error: no BPMN errors counted on topic sim.bpmnerror (got %v)", v)
			}
		}
		checkOneNotificationPerFault(t, a.Receiver, r.watch, laneCases, r.posts)
		r.posts = lastPost(a.Receiver)
	})

	// Phase 2: the exporter loses a database and the engine. Each outage is
	// one page; it may mute every lane of its source, by design.
	injectFaults(ctx, t, s, exporterCases, injected)
	eachStack(t, "exporter-faults", stacks, func(t *testing.T, a *promtest.Alerting) {
		r := runs[a]
		if len(exporterCases) > 0 {
			maps.Copy(r.took, waitForMatrix(t, a.Receiver, r.watch, exporterCases, injected, 3*time.Minute))
			checkOneNotificationPerFault(t, a.Receiver, r.watch, exporterCases, r.posts)
		}

		// Every alert Alertmanager holds is of the bundle and routed to the
		// receiver of its severity.
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

	// The measured times, as docs/alerts.md quotes them: per stack and
	// fault, the alerts firing, the one notified and when.
	for _, a := range stacks {
		r := runs[a]
		var b strings.Builder
		b.WriteString("\n| failure window | fault | alerts firing (Alertmanager) | notified | receiver | injection to notification |\n|---|---|---|---|---|---|\n")
		for _, c := range append(laneCases, exporterCases...) {
			if c.fault == "" {
				continue
			}
			var firing []string
			for _, name := range c.alerts {
				switch st := r.watch.seen[c.target+"/"+name]; {
				case name == c.notify:
					firing = append(firing, "`"+name+"`")
				case st != nil && st.inhibited:
					firing = append(firing, "`"+name+"` (inhibited)")
				default:
					al, _ := rules.Lookup(name)
					firing = append(firing, "`"+name+"` ("+al.Severity+")")
				}
			}
			if c.notify == "" {
				fmt.Fprintf(&b, "| %s | `%s` | none (by design) | none | | |\n", c.window, c.fault)
				continue
			}
			al, _ := rules.Lookup(c.notify)
			fmt.Fprintf(&b, "| %s | `%s` | %s | `%s` | %s | %s |\n", c.window, c.fault, strings.Join(firing, ", "), c.notify,
				receiverFor(al.Severity), r.took[c.target].Round(time.Second))
		}
		t.Logf("alert matrix, %s stack (rules rendered from matrixAlertsConfig; scrape and evaluation every 1s; exporter min_interval 1s; worker lock 20s; shipped Alertmanager routing and inhibition):%s", a.Flavor.Name, b.String())
		if t.Failed() {
			t.Logf("notifications (%s):", a.Flavor.Name)
			for _, n := range a.Receiver.Notifications() {
				if n.Receiver != "watchdog" {
					t.Logf("  #%d %s %s %s %v", n.Post, n.At.Format(time.TimeOnly), n.Receiver, n.Status, n.Labels)
				}
			}
		}
	}
	if t.Failed() {
		t.Logf("simulator log:\n%s", simLog.String())
	}
}

// injectFaults injects the fault of every case that has one and notes
// when, by target, in injected: the start of each case's wait for its
// notification.
func injectFaults(ctx context.Context, t *testing.T, s *sim.Simulator, cases []matrixCase, injected map[string]time.Time) {
	t.Helper()
	for _, c := range cases {
		if c.fault == "" {
			continue
		}
		if err := s.Inject(ctx, c.fault, c.target); err != nil {
			t.Fatal(err)
		}
		injected[c.target] = time.Now()
	}
}

// eachStack runs fn on every stack at once (promtest.Each) as the subtests
// PHASE/debian and PHASE/current.
func eachStack(t *testing.T, phase string, stacks []*promtest.Alerting, fn func(t *testing.T, a *promtest.Alerting)) {
	t.Helper()
	t.Run(phase, func(t *testing.T) { promtest.Each(t, stacks, fn) })
}

// lastPost is the number of the last webhook request the receiver got.
func lastPost(hook *promtest.Receiver) int {
	last := 0
	for _, n := range hook.Notifications() {
		last = max(last, n.Post)
	}
	return last
}

// firingPosts returns, per owner, the firing notifications (webhook
// requests) after the request numbered after, leaving out the Watchdog's;
// a notification whose alerts belong to more than one owner is an error.
func firingPosts(t *testing.T, hook *promtest.Receiver, after int) map[string][][]promtest.Notification {
	t.Helper()
	byPost := map[int][]promtest.Notification{}
	var order []int
	for _, n := range hook.Notifications() {
		if n.Post <= after || n.Receiver == "watchdog" || n.PostStatus != "firing" {
			continue
		}
		if _, ok := byPost[n.Post]; !ok {
			order = append(order, n.Post)
		}
		byPost[n.Post] = append(byPost[n.Post], n)
	}
	out := map[string][][]promtest.Notification{}
	for _, p := range order {
		ns := byPost[p]
		owners := map[string]bool{}
		for _, n := range ns {
			owners[ownerOf(n.Labels)] = true
		}
		if len(owners) != 1 {
			t.Errorf("notification #%d to %s holds the alerts of %d lanes %v: %v", p, ns[0].Receiver, len(owners), owners, ns)
			continue
		}
		owner := ownerOf(ns[0].Labels)
		out[owner] = append(out[owner], ns)
	}
	return out
}

// checkOneNotificationPerFault asserts point 1 of the on-call path for the
// cases: per fault exactly one firing notification, at the receiver of the
// notified alert's severity, holding only that alert of the fault's lane,
// with the lane's labels; the fault's other alerts seen in Alertmanager,
// inhibited unless info; no notification and no alert for anything else.
func checkOneNotificationPerFault(t *testing.T, hook *promtest.Receiver, watch *matrixWatch, cases []matrixCase, after int) {
	t.Helper()
	posts := firingPosts(t, hook, after)
	targets := map[string]bool{}
	for _, c := range cases {
		targets[c.target] = true
		got := posts[c.target]
		delete(posts, c.target)
		if c.notify == "" {
			for _, ns := range got {
				t.Errorf("%s (fault %q): notified %s, want nothing: %v", c.target, c.fault, ns[0].Receiver, ns[0].Labels)
			}
		} else {
			al, _ := rules.Lookup(c.notify)
			if len(got) != 1 {
				t.Errorf("%s (fault %s): %d notifications, want exactly one (%s at %s)", c.target, c.fault, len(got), c.notify, receiverFor(al.Severity))
				for _, ns := range got {
					t.Logf("  #%d to %s: %d alerts, first %v", ns[0].Post, ns[0].Receiver, len(ns), ns[0].Labels)
				}
			}
			for _, ns := range got {
				if ns[0].Receiver != receiverFor(al.Severity) {
					t.Errorf("%s (fault %s): notification #%d reached %s, want %s", c.target, c.fault, ns[0].Post, ns[0].Receiver, receiverFor(al.Severity))
				}
				for _, n := range ns {
					if n.Labels["alertname"] != c.notify || n.Labels["severity"] != al.Severity {
						t.Errorf("%s (fault %s): notification #%d holds %s (severity %q), want only %s (%s)", c.target, c.fault, n.Post, n.Labels["alertname"], n.Labels["severity"], c.notify, al.Severity)
					}
					for k, v := range c.labels {
						if n.Labels[k] != v {
							t.Errorf("%s (fault %s): notification #%d: label %s=%q, want %q (the lane's): %v", c.target, c.fault, n.Post, k, n.Labels[k], v, n.Labels)
						}
					}
				}
			}
		}
		for _, a := range c.alerts {
			st := watch.seen[c.target+"/"+a]
			al, _ := rules.Lookup(a)
			switch {
			case st == nil:
				t.Errorf("%s (fault %s on %s) never showed in Alertmanager", a, c.fault, c.target)
			case a != c.notify && al.Severity != rulefile.Info && !st.inhibited:
				t.Errorf("%s (fault %s on %s) was never inhibited in Alertmanager: it must be muted by %s", a, c.fault, c.target, c.notify)
			}
		}
	}
	for owner, got := range posts {
		if targets[owner] {
			continue
		}
		for _, ns := range got {
			t.Errorf("unexpected notification #%d to %s for %q: %v", ns[0].Post, ns[0].Receiver, owner, ns[0].Labels)
		}
	}
	// Nothing fires in Alertmanager for a lane but the alerts of its fault.
	expected := map[string]bool{}
	for _, c := range cases {
		for _, a := range c.alerts {
			expected[c.target+"/"+a] = true
		}
	}
	for k := range watch.seen {
		owner, _, _ := strings.Cut(k, "/")
		if targets[owner] && !expected[k] {
			t.Errorf("%s fired in Alertmanager; not an alert of the lane's fault", k)
		}
	}
}

// waitForMatrix waits until the notified alert of every case has reached a
// receiver and every alert of the cases has shown in Alertmanager, then
// waits out the ticket route's group_wait so that whatever else Alertmanager
// had to send has arrived. It returns, per target, the time from injection
// to the first firing notification.
func waitForMatrix(t *testing.T, hook *promtest.Receiver, watch *matrixWatch, cases []matrixCase, injected map[string]time.Time, bound time.Duration) map[string]time.Duration {
	t.Helper()
	took := map[string]time.Duration{}
	done := func() bool {
		for _, c := range cases {
			if _, ok := took[c.target]; !ok && c.notify != "" {
				return false
			}
			for _, a := range c.alerts {
				if watch.seen[c.target+"/"+a] == nil {
					return false
				}
			}
		}
		return true
	}
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		watch.poll(t)
		for _, n := range hook.Notifications() {
			if n.Status != "firing" || n.Receiver == "watchdog" {
				continue
			}
			owner := ownerOf(n.Labels)
			at, ok := injected[owner]
			if _, seen := took[owner]; seen || !ok || n.At.Before(at) {
				continue
			}
			for _, c := range cases {
				if c.target == owner && c.notify == n.Labels["alertname"] {
					took[owner] = n.At.Sub(at)
				}
			}
		}
		if done() {
			break
		}
		time.Sleep(time.Second)
	}
	// Let the stragglers of the same groups arrive (and keep watching
	// Alertmanager meanwhile), then report what is missing.
	for end := time.Now().Add(35 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		watch.poll(t)
	}
	for _, c := range cases {
		if _, ok := took[c.target]; !ok && c.notify != "" {
			t.Errorf("%s (fault %s on %s) did not reach Alertmanager's receiver within %s", c.notify, c.fault, c.target, bound)
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
	if _, err := fmt.Sscan(fmt.Sprint(out.Data.Result[0].Value[1]), &v); err != nil {
		return 0
	}
	return v
}
