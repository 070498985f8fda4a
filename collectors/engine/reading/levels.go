package reading

import "github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"

// Where a level came from, as check and the log name it.
const (
	LevelFromConfig   = "history_level"
	LevelFromProperty = "the engine database's act_ge_property historyLevel"
	LevelFromEvidence = "the history the REST API shows"
)

// LevelFinding is what one detection found.
type LevelFinding struct {
	Level capability.Level
	// From says where the level came from (LevelFrom*).
	From string
	// Final: nothing more can be learned for this engine version (the
	// level is configured, read from the database, or full).
	Final bool
	// Why explains an unknown level, or what an evidence reading cannot
	// tell apart (for check and the log).
	Why string
}
