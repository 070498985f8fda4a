package alertrouting

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/eventrecorder"
	"github.com/prometheus/alertmanager/inhibit"
	"github.com/prometheus/alertmanager/provider/mem"
	"github.com/prometheus/alertmanager/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
)

// exporterLabels are the target labels every alert of one exporter carries.
func withExporter(ls model.LabelSet) model.LabelSet {
	out := model.LabelSet{"job": "workflow-exporter", "instance": "exporter:7840"}
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
		if err := alerts.Put(ctx, &types.Alert{
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
		// the same database seen by another exporter instance
		func() model.LabelSet {
			ls := alert("WorkflowOutboxBacklogStalled", "critical", model.LabelSet{"database": "orders"})
			ls["instance"] = "exporter-b:7840"
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
