package rules

import (
	"fmt"
	"strings"
)

// Alert names. Each names its runbook too: docs/runbooks/<name>.md.
const (
	WorkflowOutboxBacklogStalled          = "WorkflowOutboxBacklogStalled"
	WorkflowOutboxOldestEventTooOld       = "WorkflowOutboxOldestEventTooOld"
	WorkflowOutboxEventsFailed            = "WorkflowOutboxEventsFailed"
	WorkflowOutboxBacklogGrowing          = "WorkflowOutboxBacklogGrowing"
	WorkflowInboxBacklogStalled           = "WorkflowInboxBacklogStalled"
	WorkflowInboxBacklogGrowing           = "WorkflowInboxBacklogGrowing"
	WorkflowInboxBacklogOld               = "WorkflowInboxBacklogOld"
	WorkflowUnknownOutcomeRecords         = "WorkflowUnknownOutcomeRecords"
	WorkflowIdempotencyStaleInProgress    = "WorkflowIdempotencyStaleInProgress"
	WorkflowIdempotencyConflicts          = "WorkflowIdempotencyConflicts"
	WorkflowCompletedSideEffectTaskOpen   = "WorkflowCompletedSideEffectTaskOpen"
	WorkflowIdempotencyInDoubt            = "WorkflowIdempotencyInDoubt"
	WorkflowProcessedJobTaskOpen          = "WorkflowProcessedJobTaskOpen"
	WorkflowDuplicatePreventionSpike      = "WorkflowDuplicatePreventionSpike"
	CamundaExternalTaskRetriesExhausted   = "CamundaExternalTaskRetriesExhausted"
	CamundaExternalTaskLockExpirations    = "CamundaExternalTaskLockExpirations"
	CamundaExternalTaskDuplicateExecution = "CamundaExternalTaskDuplicateExecution"
	CamundaExternalTaskRetryStorm         = "CamundaExternalTaskRetryStorm"
	CamundaExternalTaskBacklogStalled     = "CamundaExternalTaskBacklogStalled"
	CamundaIncidentsOpen                  = "CamundaIncidentsOpen"
	CamundaExternalTaskLockHeldTooLong    = "CamundaExternalTaskLockHeldTooLong"
	CamundaExternalTaskWorkerSilent       = "CamundaExternalTaskWorkerSilent"
	CamundaJobExecutorStalled             = "CamundaJobExecutorStalled"
	WorkflowExporterSourceDown            = "WorkflowExporterSourceDown"
	WorkflowExporterDown                  = "WorkflowExporterDown"
)

// Rule groups of the generated rule file.
const (
	GroupOutbox      = "workflow-outbox"
	GroupInbox       = "workflow-inbox"
	GroupIdempotency = "workflow-idempotency"
	GroupCamunda     = "camunda-external-tasks"
	GroupCamundaJobs = "camunda-jobs"
	GroupExporter    = "workflow-exporter"
)

// Alert is one alert of the bundle.
type Alert struct {
	Name     string
	Severity string // Critical, Warning or Info
	Group    string // its rule group in the generated rule file
}

// Alerts returns every alert of the bundle, in the order of the generated
// rule file. It is the one list of alert names, severities, groups and
// runbooks: the rule generator takes each rule's severity and group from it,
// the dashboards link the runbooks of these alerts, and the routing tests
// (checks/alertrouting) check that the rule files hold exactly these alerts and
// that each reaches the receiver of its severity. A new alert is added here,
// with its rule in this package and its runbook in docs/runbooks/.
//
// The slice is a fresh copy on each call.
func Alerts() []Alert {
	return []Alert{
		{WorkflowOutboxBacklogStalled, Critical, GroupOutbox},
		{WorkflowOutboxOldestEventTooOld, Critical, GroupOutbox},
		{WorkflowOutboxEventsFailed, Warning, GroupOutbox},
		{WorkflowOutboxBacklogGrowing, Warning, GroupOutbox},

		{WorkflowInboxBacklogStalled, Warning, GroupInbox},
		{WorkflowInboxBacklogGrowing, Warning, GroupInbox},
		{WorkflowInboxBacklogOld, Warning, GroupInbox},

		{WorkflowUnknownOutcomeRecords, Warning, GroupIdempotency},
		{WorkflowIdempotencyStaleInProgress, Warning, GroupIdempotency},
		{WorkflowIdempotencyConflicts, Warning, GroupIdempotency},
		{WorkflowCompletedSideEffectTaskOpen, Warning, GroupIdempotency},
		{WorkflowIdempotencyInDoubt, Warning, GroupIdempotency},
		{WorkflowProcessedJobTaskOpen, Warning, GroupIdempotency},
		{WorkflowDuplicatePreventionSpike, Info, GroupIdempotency},

		{CamundaExternalTaskRetriesExhausted, Warning, GroupCamunda},
		{CamundaExternalTaskLockExpirations, Warning, GroupCamunda},
		{CamundaExternalTaskDuplicateExecution, Warning, GroupCamunda},
		{CamundaExternalTaskRetryStorm, Warning, GroupCamunda},
		{CamundaExternalTaskBacklogStalled, Warning, GroupCamunda},
		{CamundaIncidentsOpen, Warning, GroupCamunda},
		{CamundaExternalTaskLockHeldTooLong, Warning, GroupCamunda},
		{CamundaExternalTaskWorkerSilent, Warning, GroupCamunda},

		{CamundaJobExecutorStalled, Warning, GroupCamundaJobs},

		{WorkflowExporterSourceDown, Warning, GroupExporter},
		{WorkflowExporterDown, Warning, GroupExporter},
	}
}

// Severities returns the severities an alert may have, most urgent first.
func Severities() []string { return []string{Critical, Warning, Info} }

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
