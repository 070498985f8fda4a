package engine

import (
	"context"
	"log/slog"
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
// completions, BPMN errors and durations (activities.go), failures are
// what the collections observe (a lower bound) and the series that need
// the logs are absent; at none (and unknown) every series that needs
// history is absent, never 0. camunda_engine_info's history_level label
// says which.

// historyLevel is an engine's history level as the exporter knows it.
type historyLevel int

const (
	levelUnknown historyLevel = iota
	levelNone
	levelActivity
	levelAudit
	levelFull
)

var levelNames = [...]string{"unknown", "none", "activity", "audit", "full"}

func (l historyLevel) String() string { return levelNames[l] }

// levelNamed is the level of a config value (config.HistoryLevels).
func levelNamed(name string) (historyLevel, bool) {
	for l, n := range levelNames {
		if n == name && historyLevel(l) != levelUnknown {
			return historyLevel(l), true
		}
	}
	return levelUnknown, false
}

// levelOfProperty is the level of the engine's historyLevel property: the
// id of the engine's HistoryLevel (0 none, 1 activity, 2 audit, 3 full).
// A custom history level (another id) is unknown: what it writes cannot be
// told.
func levelOfProperty(value string) historyLevel {
	id, err := strconv.Atoi(value)
	if err != nil || id < 0 || id > 3 {
		return levelUnknown
	}
	return historyLevel(id + 1)
}

// readsTaskLog: the external task log and the job log exist.
func (l historyLevel) readsTaskLog() bool { return l == levelFull }

// readsActivities: below full, the activity instance history gives the
// tasks' outcomes.
func (l historyLevel) readsActivities() bool { return l == levelActivity || l == levelAudit }

// readsProcessHistory: the engine writes historic process instances (the
// camunda_history collector's finished instances).
func (l historyLevel) readsProcessHistory() bool { return l >= levelActivity }

// hasOutcomes: completions, BPMN errors and durations can be reported.
func (l historyLevel) hasOutcomes() bool { return l.readsTaskLog() || l.readsActivities() }

// Where a level came from, as check and the log name it.
const (
	levelFromConfig   = "history_level"
	levelFromProperty = "the engine database's act_ge_property historyLevel"
	levelFromEvidence = "the history the REST API shows"
)

// levelFinding is what one detection found.
type levelFinding struct {
	level historyLevel
	// from says where the level came from (levelFrom*).
	from string
	// final: nothing more can be learned for this engine version (the
	// level is configured, read from the database, or full).
	final bool
	// why explains an unknown level, or what an evidence reading cannot
	// tell apart (for check and the log).
	why string
}

// levelState is an engine's detection across collections: the finding
// for the current engine version.
type levelState struct {
	version string
	found   levelFinding
}

// learnLevel finds the history level for this collection (Probe): the
// configured one; else, once per engine version, the engine database's
// property (retried while it cannot be read); else evidence in the
// history over REST, probed at every collection until full is seen (the
// history only grows). A failed detection leaves the level as it was (or
// unknown): it never fails the probe, except when ctx ends.
func (e *Engine) learnLevel(ctx context.Context, version string) error {
	if e.lvl.version != version {
		e.lvl = levelState{version: version}
	}
	if e.lvl.found.final {
		return nil
	}
	if l, ok := levelNamed(e.cfg.HistoryLevel); ok {
		e.lvl.found = levelFinding{level: l, from: levelFromConfig, final: true}
		return nil
	}
	found, err := e.reader.historyLevel(ctx, e.lvl.found)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		e.logger.Debug("camunda: history level not detected this time", "engine", e.name, "error", err.Error())
		return nil
	}
	if found.level != e.lvl.found.level || found.why != e.lvl.found.why {
		level := slog.LevelInfo
		if !found.level.hasOutcomes() {
			level = slog.LevelWarn
		}
		e.logger.Log(ctx, level, "camunda: history level "+found.level.String(), "engine", e.name, "from", found.from, "why", found.why)
	}
	e.lvl.found = found
	return nil
}

// HistoryLevel finds the history level as the first collection does (the
// configured one, else the engine database's property, else the evidence
// in the history over REST), for `workflow-exporter check`. With a
// configured level it also asks the engine, so check can compare.
func (e *Engine) HistoryLevel(ctx context.Context) HistoryLevelReport {
	if err := e.learnLevel(ctx, e.lvl.version); err != nil {
		return HistoryLevelReport{Level: levelUnknown.String(), Why: err.Error()}
	}
	f := e.lvl.found
	rep := HistoryLevelReport{Level: f.level.String(), From: f.from, Why: f.why}
	if f.from == levelFromConfig {
		rep.From = e.key + "." + levelFromConfig
		if d, err := e.reader.historyLevel(ctx, levelFinding{}); err == nil && d.final {
			rep.Detected = d.level.String()
		}
	}
	return rep
}

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
