package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
	"github.com/workflow-exporter/workflow-exporter/internal/pgsource"
	"github.com/workflow-exporter/workflow-exporter/internal/watermark"
)

// ProcessedJobs watches the processed-job table (seed section 13): one row
// per Camunda job or external task a worker finished. It counts rows as
// they are written, each once, from the recent completed_at window.
type ProcessedJobs struct {
	db       *pgsource.DB
	database string
	cfg      config.ProcessedJobTable
	key      string
	logger   *slog.Logger

	limiter *fold.Limiter
	window  *watermark.Window
	known   tuples // engine, activity_id, status
	total   map[string]float64

	sqlRows string
}

// ProcessedJobsOptions configures a ProcessedJobs collector.
type ProcessedJobsOptions struct {
	DB               *pgsource.DB
	Database         string
	Table            config.ProcessedJobTable
	ConfigKey        string
	LateCommitWindow time.Duration
	LabelValueLimit  int
	Folds            *fold.Stats
	Logger           *slog.Logger
}

// NewProcessedJobs returns a processed-jobs collector.
func NewProcessedJobs(o ProcessedJobsOptions) *ProcessedJobs {
	c := &ProcessedJobs{
		db: o.DB, database: o.Database, cfg: o.Table, key: o.ConfigKey, logger: orDiscard(o.Logger),
		limiter: fold.NewLimiter(o.Folds, catalog.ProcessedJobs, o.LabelValueLimit),
		window:  watermark.New(o.LateCommitWindow),
		known:   tuples{},
		total:   map[string]float64{},
	}
	col := o.Table.Columns
	c.sqlRows = fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, COALESCE(%[3]s::text, ''), COALESCE(%[4]s::text, ''), %[5]s
FROM %[6]s WHERE %[5]s > $1`, quoteIdent(col.Engine), quoteIdent(col.JobReference), quoteIdent(col.ActivityID), quoteIdent(col.Status), quoteIdent(col.CompletedAt), quoteTable(o.Table.Table))
	return c
}

// Name implements poll.Collector.
func (c *ProcessedJobs) Name() string { return "processed_jobs" }

// Requirements implements TableCollector.
func (c *ProcessedJobs) Requirements() Requirements {
	col := c.cfg.Columns
	k := c.key + ".columns."
	return Requirements{
		Kind:  "processed_jobs",
		Table: c.cfg.Table,
		Columns: []Column{
			{k + "engine", col.Engine, false}, {k + "job_reference", col.JobReference, false},
			{k + "activity_id", col.ActivityID, false}, {k + "status", col.Status, false},
			{k + "completed_at", col.CompletedAt, false},
		},
		Indexes: []Index{
			{Name: baseName(c.cfg.Table) + "_completed_at_idx", Columns: []string{col.CompletedAt},
				Why: "processed_jobs_total reads the last late_commit_window of completions", Query: "written"},
		},
		Queries: []Query{{"written", c.sqlRows, []any{time.Now().Add(-time.Hour)}, ""}},
	}
}

// Collect implements poll.Collector.
func (c *ProcessedJobs) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	var dbNow time.Time
	newRows := map[string]float64{}
	seen := tuples{}
	err := c.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if dbNow, err = pgsource.Now(ctx, tx); err != nil {
			return err
		}
		if _, err := checkSchema(ctx, tx, c.Requirements(), c.key+".table"); err != nil {
			return err
		}
		var engine, ref, activity, status string
		var ts time.Time
		rows, err := tx.Query(ctx, c.sqlRows, c.window.Lower(dbNow))
		if err != nil {
			return fmt.Errorf("processed-job query: %w", err)
		}
		_, err = pgx.ForEachRow(rows, []any{&engine, &ref, &activity, &status, &ts}, func() error {
			vals := c.limiter.Admit(engine, activity, status)
			seen.add(vals...)
			if c.window.Observe(ts, engine, ref) {
				newRows[tupleKey(vals...)]++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("processed-job query: %w", err)
		}
		return nil
	})
	if err != nil {
		c.window.Abort()
		c.limiter.Discard()
		return nil, err
	}
	c.window.Commit(dbNow)
	c.limiter.Flush()
	for k, v := range seen {
		c.known[k] = v
	}
	for k, n := range newRows {
		c.total[k] += n
	}
	desc := catalog.Desc(catalog.ProcessedJobs)
	var out []prometheus.Metric
	for _, vals := range c.known.sorted() {
		out = append(out, prometheus.MustNewConstMetric(desc, prometheus.CounterValue, c.total[tupleKey(vals...)], c.database, vals[0], vals[1], vals[2]))
	}
	return out, nil
}
