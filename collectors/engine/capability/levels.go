package capability

import (
	"strconv"

	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// History levels. A Camunda 7 engine writes history by its level (the
// engine's HistoryLevel*, chosen at its first start and recorded in its
// database, act_ge_property.historyLevel):
//
//	none      nothing;
//	activity  process and activity instances (ACT_HI_ACTINST), tasks;
//	audit     activity, plus variable instances;
//	full      everything, also the external task log (ACT_HI_EXT_TASK_LOG)
//	          and the job log (ACT_HI_JOB_LOG).
//
// What the collectors read depends on it (docs/camunda-states.md, "History
// levels"): at full the external task log gives failures, completions,
// BPMN errors, durations and the workers' outcomes, and the job log the
// job counters; at activity and audit the activity instance history gives
// completions, BPMN errors and durations (activities.go in
// collectors/engine), failures are
// what the collections observe (a lower bound) and the series that need
// the logs are absent; at none (and unknown) every series that needs
// history is absent, never 0. camunda_engine_info's history_level label
// says which.

// Level is an engine's history level as the exporter knows it.
type Level int

const (
	LevelUnknown Level = iota
	LevelNone
	LevelActivity
	LevelAudit
	LevelFull
)

var levelNames = [...]string{"unknown", "none", "activity", "audit", "full"}

func (l Level) String() string { return levelNames[l] }

// LevelNamed is the level of a config value (config.HistoryLevels).
func LevelNamed(name string) (Level, bool) {
	for l, n := range levelNames {
		if n == name && Level(l) != LevelUnknown {
			return Level(l), true
		}
	}
	return LevelUnknown, false
}

// LevelOfProperty is the level of the engine's historyLevel property: the
// id of the engine's HistoryLevel (0 none, 1 activity, 2 audit, 3 full).
// A custom history level (another id) is unknown: what it writes cannot be
// told.
func LevelOfProperty(value string) Level {
	id, err := strconv.Atoi(value)
	if err != nil || id < 0 || id > 3 {
		return LevelUnknown
	}
	return Level(id + 1)
}

// ReadsTaskLog: the external task log and the job log exist.
func (l Level) ReadsTaskLog() bool { return l == LevelFull }

// ReadsActivities: below full, the activity instance history gives the
// tasks' outcomes.
func (l Level) ReadsActivities() bool { return l == LevelActivity || l == LevelAudit }

// ReadsProcessHistory: the engine writes historic process instances (the
// camunda_history collector's finished instances).
func (l Level) ReadsProcessHistory() bool { return l >= LevelActivity }

// HasOutcomes: completions, BPMN errors and durations can be reported.
func (l Level) HasOutcomes() bool { return l.ReadsTaskLog() || l.ReadsActivities() }

// HistoryLevelReport is a history level as check reports it.
type HistoryLevelReport struct {
	// Level is none, activity, audit, full or unknown; From where it came
	// from; Why what it cannot tell apart, or why it is unknown.
	Level, From, Why string
	// Detected is, with a configured level, the level the engine's
	// database records, or full when the history shows it ("": not known).
	Detected string
}

// Support is what a history level lets the exporter report of a metric.
type Support string

// Supports.
const (
	Exact      Support = "exact"
	LowerBound Support = "lower bound"
	Absent     Support = "absent"
)

// LevelSupport is what one metric is at each history level.
type LevelSupport struct {
	Metric string
	// None, Activity, Audit and Full are its support at each level (an
	// unknown level is treated as none).
	None, Activity, Audit, Full Support
	// Why says where the values come from below full.
	Why string
}

// At returns the support at a level by name (unknown as none).
func (s LevelSupport) At(level string) Support {
	switch level {
	case "full":
		return s.Full
	case "audit":
		return s.Audit
	case "activity":
		return s.Activity
	}
	return s.None
}

// SupportAt groups the metrics of HistoryLevelSupport by what the level
// (by name; unknown as none) lets the exporter report of them, in the
// order Exact, LowerBound, Absent (empty groups left out).
func SupportAt(level string) []SupportGroup {
	by := map[Support][]string{}
	for _, s := range HistoryLevelSupport() {
		by[s.At(level)] = append(by[s.At(level)], s.Metric)
	}
	var out []SupportGroup
	for _, s := range []Support{Exact, LowerBound, Absent} {
		if len(by[s]) > 0 {
			out = append(out, SupportGroup{Support: s, Metrics: by[s]})
		}
	}
	return out
}

// SupportGroup is the metrics a history level supports alike.
type SupportGroup struct {
	Support Support  `json:"support"`
	Metrics []string `json:"metrics"`
}

// levelSource is where a metric's values come from, as its support at
// none, activity, audit and full: the source decides all four, so the
// metrics read from one source share its row.
type levelSource [4]Support

// of is the source's support for one metric; why says where its values
// come from below full.
func (src levelSource) of(metric, why string) LevelSupport {
	return LevelSupport{Metric: metric, None: src[0], Activity: src[1], Audit: src[2], Full: src[3], Why: why}
}

// HistoryLevelSupport is, for every metric whose source depends on the
// history level, what each level lets the exporter report: the table of
// docs/camunda-states.md ("History levels") and of `workflow-exporter check`.
func HistoryLevelSupport() []LevelSupport {
	var (
		// instances: the process and activity instance history, written
		// from level activity on.
		instances = levelSource{Absent, Exact, Exact, Exact}
		// logs: the external task log and the job log, written at full only.
		logs = levelSource{Absent, Absent, Absent, Exact}
		// observedBelowFull: what the collections observe, exact from the
		// external task log at full.
		observedBelowFull = levelSource{LowerBound, LowerBound, LowerBound, Exact}
		// observed: what the collections observe, at every level.
		observed = levelSource{LowerBound, LowerBound, LowerBound, LowerBound}
	)
	const (
		jobLog             = "the job log is written at full only"
		asFinishedInstance = "as finished process instances"
	)
	return []LevelSupport{
		instances.of(catalog.CamundaExternalTaskCompletions, "the external activity instances that ended normally (activity instance history)"),
		instances.of(catalog.CamundaExternalTaskBpmnErrors, "the external activity instances that completed their scope or were canceled by a caught error"),
		instances.of(catalog.CamundaExternalTaskDuration, "start to end of the external activity instances that ended normally"),
		observedBelowFull.of(catalog.CamundaExternalTaskFailures, "listed tasks seen with other retries or another error message than at the previous collection"),
		logs.of(catalog.CamundaExternalTaskFailuresByError, "the error messages are in the external task log only"),
		observed.of(catalog.CamundaExternalTasksEnded, "open tasks seen and then gone; needs no history"),
		observed.of(catalog.CamundaExternalTaskLockExpirations, "without the log, a lapse only the log shows (another worker completing or failing the task) is not counted"),
		observed.of(catalog.CamundaExternalTaskRedeliveries, "as lock expirations"),
		logs.of(catalog.CamundaExternalTaskWorkerIdle, "activity instances do not name the worker"),
		logs.of(catalog.CamundaJobFailures, jobLog),
		logs.of(catalog.CamundaJobFailuresByError, jobLog),
		instances.of(catalog.CamundaHistoryFinished, "process instance history is written from level activity on"),
		instances.of(catalog.CamundaHistoryCleanable, asFinishedInstance),
		instances.of(catalog.CamundaHistoryWithoutTTL, asFinishedInstance),
		logs.of(catalog.CamundaJobSuccesses, jobLog),
	}
}
