package capability

import (
	"strings"

	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// The oldest waiting age (camunda_external_task_oldest_waiting_age_seconds,
// the input of CamundaExternalTaskBacklogStalled) is engine now minus the
// creation of the topic's oldest fetchable task. Where that creation comes
// from depends on the engine version, the mode and the history level
// (measured on Camunda 7.19, 7.20, 7.22, 7.24, Operaton 1.0.3 and CIB seven
// 2.0.0; docs/camunda-states.md, "The oldest waiting age on every version"):
//
//   - the task's create time: over REST the createTime field of GET
//     /external-task (Camunda 7.24, Operaton), in engine-database mode
//     ACT_RU_EXT_TASK.CREATE_TIME_ (Camunda 7.21 on, the forks); exact;
//   - the start of the task's historic activity instance (its
//     activityInstanceId; started within a millisecond of the task's
//     creation): the REST API of 7.21 to 7.23 sorts by createTime but does
//     not return it, so the oldest task's instance is looked up by id; on
//     7.20 and older the REST API neither sorts nor returns it, so each
//     topic's fetchable tasks are listed (max_listed_tasks) and the oldest
//     unfinished instance of their activities found; in engine-database
//     mode the instance is joined by its primary key where CREATE_TIME_ is
//     missing (before 7.21) or NULL (tasks created before an upgrade to
//     7.21). Needs history level activity or higher; exact (over REST on
//     7.20 and older while every fetchable task of the topic is listed);
//   - the first collection that saw the task (history level none, or
//     unknown, on an engine whose tasks carry no create time): a lower
//     bound of the age, short by up to one collection interval for tasks
//     created while the exporter runs, and counting from the exporter's
//     first collection for older ones.

// AgeSource is where a reading found the creation of the oldest waiting
// tasks.
type AgeSource string

// Age sources.
const (
	AgeFromCreateTime       AgeSource = "create_time"
	AgeFromActivityInstance AgeSource = "activity_instance"
	AgeFromFirstSeen        AgeSource = "first_seen"
	// AgeNone: no age is reported (a reading that could not tell).
	AgeNone AgeSource = "none"
)

// Support is what the source lets the exporter report of the age.
func (s AgeSource) Support() Support {
	switch s {
	case AgeFromCreateTime, AgeFromActivityInstance:
		return Exact
	case AgeFromFirstSeen:
		return LowerBound
	}
	return Absent
}

// TaskTimes is what an engine shows of its external tasks' creation.
type TaskTimes struct {
	// Field: the REST API returns createTime (7.24, Operaton); Column:
	// ACT_RU_EXT_TASK has CREATE_TIME_ (7.21 on, the forks); Sort: the REST
	// API sorts by createTime (7.21 on).
	Field, Column, Sort bool
}

// WaitingAgeSource is where the oldest waiting age comes from for an engine
// read over REST (database false) or from its database, at a history
// level: the rule of the readers (collectors/engine/rest and enginedb), for
// `workflow-exporter check` and the docs' table of versions.
func WaitingAgeSource(t TaskTimes, database bool, level Level) AgeSource {
	switch {
	case database && t.Column, !database && t.Field:
		return AgeFromCreateTime
	case level >= LevelActivity:
		return AgeFromActivityInstance
	}
	return AgeFromFirstSeen
}

// TaskTimesOf is what a Camunda 7 release shows of its tasks' creation, by
// its version (as GET /version or ACT_GE_SCHEMA_LOG name it: "7.20.0"), for
// the releases the exporter knows. ok is false for a version it cannot
// place (a fork's own version number); the readers then learn it from the
// engine's answers.
func TaskTimesOf(version string) (t TaskTimes, ok bool) {
	minor, ok := camunda7Minor(version)
	if !ok {
		return TaskTimes{}, false
	}
	return TaskTimes{Field: minor >= 24, Column: minor >= 21, Sort: minor >= 21}, true
}

// camunda7Minor is the minor version of a Camunda 7 version string ("7.22.0",
// "7.22.3-ee").
func camunda7Minor(v string) (int, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), "7.")
	if !ok {
		return 0, false
	}
	n := 0
	digits := 0
	for _, r := range rest {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
		digits++
	}
	return n, digits > 0
}

// Fact is one line of what an engine gives: a metric and what this engine
// version, mode and history level let the exporter report of it
// (camunda_engine_capability).
type Fact struct {
	Metric  string
	Support Support
	// Why says where its values come from.
	Why string
}

// Facts are the metrics whose support depends on the engine (its version,
// the mode, its history level), at level and with the age source found:
// camunda_engine_capability's series and `workflow-exporter check`'s
// lines. The metrics of HistoryLevelSupport come first, in its order, then
// the oldest waiting age.
func Facts(level Level, age AgeSource) []Fact {
	var out []Fact
	for _, s := range HistoryLevelSupport() {
		out = append(out, Fact{Metric: s.Metric, Support: s.At(level.String()), Why: s.Why})
	}
	return append(out, Fact{Metric: catalog.CamundaExternalTaskOldestWaitingAge, Support: age.Support(), Why: ageWhy[age]})
}

var ageWhy = map[AgeSource]string{
	AgeFromCreateTime:       "the tasks' create time",
	AgeFromActivityInstance: "the start of the tasks' historic activity instances (the engine does not return createTime)",
	AgeFromFirstSeen:        "the first collection that saw each task: the engine keeps no creation time at this history level",
	AgeNone:                 "not known yet",
}

// LabelValue is a support as the capability series' label writes it:
// exact, lower_bound, absent.
func (s Support) LabelValue() string { return strings.ReplaceAll(string(s), " ", "_") }

// Modes of reading an engine, as check names them.
const (
	ModeREST          = "REST API"
	ModeDatabase      = "engine database"
	ModeDatabaseAlone = "engine database without REST API"
)

// EngineReport is what `workflow-exporter check` reports of an engine: what
// it is, and what its version, the mode and its history level let the
// exporter report (the facts of camunda_engine_capability).
type EngineReport struct {
	// Version is GET /version's, or without the REST API the newest in
	// ACT_GE_SCHEMA_LOG; Flavor the flavor label's value.
	Version, Flavor string
	// Mode is one of ModeREST, ModeDatabase, ModeDatabaseAlone.
	Mode  string
	Level HistoryLevelReport
	// Age is where the oldest waiting age comes from, AgeWhy what told.
	Age    AgeSource
	AgeWhy string
	Facts  []Fact
}
