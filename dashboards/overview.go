package dashboards

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Selectors of the bundle's own firing alerts, by severity.
const (
	firingAlertsOfBundle   = `ALERTS{alertstate="firing",alertname=~"` + alertNamePattern + `"}`
	criticalAlertsOfBundle = `ALERTS{alertstate="firing",severity="` + rulefile.Critical + `",alertname=~"` + alertNamePattern + `"}`
	warningAlertsOfBundle  = `ALERTS{alertstate="firing",severity="` + rulefile.Warning + `",alertname=~"` + alertNamePattern + `"}`
)

// exporterTargetsUp is the scrape health (up) of the targets that are
// workflow exporters: up is kept only for targets that served build_info in
// the last day, so the All value of job does not pull in every target of the
// Prometheus server, and an exporter that went down is still shown (as 0).
func exporterTargetsUp() string {
	return "up{" + mJob + "," + mInstance + "} and on (job, instance, pod) max_over_time(" +
		sel(catalog.ExporterBuildInfo) + "[1d])"
}

// ageStat is a stat of the overview's first row: the age of the oldest
// item of series (the max over the selection), with the alerts config's
// thresholds, linking its detail dashboard.
func (d *board) ageStat(title, desc, series string, steps []step, drill string, runbooks ...string) {
	d.stat(panel{title: title, unit: "s", w: 3, desc: desc, targets: []target{{expr: "max(" + series + ")"}},
		steps: steps, drill: drill, runbooks: runbooks})
}

