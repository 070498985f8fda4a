package reading

import (
	"context"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
)

// CleanupRequest is what the history reading needs.
type CleanupRequest struct {
	Probe
	// Budget bounds the report's entries read over REST (max_listed_tasks).
	Budget int
	// StatementTimeout bounds the engine-database count.
	StatementTimeout time.Duration
}

// CleanupRead is what one reading learned.
type CleanupRead struct {
	// PerKey are the report's counts per process definition key (all
	// versions).
	PerKey map[string]FinishedCounts
	// Enabled is the engine's cleanup switch; nil when it does not say.
	Enabled *bool
	// Jobs and Failing count the cleanup's jobs and those failing.
	Jobs, Failing int
	// TableBytes are the largest engine tables' sizes (engine-database
	// mode; nil over REST).
	TableBytes map[string]int64
}

// FinishedCounts are one key's finished instances: all, cleanable now, and
// those of versions without a time to live.
type FinishedCounts struct {
	Finished, Cleanable, WithoutTTL int64
}

// CleanupJobFailing: a cleanup job whose last run threw, or out of retries.
func CleanupJobFailing(retries int, exception bool) bool { return exception || retries <= 0 }

// ReadCleanupState reads the cleanup's switch, which only the REST API
// knows (the engine's configuration), in both modes.
func ReadCleanupState(ctx context.Context, client *camunda.Client, out *CleanupRead) error {
	cfg, err := client.HistoryCleanupConfig(ctx)
	if err != nil {
		return err
	}
	out.Enabled = cfg.Enabled
	return nil
}
