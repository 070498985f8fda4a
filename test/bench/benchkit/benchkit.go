// Package benchkit holds what the benchmarks under test/bench share: the
// median of a run's samples, milliseconds, progress lines on stderr (stdout
// carries only the report), the run's line in a report (date, commit,
// machine), a baseline's way of reading a query (every row, as a generic
// exporter does), loading tables a few statements at a time, what a query's
// plan read (EXPLAIN), and a process's resident memory.
package benchkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// Commit names the checked-out commit a run measures ("-dirty" when the
// tree has changes), or "unknown" outside a git checkout.
func Commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=12").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// RunInfo is a report's line on the run: when, at which commit, on how
// many CPUs, against which PostgreSQL, with which Go.
func RunInfo(pgVersion string) string {
	return fmt.Sprintf("date %s; commit %s; %d CPUs (GOMAXPROCS %d); PostgreSQL %s; %s/%s, %s", time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Commit(), runtime.NumCPU(), runtime.GOMAXPROCS(0), pgVersion, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// Parallel runs job(ctx, conn, i) for i from 0 to n-1, in that order, on
// workers connections of its own to url (a benchmark's load: a few
// statements at a time, one per core of the reference machine), and fails
// the benchmark with the first error once every job is done.
func Parallel(b testing.TB, url string, workers, n int, job func(ctx context.Context, conn *pgx.Conn, i int) error) {
	b.Helper()
	queue := make(chan int)
	errs := make(chan error, n+workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				errs <- err
				for range queue {
				}
				return
			}
			defer conn.Close(ctx)
			for i := range queue {
				if err := job(ctx, conn, i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		queue <- i
	}
	close(queue)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// Explain runs a query under EXPLAIN (ANALYZE, BUFFERS) and returns the top
// node of its plan (for ScanRows) and the shared buffers (pages) the plan
// hit or read.
func Explain(b testing.TB, conn *pgx.Conn, sql string, args ...any) (plan map[string]any, pages float64) {
	b.Helper()
	var raw []byte
	if err := conn.QueryRow(context.Background(), "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		b.Fatalf("%v\n%s", err, sql)
	}
	var plans []struct{ Plan map[string]any }
	if err := json.Unmarshal(raw, &plans); err != nil {
		b.Fatal(err)
	}
	p := plans[0].Plan
	hit, _ := p["Shared Hit Blocks"].(float64)
	read, _ := p["Shared Read Blocks"].(float64)
	return p, hit + read
}

// ScanRows sums, over the nodes of a plan that counts picks, the rows each
// returned or filtered out, times its loops: all parallel workers included.
// A benchmark says which nodes read its table's rows (the scans, say, and
// not a bitmap index scan, whose rows the heap scan above it counts).
func ScanRows(n map[string]any, counts func(node map[string]any) bool) float64 {
	var total float64
	if counts(n) {
		num := func(k string) float64 { v, _ := n[k].(float64); return v }
		total += (num("Actual Rows") + num("Rows Removed by Filter") + num("Rows Removed by Index Recheck")) * max(num("Actual Loops"), 1)
	}
	if kids, ok := n["Plans"].([]any); ok {
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				total += ScanRows(m, counts)
			}
		}
	}
	return total
}

// NodeType is a plan node's "Node Type" ("Seq Scan", "Bitmap Index Scan").
func NodeType(n map[string]any) string { t, _ := n["Node Type"].(string); return t }

// ResidentMemory reads VmRSS and VmHWM (peak) of a process, in MiB, from
// /proc/<pid>/status; an error when either is missing.
func ResidentMemory(pid int) (rss, hwm float64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, errors.Join(sc.Err(), fmt.Errorf("no VmRSS or VmHWM in /proc/%d/status", pid))
	}
	return rss, hwm, nil
}
