package dashboards

// Alert names of the bundle (../shared/DESIGN.md "Alerts", and the rule file
// alerts/workflow-alerts.yml). Their runbooks live in
// docs/runbooks/<AlertName>.md; the dashboards link to them by name. Tests in
// this package check the list against the rule file and, once they exist,
// the runbook files.
const (
	AlertOutboxBacklogStalled         = "WorkflowOutboxBacklogStalled"
	AlertOutboxOldestEventTooOld      = "WorkflowOutboxOldestEventTooOld"
	AlertOutboxBacklogGrowing         = "WorkflowOutboxBacklogGrowing"
	AlertOutboxEventsFailed           = "WorkflowOutboxEventsFailed"
	AlertInboxBacklogOld              = "WorkflowInboxBacklogOld"
	AlertUnknownOutcomeRecords        = "WorkflowUnknownOutcomeRecords"
	AlertIdempotencyStaleInProgress   = "WorkflowIdempotencyStaleInProgress"
	AlertIdempotencyConflicts         = "WorkflowIdempotencyConflicts"
	AlertCompletedSideEffectTaskOpen  = "WorkflowCompletedSideEffectTaskOpen"
	AlertIdempotencyInDoubt           = "WorkflowIdempotencyInDoubt"
	AlertProcessedJobTaskOpen         = "WorkflowProcessedJobTaskOpen"
	AlertExternalTaskRetriesExhausted = "CamundaExternalTaskRetriesExhausted"
	AlertExternalTaskLockExpirations  = "CamundaExternalTaskLockExpirations"
	AlertExternalTaskRetryStorm       = "CamundaExternalTaskRetryStorm"
	AlertExternalTaskBacklogStalled   = "CamundaExternalTaskBacklogStalled"
	AlertIncidentsOpen                = "CamundaIncidentsOpen"
	AlertExporterSourceDown           = "WorkflowExporterSourceDown"
	AlertExporterDown                 = "WorkflowExporterDown"
	AlertDuplicatePreventionSpike     = "WorkflowDuplicatePreventionSpike"
	alertNamePattern                  = "Workflow.*|Camunda.*"
	runbookBase                       = "https://github.com/workflow-exporter/workflow-exporter/blob/main/docs/runbooks/"
	severityCritical, severityWarning = "critical", "warning"
	severityInfo                      = "info"
)

// Alert is one alert of the bundle with its severity.
type Alert struct {
	Name     string
	Severity string
}

// Alerts returns every alert the dashboards link to, pages first.
func Alerts() []Alert {
	return []Alert{
		{AlertOutboxBacklogStalled, severityCritical},
		{AlertOutboxOldestEventTooOld, severityCritical},
		{AlertOutboxEventsFailed, severityWarning},
		{AlertOutboxBacklogGrowing, severityWarning},
		{AlertInboxBacklogOld, severityWarning},
		{AlertUnknownOutcomeRecords, severityWarning},
		{AlertIdempotencyStaleInProgress, severityWarning},
		{AlertIdempotencyConflicts, severityWarning},
		{AlertCompletedSideEffectTaskOpen, severityWarning},
		{AlertIdempotencyInDoubt, severityWarning},
		{AlertProcessedJobTaskOpen, severityWarning},
		{AlertExternalTaskRetriesExhausted, severityWarning},
		{AlertExternalTaskLockExpirations, severityWarning},
		{AlertExternalTaskRetryStorm, severityWarning},
		{AlertExternalTaskBacklogStalled, severityWarning},
		{AlertIncidentsOpen, severityWarning},
		{AlertExporterSourceDown, severityWarning},
		{AlertExporterDown, severityWarning},
		{AlertDuplicatePreventionSpike, severityInfo},
	}
}

// RunbookURL returns the address of an alert's runbook.
func RunbookURL(alert string) string { return runbookBase + alert + ".md" }
