package rules

import (
	"fmt"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// Alert names. Each names its runbook too: docs/runbooks/<name>.md.
const (
	WorkflowOutboxBacklogStalled          = "WorkflowOutboxBacklogStalled"
	WorkflowOutboxOldestEventTooOld       = "WorkflowOutboxOldestEventTooOld"
	WorkflowOutboxEventsFailed            = "WorkflowOutboxEventsFailed"
	WorkflowOutboxBacklogGrowing          = "WorkflowOutboxBacklogGrowing"
	WorkflowOutboxEventsRetrying          = "WorkflowOutboxEventsRetrying"
	WorkflowOutboxRelayBehind             = "WorkflowOutboxRelayBehind"
	WorkflowOutboxRelayWALAtRisk          = "WorkflowOutboxRelayWALAtRisk"
	WorkflowInboxBacklogStalled           = "WorkflowInboxBacklogStalled"
	WorkflowInboxBacklogGrowing           = "WorkflowInboxBacklogGrowing"
	WorkflowInboxBacklogOld               = "WorkflowInboxBacklogOld"
	WorkflowInboxMessagesRetrying         = "WorkflowInboxMessagesRetrying"
	WorkflowInboxMessagesFailed           = "WorkflowInboxMessagesFailed"
	WorkflowDeliveryEventsLost            = "WorkflowDeliveryEventsLost"
	WorkflowDeliveryDuplicateReceipts     = "WorkflowDeliveryDuplicateReceipts"
	WorkflowUnknownOutcomeRecords         = "WorkflowUnknownOutcomeRecords"
	WorkflowIdempotencyStaleInProgress    = "WorkflowIdempotencyStaleInProgress"
	WorkflowIdempotencyConflicts          = "WorkflowIdempotencyConflicts"
	WorkflowCompletedSideEffectTaskOpen   = "WorkflowCompletedSideEffectTaskOpen"
	WorkflowIdempotencyInDoubt            = "WorkflowIdempotencyInDoubt"
	WorkflowProcessedJobTaskOpen          = "WorkflowProcessedJobTaskOpen"
	WorkflowDuplicatePreventionSpike      = "WorkflowDuplicatePreventionSpike"
	WorkflowDeduplicationWindowExceeded   = "WorkflowDeduplicationWindowExceeded"
	CamundaExternalTaskRetriesExhausted   = "CamundaExternalTaskRetriesExhausted"
	CamundaExternalTaskLockExpirations    = "CamundaExternalTaskLockExpirations"
	CamundaExternalTaskDuplicateExecution = "CamundaExternalTaskDuplicateExecution"
	CamundaExternalTaskRetryStorm         = "CamundaExternalTaskRetryStorm"
	CamundaExternalTaskBacklogStalled     = "CamundaExternalTaskBacklogStalled"
	CamundaIncidentsOpen                  = "CamundaIncidentsOpen"
	CamundaExternalTaskLockHeldTooLong    = "CamundaExternalTaskLockHeldTooLong"
	CamundaExternalTaskWorkerSilent       = "CamundaExternalTaskWorkerSilent"
	CamundaJobExecutorStalled             = "CamundaJobExecutorStalled"
	CamundaHistoryCleanupFailing          = "CamundaHistoryCleanupFailing"
	CamundaHistoryCleanupBehind           = "CamundaHistoryCleanupBehind"
	WorkflowExporterSourceDown            = "WorkflowExporterSourceDown"
	WorkflowExporterCollectorDown         = "WorkflowExporterCollectorDown"
	WorkflowExporterDown                  = "WorkflowExporterDown"
	WorkflowExporterTasksUnwatched        = "WorkflowExporterTasksUnwatched"
	WorkflowExporterHistoryReadsCut       = "WorkflowExporterHistoryReadsCut"
	WorkflowExporterLabelValuesFolded     = "WorkflowExporterLabelValuesFolded"
	WorkflowExporterWatchdog              = "WorkflowExporterWatchdog"
)

// Rule groups of the generated rule file.
const (
	GroupOutbox = "workflow-outbox"
	GroupInbox  = "workflow-inbox"
	// GroupDelivery: deliveries, outbox to inbox across databases.
	GroupDelivery    = "workflow-delivery"
	GroupIdempotency = "workflow-idempotency"
	GroupCamunda     = "camunda-external-tasks"
	GroupCamundaJobs = "camunda-jobs"
	// GroupCamundaHistory: history growth and the history cleanup.
	GroupCamundaHistory = "camunda-history"
	GroupExporter       = "workflow-exporter"
)

// The dashboards the alerts link to (their uids; the dashboards package
// builds them, and its tests check that each exists and has the variables
// DashboardVariables names).
const (
	DashboardOverview     = "workflow-overview"
	DashboardExternalTask = "camunda-external-tasks"
	DashboardOutboxInbox  = "workflow-outbox-inbox"
	DashboardIdempotency  = "workflow-idempotency"
	DashboardExporter     = "workflow-exporter"
)

// DashboardVariables returns the variables of a dashboard that an alert's
// link may set from its labels, besides job and instance, which every
// dashboard has.
func DashboardVariables(uid string) []string {
	switch uid {
	case DashboardOverview:
		return []string{"engine", catalog.TenantLabel, "database"}
	case DashboardExternalTask:
		return []string{"engine", catalog.TenantLabel, "topic"}
	case DashboardOutboxInbox:
		return []string{"database", "event_type", "delivery"}
	case DashboardIdempotency:
		return []string{"database", "scope"}
	}
	return nil
}

// Alert is one alert of the bundle.
type Alert struct {
	Name     string
	Severity string // rulefile.Critical, Warning, Info, or None (the watchdog)
	Group    string // its rule group in the generated rule file
	// Dashboard is the uid of the dashboard whose link the alert carries
	// (dashboard_url), with the variables of Lane it has set; "" for none.
	Dashboard string
	// Lane names the labels that tie a firing alert to the place it is
	// about (a topic of an engine, an event type of a database's outbox,
	// an idempotency scope): the labels its summary names, its dashboard
	// link sets, Alertmanager groups by and an inhibition compares. Some
	// alerts carry only some of them (WorkflowUnknownOutcomeRecords: a
	// scope, or an inbox's source system and message type).
	Lane []string
	// Summary is the alert's one line, templated with the Lane labels only
	// (never $value), so a pager's title says where.
	Summary string
}

var (
	outboxLane = []string{"database", "aggregate_type", "event_type"}
	relayLane  = []string{"database", "slot"}
	inboxLane  = []string{"database", "source_system", "message_type"}
	// deliveryLane: a delivery's alerts are per event type of the
	// delivery (the series' labels).
	deliveryLane  = []string{"delivery", "event_type"}
	scopeLane     = []string{"database", "scope"}
	topicLane     = []string{"engine", "topic"}
	joinLane      = []string{"database", "scope", "engine", "topic"}
	sourceLane    = []string{"source", "name", "database", "engine", "delivery", "collector"}
	relayWhere    = "Outbox relay of database {{ $labels.database }} (slot {{ $labels.slot }}): "
	outboxWhere   = "Outbox {{ $labels.aggregate_type }}/{{ $labels.event_type }} of database {{ $labels.database }}: "
	inboxWhere    = "Inbox {{ $labels.source_system }}/{{ $labels.message_type }} of database {{ $labels.database }}: "
	deliveryWhere = "Delivery {{ $labels.delivery }}, event type {{ $labels.event_type }}: "
	scopeWhere    = "Idempotency scope {{ $labels.scope }} of database {{ $labels.database }}: "
	topicWhere    = "Topic {{ $labels.topic }} of engine {{ $labels.engine }}: "
	sourceWhere   = "{{ $labels.source }} {{ $labels.name }}{{ with $labels.collector }} (collector {{ . }}){{ end }}"
)

// area is what the alerts about one kind of place share: their rule group,
// their dashboard, their lane and the opening of their summary, which names
// the place.
type area struct {
	group, dashboard string
	lane             []string
	where            string
}

// alert is one alert of the area; summary goes on from the area's opening.
func (a area) alert(name, severity, summary string) Alert {
	return Alert{name, severity, a.group, a.dashboard, a.lane, a.where + summary}
}

// Alerts returns every alert of the bundle, in the order of the generated
// rule file. It is the one list of alert names, severities, groups,
// dashboards and runbooks: the rule generator takes each rule's severity,
// group and summary from it, the dashboards link the runbooks of these
// alerts, and the routing tests (checks/alertrouting) check that the rule
// files hold exactly these alerts and that each reaches the receiver of its
// severity. A new alert is added here, with its rule in this package and
// its runbook in docs/runbooks/. docs/alerts.md gives the reason for each
// severity.
//
// The slice is a fresh copy on each call.
func Alerts() []Alert {
	engineLane := []string{"engine"}
	engineWhere := "Engine {{ $labels.engine }}: "
	outbox := area{GroupOutbox, DashboardOutboxInbox, outboxLane, outboxWhere}
	relay := area{GroupOutbox, DashboardOutboxInbox, relayLane, relayWhere}
	inbox := area{GroupInbox, DashboardOutboxInbox, inboxLane, inboxWhere}
	delivery := area{GroupDelivery, DashboardOutboxInbox, deliveryLane, deliveryWhere}
	scope := area{GroupIdempotency, DashboardIdempotency, scopeLane, scopeWhere}
	join := area{GroupIdempotency, DashboardIdempotency, joinLane, topicWhere}
	topic := area{GroupCamunda, DashboardExternalTask, topicLane, topicWhere}
	history := area{GroupCamundaHistory, DashboardExternalTask, engineLane, engineWhere}
	source := area{GroupExporter, DashboardExporter, sourceLane, "The exporter cannot read " + sourceWhere + ": "}
	exporterEngine := area{GroupExporter, DashboardExporter, engineLane, engineWhere}
	return []Alert{
		outbox.alert(WorkflowOutboxBacklogStalled, rulefile.Critical, "events wait and none is published"),
		outbox.alert(WorkflowOutboxOldestEventTooOld, rulefile.Critical, "the oldest pending event is older than consumers tolerate"),
		outbox.alert(WorkflowOutboxEventsFailed, rulefile.Warning, "events in a failed status will not be published without help"),
		outbox.alert(WorkflowOutboxBacklogGrowing, rulefile.Warning, "the publisher falls behind"),
		outbox.alert(WorkflowOutboxEventsRetrying, rulefile.Warning, "events are retried again and again and still not published"),
		relay.alert(WorkflowOutboxRelayBehind, rulefile.Critical, "outbox events wait and the relay has not confirmed them"),
		relay.alert(WorkflowOutboxRelayWALAtRisk, rulefile.Critical, "the WAL the relay needs is about to be removed, or gone"),

		inbox.alert(WorkflowInboxBacklogStalled, rulefile.Warning, "messages wait and none is processed"),
		inbox.alert(WorkflowInboxBacklogGrowing, rulefile.Warning, "the consumer falls behind"),
		inbox.alert(WorkflowInboxBacklogOld, rulefile.Critical, "messages have waited too long to be processed"),
		inbox.alert(WorkflowInboxMessagesRetrying, rulefile.Warning, "messages are retried again and again and still not processed"),
		inbox.alert(WorkflowInboxMessagesFailed, rulefile.Warning, "dead-lettered messages wait for an operator"),

		delivery.alert(WorkflowDeliveryEventsLost, rulefile.Critical, "published events never reached the consumer's inbox"),
		delivery.alert(WorkflowDeliveryDuplicateReceipts, rulefile.Warning, "the consumer receives events more than once, above the usual share"),

		{WorkflowUnknownOutcomeRecords, rulefile.Warning, GroupIdempotency, DashboardIdempotency, []string{"database", "scope", "source_system", "message_type"},
			"{{ if $labels.scope }}Idempotency scope {{ $labels.scope }}{{ else }}Inbox {{ $labels.source_system }}/{{ $labels.message_type }}{{ end }} of database {{ $labels.database }}: unknown outcomes wait for reconciliation"},
		scope.alert(WorkflowIdempotencyStaleInProgress, rulefile.Warning, "records stuck in {{ $labels.status }}"),
		scope.alert(WorkflowIdempotencyConflicts, rulefile.Warning, "one key is reused for different requests"),
		join.alert(WorkflowCompletedSideEffectTaskOpen, rulefile.Critical, "side effects done (scope {{ $labels.scope }}, database {{ $labels.database }}), their tasks still open"),
		join.alert(WorkflowIdempotencyInDoubt, rulefile.Critical, "side effects in progress (scope {{ $labels.scope }}, database {{ $labels.database }}) lost their lock: outcome in doubt"),
		{WorkflowProcessedJobTaskOpen, rulefile.Critical, GroupIdempotency, DashboardIdempotency, []string{"database", "engine", "topic", "activity_id"},
			topicWhere + "jobs recorded as processed (activity {{ $labels.activity_id }}, database {{ $labels.database }}), their tasks still open"},
		scope.alert(WorkflowDuplicatePreventionSpike, rulefile.Info, "duplicates absorbed rise above their baseline"),
		{WorkflowDeduplicationWindowExceeded, rulefile.Warning, GroupIdempotency, DashboardIdempotency,
			[]string{"database", "scope", "source_system", "engine", "topic", "message_type", "outbox_database"},
			"{{ if $labels.scope }}Idempotency scope {{ $labels.scope }}{{ else if $labels.source_system }}Inbox {{ $labels.source_system }}{{ else }}The inbox{{ end }} of database {{ $labels.database }}: " +
				"redeliveries can come from further back than the records retention leaves"},

		topic.alert(CamundaExternalTaskRetriesExhausted, rulefile.Warning, "tasks out of retries wait for an operator"),
		topic.alert(CamundaExternalTaskLockExpirations, rulefile.Warning, "task locks lapse before the workers finish"),
		topic.alert(CamundaExternalTaskDuplicateExecution, rulefile.Info, "tasks ran again after their locks lapsed"),
		topic.alert(CamundaExternalTaskRetryStorm, rulefile.Warning, "workers fail most tasks and the retries come back"),
		topic.alert(CamundaExternalTaskBacklogStalled, rulefile.Critical, "tasks wait and no worker completes or fails any"),
		{CamundaIncidentsOpen, rulefile.Warning, GroupCamunda, DashboardExternalTask, []string{"engine", "process_definition_key", "activity_id", "incident_type"},
			engineWhere + "{{ $labels.incident_type }} incidents open at {{ $labels.process_definition_key }}/{{ $labels.activity_id }}"},
		topic.alert(CamundaExternalTaskLockHeldTooLong, rulefile.Warning, "a worker has held a task's lock far longer than normal"),
		{CamundaExternalTaskWorkerSilent, rulefile.Warning, GroupCamunda, DashboardExternalTask, []string{"engine", "topic", "worker_id"},
			topicWhere + "worker {{ $labels.worker_id }} holds locks and finishes nothing"},

		{CamundaJobExecutorStalled, rulefile.Critical, GroupCamundaJobs, DashboardExternalTask, engineLane,
			engineWhere + "async jobs are due and the job executor runs none"},

		history.alert(CamundaHistoryCleanupFailing, rulefile.Warning, "history cleanup jobs fail"),
		history.alert(CamundaHistoryCleanupBehind, rulefile.Warning, "history cleanup does not keep up, the history grows"),

		source.alert(WorkflowExporterSourceDown, rulefile.Critical, "the alerts on it are blind"),
		source.alert(WorkflowExporterCollectorDown, rulefile.Warning, "no paging alert reads it, its series are missing"),
		{WorkflowExporterDown, rulefile.Critical, GroupExporter, DashboardExporter, []string{"job"},
			"Prometheus cannot scrape the workflow exporter of job {{ $labels.job }}: every workflow alert is blind"},
		exporterEngine.alert(WorkflowExporterTasksUnwatched, rulefile.Warning, "in-flight external tasks beyond the exporter's lists go unwatched"),
		exporterEngine.alert(WorkflowExporterHistoryReadsCut, rulefile.Warning, "the exporter reads less history than is written, failures and completions are undercounted"),
		{WorkflowExporterLabelValuesFolded, rulefile.Warning, GroupExporter, DashboardExporter, []string{"metric"},
			"Metric {{ $labels.metric }}: label values fold into \"other\", per-label alerts undercount"},
		{WorkflowExporterWatchdog, rulefile.None, GroupExporter, "", nil,
			"Always firing: the alerting path of the workflow exporter's rules works"},
	}
}

// Lookup returns the alert of the given name.
func Lookup(name string) (Alert, bool) {
	for _, a := range Alerts() {
		if a.Name == name {
			return a, true
		}
	}
	return Alert{}, false
}

func mustLookup(name string) Alert {
	a, ok := Lookup(name)
	if !ok {
		panic(fmt.Sprintf("alerts/rules: alert %q is not in Alerts()", name))
	}
	return a
}

// RunbookDir holds one runbook per alert, <name>.md, relative to the
// repository root.
const RunbookDir = "docs/runbooks"

// RunbookPath returns the runbook file of the alert, relative to the
// repository root.
func (a Alert) RunbookPath() string { return RunbookDir + "/" + a.Name + ".md" }

// RunbookURL returns the runbook address of the named alert under base, a
// runbook_base_url such as DefaultRunbookBaseURL: the alert's runbook_url.
func RunbookURL(base, name string) string {
	return strings.TrimRight(base, "/") + "/" + name + ".md"
}