func overview(c rules.Config) *board {
	d := newBoard(c, UIDOverview, "Workflow overview",
		"On-call landing page of the workflow exporter: what is paging and why, which sources are down, and the trend of every backlog. Start here and follow the runbook links.",
		engineVar(), tenantVar(), databaseVar())

	// The first row answers "what pages, where": one stat per paging
	// signal, each linking its detail dashboard with the variables carried.
	d.row("What is paging and why")
	d.stat(panel{title: "Critical alerts firing", unit: "short", w: 3,
		desc:     "Alerts of this bundle with severity critical that are firing now (they page); the table below names them with their runbooks. 0 means none is firing, provided this Prometheus loads the rules of alerts/.",
		targets:  []target{{expr: "count(" + criticalAlertsOfBundle + ") or vector(0)"}},
		steps:    []step{{1, "red"}},
		runbooks: []string{rules.WorkflowOutboxBacklogStalled, rules.WorkflowOutboxOldestEventTooOld}})
	d.stat(panel{title: "Side effects in doubt", unit: "short", w: 3,
		desc:     "Idempotency records in progress whose external task's lock lapsed or moved to another worker: whether the side effect happened is unknown. Reconcile before any retry. 0 needs the databases and every engine up; No data means one is down.",
		targets:  []target{{expr: joinZeroWhenUp(sumBy(sel(catalog.IdempotencyInDoubt, mDatabase, mEngine)))}},
		steps:    []step{{1, "red"}},
		drill:    UIDIdempotency,
		runbooks: []string{rules.WorkflowIdempotencyInDoubt}})
	d.stat(panel{title: "Side effects done, task open", unit: "short", w: 3,
		desc:     "Idempotency records COMPLETED and processed-job rows whose external task is still open: the worker crashed after its side effect and the completion was lost. Complete the task with the stored result; never redo the side effect. 0 needs the databases and every engine up; No data means one is down.",
		targets:  []target{{expr: joinZeroWhenUp(sumBy(sel(catalog.IdempotencyCompletedTaskOpen, mDatabase, mEngine) + " or " + sel(catalog.ProcessedJobTaskOpen, mDatabase, mEngine)))}},
		steps:    []step{{1, "red"}},
		drill:    UIDIdempotency,
		runbooks: []string{rules.WorkflowCompletedSideEffectTaskOpen, rules.WorkflowProcessedJobTaskOpen}})
	d.ageStat("Outbox oldest pending age",
		"Age of the oldest unpublished outbox event over the selected databases, by the database clock: the paging signal. Orange past outbox.stalled_window, red past outbox.oldest_age of the alerts config. 0 means the outbox is drained. No data means the database source is down or not configured.",
		sel(catalog.OutboxOldestPendingAge, mDatabase), d.steps(d.outboxAgeSteps), UIDOutboxInbox, rules.WorkflowOutboxOldestEventTooOld, rules.WorkflowOutboxBacklogStalled)
	d.ageStat("Inbox oldest message age",
		"Age of the oldest inbox message waiting or in progress (UNKNOWN_OUTCOME aside) over the selected databases. Orange past inbox.stalled_window, red past inbox.oldest_age of the alerts config (WorkflowInboxBacklogOld pages). No data means the database source is down or has no inbox.",
		sel(catalog.InboxOldestMessageAge, mDatabase, `status!="`+vocab.StatusUnknownOutcome+`"`), d.steps(d.inboxAgeSteps), UIDOutboxInbox, rules.WorkflowInboxBacklogOld)
	d.ageStat("Oldest waiting external task",
		"Age of the oldest external task waiting to be fetched on the selected engines. Orange past camunda.backlog_stalled_age, red past it plus backlog_stalled_for: a topic no worker serves pages (if nothing completes or fails on it). No data means the engine is down.",
		sel(catalog.CamundaExternalTaskOldestWaitingAge, mEngine), d.steps(d.waitingAgeSteps), UIDExternalTask, rules.CamundaExternalTaskBacklogStalled)
	d.ageStat("Oldest executable job",
		"Since when the oldest async job that could run now has been due on the selected engines. Orange past camunda.job_executor_stalled_age, red past it plus job_executor_stalled_for: a job executor that runs nothing pages. No data means the engine is down.",
		sel(catalog.CamundaJobOldestExecutableAge, mEngine), d.steps(d.jobAgeSteps), UIDExternalTask, rules.CamundaJobExecutorStalled)
	d.downStat(sel(catalog.ExporterSourceUp), panel{title: "Sources down", w: 3,
		desc:     "Camunda engines, databases and deliveries the exporter could not read in its last collection. A down source drops its data series, so every other panel goes blank for it: blank is not healthy, and the pages on it are blind. No data here means the exporter itself is not scraped.",
		drill:    UIDExporter,
		runbooks: []string{rules.WorkflowExporterSourceDown, rules.WorkflowExporterDown}})

	d.firingAlerts()

	d.row("What files a ticket")
	d.stat(panel{title: "Warning alerts firing", unit: "short", w: 4,
		desc:    "Alerts of this bundle with severity warning that are firing now (they open tickets). 0 means none is firing, provided this Prometheus loads the rules of alerts/.",
		targets: []target{{expr: "count(" + warningAlertsOfBundle + ") or vector(0)"}},
		steps:   []step{{1, "orange"}}})
	d.downStat(sel(catalog.ExporterCollectorUp), panel{title: "Collectors failing", w: 4,
		desc:     "Collectors (one per table or Camunda query) whose last collection failed. Their series are absent until they succeed again.",
		drill:    UIDExporter,
		runbooks: []string{rules.WorkflowExporterSourceDown, rules.WorkflowExporterCollectorDown}})
	d.stat(panel{title: "Unknown outcomes", unit: "short", w: 4,
		desc: "Idempotency records and inbox messages in UNKNOWN_OUTCOME: the side effect may or may not have happened. Each needs reconciliation before a retry. No data means the database source is down.",
		targets: []target{{expr: sumBy(sel(catalog.IdempotencyRecords, mDatabase, `status="`+vocab.StatusUnknownOutcome+`"`) +
			" or " + sel(catalog.InboxMessages, mDatabase, `status="`+vocab.StatusUnknownOutcome+`"`))}},
		steps:    []step{{1, "orange"}},
		drill:    UIDIdempotency,
		runbooks: []string{rules.WorkflowUnknownOutcomeRecords}})
	d.stat(panel{title: "External tasks out of retries", unit: "short", w: 4,
		desc:     "Open external tasks with retries 0 (each is an incident in Camunda). No data means the engine is down.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaExternalTasks, mEngine, `state="`+vocab.StateRetriesExhausted+`"`))}},
		steps:    []step{{1, "orange"}},
		drill:    UIDExternalTask,
		runbooks: []string{rules.CamundaExternalTaskRetriesExhausted}})
	d.stat(panel{title: "Lock expirations", unit: "cpm", w: 4,
		desc:     "External task locks lapsing without complete, failure or extendLock, per minute: a worker died or is slower than its lock duration, and the task will run twice.",
		targets:  []target{{expr: "60 * " + sumBy(rate(catalog.CamundaExternalTaskLockExpirations, mEngine))}},
		steps:    []step{{0.01, "orange"}},
		drill:    UIDExternalTask,
		runbooks: []string{rules.CamundaExternalTaskLockExpirations}})
	d.stat(panel{title: "Outbox publish failures", unit: "cpm", w: 4,
		desc:     "Outbox events newly in a failed or dead status per minute over the selected databases (the rate at which the failed count grows). Above 0, a publisher keeps giving up on events.",
		targets:  []target{{expr: "60 * " + sumBy("clamp_min(deriv("+sel(catalog.OutboxEventsFailed, mDatabase)+rateInterval+"), 0)")}},
		steps:    []step{{0.01, "orange"}},
		drill:    UIDOutboxInbox,
		runbooks: []string{rules.WorkflowOutboxEventsFailed}})

	d.row("Sources")
	d.upStat(panel{title: "Sources", unit: "none", w: 8,
		desc:     "Every Camunda engine and database the exporter reads, UP or DOWN as of its last collection. A DOWN source has no data series: its panels stay blank until it is back.",
		targets:  []target{{expr: sel(catalog.ExporterSourceUp), legend: "{{source}} {{name}}"}},
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.upStat(panel{title: "Collectors", unit: "none", w: 8,
		desc:     "Every collector of every source, UP or DOWN as of its last collection. One DOWN collector hides only its own series.",
		targets:  []target{{expr: sel(catalog.ExporterCollectorUp), legend: "{{name}} {{collector}}"}},
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.upStat(panel{title: "Exporter scrape", unit: "none", w: 8,
		desc:       "Prometheus's own view (up) of each exporter target that served data in the last day, one per replica (pod). DOWN means Prometheus cannot scrape that replica; with every replica of an exporter DOWN, every panel of this bundle goes blank. Click an exporter for its status page: what is wrong, with the first rows of each problem.",
		targets:    []target{{expr: exporterTargetsUp(), legend: "{{instance}} {{pod}}"}},
		statusPage: true,
		runbooks:   []string{rules.WorkflowExporterDown}})

	d.row("Trends")
	d.series(panel{title: "Outbox oldest pending age", unit: "s",
		desc:      "Oldest unpublished outbox event per database. A line that climbs steadily means the publisher is stalled; a saw-tooth means it keeps up.",
		targets:   []target{{expr: "max by (database) (" + sel(catalog.OutboxOldestPendingAge, mDatabase) + ")", legend: "{{database}}"}},
		steps:     d.steps(d.outboxAgeSteps),
		overrides: d.overrides("{{database}}", d.outboxAgeSteps, rules.WorkflowOutboxOldestEventTooOld, rules.WorkflowOutboxBacklogStalled),
		runbooks:  []string{rules.WorkflowOutboxOldestEventTooOld, rules.WorkflowOutboxBacklogStalled}})
	d.series(panel{title: "External tasks by state", unit: "short", stack: true,
		desc:     "Open external tasks per engine and state (waiting, locked, retry_backoff, lock_expired, retries_exhausted, suspended); the states partition the open tasks.",
		targets:  []target{{expr: sumBy(sel(catalog.CamundaExternalTasks, mEngine), "engine", "state"), legend: "{{engine}} {{state}}"}},
		runbooks: []string{rules.CamundaExternalTaskBacklogStalled}})
	d.series(panel{title: "Idempotency records in progress", unit: "short",
		desc:     "Non-terminal idempotency records per database and status (" + strings.Join(vocab.IdempotencyOpenStatuses(), ", ") + ").",
		targets:  []target{{expr: sumBy(sel(catalog.IdempotencyRecords, mDatabase), "database", "status"), legend: "{{database}} {{status}}"}},
		runbooks: []string{rules.WorkflowIdempotencyStaleInProgress, rules.WorkflowUnknownOutcomeRecords}})
	d.series(panel{title: "Duplicate executions", unit: "ops",
		desc: "Per second: external tasks locked again after a lapsed lock (a duplicate execution happened) and duplicates the idempotency table absorbed. The second is the protection working; a rising trend is the smell.",
		targets: []target{
			{expr: sumBy(rate(catalog.CamundaExternalTaskRedeliveries, mEngine), "engine"), legend: "redelivered {{engine}}"},
			{expr: sumBy(rate(catalog.IdempotencyDuplicatesPrevented, mDatabase), "database"), legend: "duplicates prevented {{database}}"},
		},
		runbooks: []string{rules.CamundaExternalTaskLockExpirations, rules.WorkflowDuplicatePreventionSpike}})

	d.row("Runbooks")
	d.markdown("Runbooks", "Every alert of the bundle with its severity and runbook.", d.runbookIndex(), 24, 10)
	return d
}

// firingAlerts adds the table of firing alerts with severity and runbook link.
func (d *board) firingAlerts() {
	q := prometheus.NewDataqueryBuilder().
		Expr(firingAlertsOfBundle).
		RefId("A").
		Datasource(datasourceRef()).
		Instant().
		Format(prometheus.PromQueryFormatTable)
	severityColors := map[string]dashboard.ValueMappingResult{
		rulefile.Critical: {Color: ptr("red"), Index: ptr(int32(0))},
		rulefile.Warning:  {Color: ptr("orange"), Index: ptr(int32(1))},
		rulefile.Info:     {Color: ptr("blue"), Index: ptr(int32(2))},
	}
	d.b.WithPanel(table.NewPanelBuilder().
		Id(d.id()).
		Title("Firing alerts").
		Description("Alerts of this bundle firing now, from Prometheus's ALERTS series, with their labels. Click an alert name for its runbook. \"Nothing firing\" means Prometheus has no firing alert of this bundle; an alert cannot fire on a source that is down except WorkflowExporterSourceDown, so check the Sources row before trusting it.").
		Datasource(datasourceRef()).
		WithTarget(q).
		Unit("none").
		NoValue("Nothing firing").
		Footer(tableFooter()).
		WithTransformation(dashboard.DataTransformerConfig{
			Id: "organize",
			Options: map[string]any{
				"excludeByName": map[string]bool{"Time": true, "Value": true, "__name__": true, "alertstate": true},
				"indexByName":   map[string]int{"alertname": 0, "severity": 1},
			},
		}).
		OverrideByName("alertname", []dashboard.DynamicConfigValue{{
			Id: "links",
			Value: []map[string]any{{
				"title":       "Runbook for ${__value.raw}",
				"url":         d.runbookURL("${__value.raw}"),
				"targetBlank": true,
			}},
		}}).
		OverrideByName("severity", []dashboard.DynamicConfigValue{
			{Id: "mappings", Value: []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
				Type: dashboard.MappingTypeValueToText, Options: severityColors}}}},
			{Id: "custom.cellOptions", Value: map[string]string{"type": "color-background"}},
		}).
		Span(24).Height(8))
}

func (d *board) runbookIndex() string {
	var b strings.Builder
	b.WriteString("| Alert | Severity | Runbook |\n|---|---|---|\n")
	for _, a := range alertsPagesFirst() {
		fmt.Fprintf(&b, "| %s | %s | [%s.md](%s) |\n", a.Name, a.Severity, a.Name, d.runbookURL(a.Name))
	}
	return b.String()
}
