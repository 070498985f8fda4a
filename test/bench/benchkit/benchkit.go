// Package benchkit holds what the benchmarks under test/bench share: the
// median of a run's samples, milliseconds, progress lines on stderr (stdout
// carries only the report), and a baseline's way of reading a query: every
// row, as a generic exporter does.
package benchkit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Median is the middle of v (the mean of the two middle values for an even
// count; 0 for none).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MS is d in milliseconds, to the microsecond.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Progress returns a function that writes a progress line, stamped with
// the time and prefixed with the benchmark's name, to stderr.
func Progress(name string) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", time.Now().UTC().Format("15:04:05"), name, fmt.Sprintf(format, args...))
	}
}

// Querier is a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Drain runs a query and reads every row of its answer, decoding each
// value, and returns the first error.
func Drain(ctx context.Context, q Querier, sql string, args ...any) error {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Server is a benchmark's throwaway database (test/harness/pgtest): its
// URL, a connection for loading it, and what the report says of the
// server (its version and the settings that move the timings).
type Server struct {
	URL, Version, Settings string
	Admin                  *pgx.Conn
}

// NewServer creates the database and connects to it; the connection
// closes when the benchmark ends. With settings (name=value), on a server
// of its own started with them; else on the shared one.
func NewServer(b testing.TB, settings ...string) Server {
	b.Helper()
	ctx := context.Background()
	var s Server
	if len(settings) > 0 {
		s.URL = pgtest.NewServer(b, settings...).NewDatabase(b)
	} else {
		s.URL = pgtest.NewDatabase(b)
	}
	var err error
	if s.Admin, err = pgx.Connect(ctx, s.URL); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Admin.Close(context.Background()) })
	if err := s.Admin.QueryRow(ctx, `SELECT current_setting('server_version'),
	format('shared_buffers %s, max_parallel_workers_per_gather %s, jit %s, work_mem %s (pgtest: fsync off)',
		current_setting('shared_buffers'), current_setting('max_parallel_workers_per_gather'),
		current_setting('jit'), current_setting('work_mem'))`).Scan(&s.Version, &s.Settings); err != nil {
		b.Fatal(err)
	}
	return s
}

// ReferenceSchema creates schema with the reference tables in it
// (deploy/sql/001) and nothing else.
func (s Server) ReferenceSchema(b testing.TB, schema string) {
	b.Helper()
	pgtest.Exec(b, s.Admin, "CREATE SCHEMA "+schema+"; SET search_path = "+schema)
	if err := pgtest.ExecFile(context.Background(), s.Admin, testkit.Path(b, "deploy/sql/001_reference_schema.sql"), nil); err != nil {
		b.Fatal(err)
	}
	pgtest.Exec(b, s.Admin, "RESET search_path")
}

// CreateIndexes creates the indexes a collector's requirements recommend
// (what deploy/sql/003 is generated from), as in production: not the
// reference tables' primary keys, which they have, nor those that need an
// optional column.
func (s Server) CreateIndexes(b testing.TB, req pgschema.Requirements) {
	b.Helper()
	for _, ix := range req.Indexes {
		if ix.ReferencePrimaryKey || ix.Requires != "" {
			continue
		}
		pgtest.Exec(b, s.Admin, ix.CreateStatement(req.Table))
	}
}
