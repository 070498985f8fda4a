package alertrouting

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	amalert "github.com/prometheus/alertmanager/alert"
	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/alertmanager/provider/mem"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
)

// withExporter adds the target labels every alert of one exporter carries:
// its job and, deployed by the chart, its namespace (the rules merge its
// replicas, so no instance or pod).
func withExporter(ls model.LabelSet) model.LabelSet {
	out := model.LabelSet{"job": "workflow-exporter", "namespace": "monitoring"}
	for k, v := range ls {
		out[k] = v
	}
	return out
}

// startInhibitor runs Alertmanager's own inhibitor over deploy/alertmanager.yml
// with the given firing alerts and returns its Mutes function once every
// source alert has been taken in.
func startInhibitor(t *testing.T, firing ...model.LabelSet) func(model.LabelSet) bool {
	t.Helper()
	cfg := loadAlertmanager(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logger := slog.New(slog.DiscardHandler)
	// No per-alert-name limit (0) and no feature flags (nil), as
	// Alertmanager runs with deploy/alertmanager.yml and default flags.
	alerts, err := mem.NewAlerts(ctx, time.Hour, 0, nil, logger, eventrecorder.NopRecorder(), prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(alerts.Close)
	ih := inhibit.NewInhibitor(alerts, cfg.InhibitRules, logger, eventrecorder.NopRecorder())
	go ih.Run()
	t.Cleanup(ih.Stop)

	now := time.Now()
	for _, ls := range firing {
		if err := alerts.Put(ctx, &amalert.Alert{
			Alert:     model.Alert{Labels: ls, StartsAt: now.Add(-10 * time.Minute), EndsAt: now.Add(time.Hour)},
			UpdatedAt: now,
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The inhibitor takes alerts in asynchronously: wait until its cache
	// holds them all. A data alert that each source must mute is the probe;
	// each case then also checks targets that must not be muted.
	return func(ls model.LabelSet) bool { return ih.Mutes(ctx, ls) }
}

// waitMuted polls until lset is muted or the deadline passes.
func waitMuted(t *testing.T, mutes func(model.LabelSet) bool, lset model.LabelSet) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if mutes(lset) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// sourceDown returns WorkflowExporterSourceDown's labels as the rule produces
// them (see alerts/tests/exporter.yml, which asserts exactly these labels).
func sourceDown(source, name, collector string) model.LabelSet {
	ls := withExporter(model.LabelSet{
		"alertname": "WorkflowExporterSourceDown",
		"severity":  "warning",
		"source":    model.LabelValue(source),
		"name":      model.LabelValue(name),
	})
	switch source {
	case "database":
		ls["database"] = model.LabelValue(name)
	case "camunda":
		ls["engine"] = model.LabelValue(name)
	case "delivery":
		ls["delivery"] = model.LabelValue(name)
	}
	if collector != "" {
		ls["collector"] = model.LabelValue(collector)
	}
	return ls
}

func alert(name, severity string, ls model.LabelSet) model.LabelSet {
	out := withExporter(ls)
	out["alertname"] = model.LabelValue(name)
	out["severity"] = model.LabelValue(severity)
	return out
}

func TestDatabaseDownMutesOnlyThatDatabasesAlerts(t *testing.T) {
	mutes := startInhibitor(t, sourceDown("database", "orders", ""))
	stalled := alert("WorkflowOutboxBacklogStalled", "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "OrderFulfillmentSubmitted"})
	if !waitMuted(t, mutes, stalled) {
		t.Fatal("WorkflowOutboxBacklogStalled of database orders is not muted while orders is down")
	}
	for _, ls := range []model.LabelSet{
		alert("WorkflowCompletedSideEffectTaskOpen", "warning", model.LabelSet{"database": "orders", "engine": "main", "scope": "S", "topic": "t"}),
		alert("WorkflowInboxBacklogOld", "warning", model.LabelSet{"database": "orders", "source_system": "billing", "message_type": "m", "status": "RECEIVED"}),
	} {
		if !mutes(ls) {
			t.Errorf("%v: not muted while database orders is down", ls)
		}
	}
	for _, ls := range []model.LabelSet{
		// another database
		alert("WorkflowOutboxBacklogStalled", "critical", model.LabelSet{"database": "billing", "aggregate_type": "Invoice", "event_type": "InvoiceIssued"}),
		// Camunda alerts carry no database label: a database outage must not mute them
		alert("CamundaExternalTaskRetryStorm", "warning", model.LabelSet{"engine": "main", "topic": "t"}),
		alert("CamundaIncidentsOpen", "warning", model.LabelSet{"engine": "main", "incident_type": "failedJob"}),
		alert("WorkflowExporterDown", "warning", nil),
		// the same database name seen by another exporter (another namespace)
		func() model.LabelSet {
			ls := alert("WorkflowOutboxBacklogStalled", "critical", model.LabelSet{"database": "orders"})
			ls["namespace"] = "staging"
			return ls
		}(),
		// the outage alert itself stays visible
		sourceDown("database", "orders", ""),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted by the outage of database orders, must not be", ls)
		}
	}
}

func TestEngineDownMutesThatEnginesAlerts(t *testing.T) {
	mutes := startInhibitor(t, sourceDown("camunda", "main", ""))
	storm := alert("CamundaExternalTaskRetryStorm", "warning", model.LabelSet{"engine": "main", "topic": "fulfillment.submit-command"})
	if !waitMuted(t, mutes, storm) {
		t.Fatal("CamundaExternalTaskRetryStorm of engine main is not muted while main is down")
	}
	// the joined table alerts depend on the engine too
	for _, ls := range []model.LabelSet{
		alert("WorkflowCompletedSideEffectTaskOpen", "warning", model.LabelSet{"database": "orders", "engine": "main", "scope": "S", "topic": "t"}),
		alert("WorkflowProcessedJobTaskOpen", "warning", model.LabelSet{"database": "orders", "engine": "main", "activity_id": "a"}),
	} {
		if !mutes(ls) {
			t.Errorf("%v: not muted while engine main is down", ls)
		}
	}
	for _, ls := range []model.LabelSet{
		alert("CamundaExternalTaskRetryStorm", "warning", model.LabelSet{"engine": "other", "topic": "t"}),
		// table alerts without an engine label are not Camunda's
		alert("WorkflowOutboxBacklogStalled", "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "E"}),
		alert("WorkflowExporterDown", "warning", nil),
		sourceDown("camunda", "main", ""),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted by the outage of engine main, must not be", ls)
		}
	}
}

// A delivery that cannot be compared mutes its own alerts, not another
// delivery's, and no database's; a database's outage does not mute a
// delivery's alerts either (the delivery's series are absent then, and its
// alerts cannot start).
func TestDeliveryDownMutesThatDeliverysAlerts(t *testing.T) {
	mutes := startInhibitor(t, sourceDown("delivery", "orders-billing", ""), sourceDown("database", "billing", ""))
	lost := alert("WorkflowDeliveryEventsLost", "critical", model.LabelSet{"delivery": "orders-billing", "event_type": "OrderPlaced"})
	if !waitMuted(t, mutes, lost) {
		t.Fatal("WorkflowDeliveryEventsLost of delivery orders-billing is not muted while the delivery is down")
	}
	if !mutes(alert("WorkflowDeliveryDuplicateReceipts", "warning", model.LabelSet{"delivery": "orders-billing", "event_type": "OrderPaid"})) {
		t.Error("WorkflowDeliveryDuplicateReceipts of delivery orders-billing is not muted while the delivery is down")
	}
	for _, ls := range []model.LabelSet{
		alert("WorkflowDeliveryEventsLost", "critical", model.LabelSet{"delivery": "quotes", "event_type": "QuoteApproved"}),
		alert("WorkflowOutboxBacklogStalled", "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "OrderPlaced"}),
		sourceDown("delivery", "orders-billing", ""),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted by the outage of delivery orders-billing, must not be", ls)
		}
	}
}

// A single failing collector (say, the outbox table was renamed) mutes
// nothing: the database's other collectors still report real problems.
func TestCollectorDownMutesNothing(t *testing.T) {
	mutes := startInhibitor(t, sourceDown("database", "orders", "outbox"), sourceDown("database", "probe", ""))
	// make sure both source alerts were taken in before checking for silence
	if !waitMuted(t, mutes, alert("WorkflowInboxBacklogOld", "warning", model.LabelSet{"database": "probe"})) {
		t.Fatal("probe alert not muted: inhibitor did not take in the source alerts")
	}
	for _, ls := range []model.LabelSet{
		alert("WorkflowInboxBacklogOld", "warning", model.LabelSet{"database": "orders", "source_system": "billing", "message_type": "m", "status": "RECEIVED"}),
		alert("WorkflowOutboxOldestEventTooOld", "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "E"}),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted by a single failing collector, must not be", ls)
		}
	}
}

// laneRule is one of deploy/alertmanager.yml's inhibit rules between the
// alerts of a lane, read back as rules.Inhibitions() states them.
type laneRule struct {
	source  string
	targets []string
	equal   []string
}

// laneRules returns the inhibit rules whose source is not an outage, with
// the alerts of the rule files their target matchers select.
func laneRules(t *testing.T) []laneRule {
	t.Helper()
	cfg := loadAlertmanager(t)
	var out []laneRule
	for _, ir := range cfg.InhibitRules {
		var source string
		slo := false
		for _, m := range ir.SourceMatchers {
			if m.Name == "alertname" && m.Type == labels.MatchEqual {
				source = m.Value
			}
			slo = slo || m.Name == "alertname" && m.Type == labels.MatchRegexp && strings.HasPrefix(m.Value, "WorkflowSLO")
		}
		if slo {
			continue // the SLOs' page over ticket: TestSLOPageMutesItsTicketOnly
		}
		if source == "" {
			t.Errorf("inhibit rule %v: its source is not one alert by name", ir.SourceMatchers)
			continue
		}
		if source == rules.WorkflowExporterDown || source == rules.WorkflowExporterSourceDown {
			continue // the outages: tested below by Alertmanager's inhibitor
		}
		lr := laneRule{source: source, equal: slices.Sorted(slices.Values(ir.Equal))}
		for _, r := range loadAlerts(t) {
			if labels.Matchers(ir.TargetMatchers).Matches(model.LabelSet{"alertname": model.LabelValue(r.Alert)}) {
				lr.targets = append(lr.targets, r.Alert)
			}
		}
		out = append(out, lr)
	}
	return out
}

// TestLaneInhibitionsAreTheRulesList: the inhibit rules between the alerts
// of a lane are exactly rules.Inhibitions(): the same roots, the same
// consequences, compared on the same lane labels. A root has one rule per
// set of lane labels it compares (WorkflowIdempotencyInDoubt: the topic's
// lock alerts, and the scope's stale records).
func TestLaneInhibitionsAreTheRulesList(t *testing.T) {
	key := func(source string, equal []string) string {
		return source + " equal " + strings.Join(slices.Sorted(slices.Values(equal)), ",")
	}
	got := map[string]laneRule{}
	for _, lr := range laneRules(t) {
		k := key(lr.source, lr.equal)
		if _, dup := got[k]; dup {
			t.Errorf("%s: two inhibit rules; keep one per root cause and lane", k)
		}
		got[k] = lr
	}
	for _, in := range rules.Inhibitions() {
		k := key(in.Source, in.Equal)
		lr, ok := got[k]
		if !ok {
			t.Errorf("%s: no inhibit rule in deploy/alertmanager.yml for rules.Inhibitions()", k)
			continue
		}
		delete(got, k)
		if want := slices.Sorted(slices.Values(in.Targets)); !slices.Equal(lr.targets, want) {
			t.Errorf("%s mutes %v, rules.Inhibitions() says %v", in.Source, lr.targets, want)
		}
		if want := slices.Sorted(slices.Values(in.Equal)); !slices.Equal(lr.equal, want) {
			t.Errorf("%s: equal %v, rules.Inhibitions() says %v", in.Source, lr.equal, want)
		}
	}
	for s := range got {
		t.Errorf("%s: inhibit rule not in rules.Inhibitions()", s)
	}
}

// forOf returns the for: of every rule of each alert of the rule files.
func forOf(t *testing.T) map[string][]time.Duration {
	t.Helper()
	out := map[string][]time.Duration{}
	for _, r := range loadAlerts(t) {
		var d time.Duration
		if r.For != "" {
			md, err := model.ParseDuration(r.For)
			if err != nil {
				t.Fatalf("%s: for %q: %v", r.Alert, r.For, err)
			}
			d = time.Duration(md)
		}
		out[r.Alert] = append(out[r.Alert], d)
	}
	return out
}

// TestConsequenceWaitsAtLeastAsLongAsItsRoot is the static check of the
// shipped files: inhibition only mutes a consequence whose root cause is
// already firing when the consequence's notification is due, so no
// consequence's for: is shorter than its root's (today's crash: the lock and
// duplicate alerts must not fire at once while the lost completion waits).
func TestConsequenceWaitsAtLeastAsLongAsItsRoot(t *testing.T) {
	fors := forOf(t)
	for _, lr := range laneRules(t) {
		if len(fors[lr.source]) == 0 {
			t.Errorf("%s: inhibits, but is in no rule file", lr.source)
			continue
		}
		root := slices.Max(fors[lr.source])
		for _, target := range lr.targets {
			if c := slices.Min(fors[target]); c < root {
				t.Errorf("%s waits %s, shorter than %s of its root cause %s: it would notify before the root fires and mutes it", target, c, root, lr.source)
			}
		}
	}
}

// topicAlert is an alert of a topic of engine main.
func topicAlert(name, severity, topic string, extra model.LabelSet) model.LabelSet {
	ls := model.LabelSet{"engine": "main", "topic": model.LabelValue(topic)}
	for k, v := range extra {
		ls[k] = v
	}
	return alert(name, severity, ls)
}

// A worker crash after its side effect: the lost completion mutes the
// processed-job, lapsed-lock and redelivery alerts of its topic and not of
// another topic, and not another topic's root either.
func TestRootCauseMutesOnlyItsOwnLane(t *testing.T) {
	join := model.LabelSet{"database": "orders", "scope": "SUBMIT"}
	mutes := startInhibitor(t,
		topicAlert(rules.WorkflowCompletedSideEffectTaskOpen, "critical", "crash", join),
		topicAlert(rules.WorkflowIdempotencyInDoubt, "critical", "slow", join),
		alert(rules.WorkflowOutboxBacklogStalled, "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "Submitted"}))
	lock := topicAlert(rules.CamundaExternalTaskLockExpirations, "warning", "crash", nil)
	if !waitMuted(t, mutes, lock) {
		t.Fatal("the lapsed locks of the crashed topic are not muted by its lost completion")
	}
	for _, ls := range []model.LabelSet{
		topicAlert(rules.WorkflowProcessedJobTaskOpen, "critical", "crash", model.LabelSet{"database": "orders", "activity_id": "submit"}),
		topicAlert(rules.CamundaExternalTaskDuplicateExecution, "info", "crash", nil),
		topicAlert(rules.CamundaExternalTaskLockExpirations, "warning", "slow", nil),
		topicAlert(rules.CamundaExternalTaskDuplicateExecution, "info", "slow", nil),
		// the in-doubt records of the slow topic's scope go stale too
		alert(rules.WorkflowIdempotencyStaleInProgress, "warning", model.LabelSet{"database": "orders", "scope": "SUBMIT", "status": "STARTED"}),
		alert(rules.WorkflowOutboxOldestEventTooOld, "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "Submitted"}),
	} {
		if !mutes(ls) {
			t.Errorf("%v: not muted by its lane's root cause", ls)
		}
	}
	for _, ls := range []model.LabelSet{
		// the same alerts on a topic with no root cause firing
		topicAlert(rules.CamundaExternalTaskLockExpirations, "warning", "other", nil),
		topicAlert(rules.WorkflowProcessedJobTaskOpen, "critical", "other", model.LabelSet{"database": "orders", "activity_id": "submit"}),
		// the same topic name on another engine
		alert(rules.CamundaExternalTaskLockExpirations, "warning", model.LabelSet{"engine": "second", "topic": "crash"}),
		// roots of other lanes, and the roots themselves
		topicAlert(rules.WorkflowIdempotencyInDoubt, "critical", "crash", join),
		topicAlert(rules.WorkflowCompletedSideEffectTaskOpen, "critical", "slow", join),
		topicAlert(rules.CamundaExternalTaskBacklogStalled, "critical", "crash", nil),
		// stale records of another scope, or of the same scope in another database
		alert(rules.WorkflowIdempotencyStaleInProgress, "warning", model.LabelSet{"database": "orders", "scope": "QUOTE", "status": "STARTED"}),
		alert(rules.WorkflowIdempotencyStaleInProgress, "warning", model.LabelSet{"database": "billing", "scope": "SUBMIT", "status": "STARTED"}),
		// another event type's age page
		alert(rules.WorkflowOutboxOldestEventTooOld, "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "Cancelled"}),
		alert(rules.WorkflowOutboxBacklogStalled, "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "Submitted"}),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted, but no root cause of its own lane fires", ls)
		}
	}
}

// A retry storm mutes the lapsed-lock and redelivery alerts of its topic:
// in a storm a retry's end of backoff can read as a lapse. Not another
// topic's, not its own topic's other alerts.
func TestRetryStormMutesItsTopicsLapses(t *testing.T) {
	mutes := startInhibitor(t, topicAlert(rules.CamundaExternalTaskRetryStorm, "warning", "storm", nil))
	if !waitMuted(t, mutes, topicAlert(rules.CamundaExternalTaskLockExpirations, "warning", "storm", nil)) {
		t.Fatal("the storm's lapsed locks are not muted")
	}
	if !mutes(topicAlert(rules.CamundaExternalTaskDuplicateExecution, "info", "storm", nil)) {
		t.Error("the storm's redeliveries are not muted")
	}
	for _, ls := range []model.LabelSet{
		topicAlert(rules.CamundaExternalTaskLockExpirations, "warning", "calm", nil),
		topicAlert(rules.CamundaExternalTaskRetriesExhausted, "warning", "storm", nil),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted by another lane's retry storm, or not a lapse", ls)
		}
	}
}

// An exporter Prometheus cannot scrape mutes every alert of the bundle from
// it, not another exporter's, not the watchdog, not other rules' alerts.
func TestExporterDownMutesItsAlerts(t *testing.T) {
	mutes := startInhibitor(t, alert(rules.WorkflowExporterDown, "critical", nil))
	stall := alert(rules.WorkflowOutboxBacklogStalled, "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "E"})
	if !waitMuted(t, mutes, stall) {
		t.Fatal("the outbox page of an exporter that is down is not muted")
	}
	other := alert(rules.WorkflowOutboxBacklogStalled, "critical", model.LabelSet{"database": "orders"})
	other["namespace"] = "staging"
	for _, ls := range []model.LabelSet{
		other,
		alert(rules.WorkflowExporterDown, "critical", nil),
		{"alertname": model.LabelValue(rules.WorkflowExporterWatchdog), "severity": "none"},
		alert("KubePodCrashLooping", "warning", nil),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted by the exporter's outage, must not be", ls)
		}
	}
}

// TestSLOPageMutesItsTicketOnly: the burn-rate alerts of render slos share
// a name per objective; the page mutes the same objective's ticket, and
// no other objective's.
func TestSLOPageMutesItsTicketOnly(t *testing.T) {
	const name = "WorkflowSLOPaymentTaskSuccessBudgetBurn"
	mutes := startInhibitor(t, alert(name, "critical", model.LabelSet{"slo": "payment-task-success"}))
	ticket := alert(name, "warning", model.LabelSet{"slo": "payment-task-success"})
	if !waitMuted(t, mutes, ticket) {
		t.Fatal("the objective's ticket is not muted by its page")
	}
	for _, other := range []model.LabelSet{
		alert("WorkflowSLOOutboxPublishDelayBudgetBurn", "warning", model.LabelSet{"slo": "outbox-publish-delay"}),
		alert(name, "critical", model.LabelSet{"slo": "payment-task-success"}),
		alert("WorkflowOutboxBacklogGrowing", "warning", model.LabelSet{"database": "orders"}),
	} {
		if mutes(other) {
			t.Errorf("%v muted by another objective's page", other)
		}
	}
}

// Lost events of a delivery mute the duplicates ticket of the same
// delivery and event type only.
func TestLostEventsMuteTheirDeliverysDuplicates(t *testing.T) {
	mutes := startInhibitor(t, alert(rules.WorkflowDeliveryEventsLost, "critical", model.LabelSet{"delivery": "orders-billing", "event_type": "OrderPlaced"}))
	dups := func(delivery, typ string) model.LabelSet {
		return alert(rules.WorkflowDeliveryDuplicateReceipts, "warning", model.LabelSet{"delivery": model.LabelValue(delivery), "event_type": model.LabelValue(typ)})
	}
	if !waitMuted(t, mutes, dups("orders-billing", "OrderPlaced")) {
		t.Fatal("the duplicates ticket of the delivery and type is not muted by its lost events")
	}
	for _, ls := range []model.LabelSet{
		dups("orders-billing", "OrderPaid"),
		dups("quotes", "OrderPlaced"),
		alert(rules.WorkflowDeliveryEventsLost, "critical", model.LabelSet{"delivery": "orders-billing", "event_type": "OrderPlaced"}),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted, but no root cause of its own lane fires", ls)
		}
	}
}

// An outbox relay that stopped: its page mutes the outbox's own pages of the
// same database (an outbox with status columns beside the relay), of every
// event type, and nothing of another database; the relay's own WAL page is
// not its consequence. While the database is down, both relay pages are
// muted like every alert on its data; a failing relay collector alone mutes
// nothing.
func TestRelayBehindMutesItsDatabasesOutboxPages(t *testing.T) {
	relay := model.LabelSet{"database": "orders", "slot": "outbox_relay"}
	mutes := startInhibitor(t, alert(rules.WorkflowOutboxRelayBehind, "critical", relay))
	stalled := alert(rules.WorkflowOutboxBacklogStalled, "critical", model.LabelSet{"database": "orders", "aggregate_type": "Order", "event_type": "Submitted"})
	if !waitMuted(t, mutes, stalled) {
		t.Fatal("the outbox stall of the relay's database is not muted by the relay's page")
	}
	if !mutes(alert(rules.WorkflowOutboxOldestEventTooOld, "critical", model.LabelSet{"database": "orders", "aggregate_type": "Quote", "event_type": "Approved"})) {
		t.Error("the outbox age page of another event type of the relay's database is not muted")
	}
	for _, ls := range []model.LabelSet{
		alert(rules.WorkflowOutboxBacklogStalled, "critical", model.LabelSet{"database": "billing", "aggregate_type": "Order", "event_type": "Submitted"}),
		alert(rules.WorkflowOutboxRelayWALAtRisk, "critical", model.LabelSet{"database": "orders", "slot": "outbox_relay", "status": "unreserved"}),
		alert(rules.WorkflowInboxBacklogOld, "critical", model.LabelSet{"database": "orders", "source_system": "broker", "message_type": "m"}),
	} {
		if mutes(ls) {
			t.Errorf("%v: muted by the relay's page", ls)
		}
	}

	down := startInhibitor(t, sourceDown("database", "orders", ""))
	if !waitMuted(t, down, alert(rules.WorkflowOutboxRelayBehind, "critical", relay)) {
		t.Error("the relay's page is not muted while its database is down")
	}
	if !down(alert(rules.WorkflowOutboxRelayWALAtRisk, "critical", relay)) {
		t.Error("the relay's WAL page is not muted while its database is down")
	}
	collector := startInhibitor(t, sourceDown("database", "orders", "outbox_relay"))
	time.Sleep(200 * time.Millisecond)
	if collector(alert(rules.WorkflowOutboxRelayWALAtRisk, "critical", relay)) {
		t.Error("a failing relay collector mutes the relay's alerts: only a whole source down does")
	}
}
