package benchcamunda

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// profileFlag turns the run into a diagnosis of where a collection's time
// goes, not a measurement for the record: the server loads
// pg_stat_statements (its bookkeeping costs every statement a little), and
// after each size's timed rounds every exporter contender collects
// profileRounds more times under a Go CPU profile, its statements counted.
var profileFlag = flag.String("profile", "", "a directory: after each size's timed rounds, profile each exporter's collections (Go CPU profile per size and contender, the database's statements from pg_stat_statements); the run's figures are then not for the record")

// profileRounds is how many collections each profile covers.
const profileRounds = 20

// profileSettings are the server settings -profile needs.
func profileSettings() []string {
	if *profileFlag == "" {
		return nil
	}
	return []string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all", "pg_stat_statements.max=1000"}
}

// statementRow is one statement's share of the profiled collections.
type statementRow struct {
	calls, rows   float64 // per collection
	ms, share     float64 // per collection, and of every statement's time
	jitMS         float64 // per collection: compiling (JIT generation, inlining, optimization, emission)
	meanMS, maxMS float64 // per call
	query         string
}

// profileSize profiles the exporter contenders at one size: per contender
// a CPU profile file and the statements the database ran meanwhile (the
// engine's too, over REST: what the engine runs for the exporter's
// requests), printed as a table.
func profileSize(b *testing.B, ctx context.Context, e *env, sz *size, contenders []*contender) {
	if *profileFlag == "" {
		return
	}
	if err := os.MkdirAll(*profileFlag, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, c := range contenders {
		if c.paths == nil { // the exporters count their own requests; the others are not profiled
			continue
		}
		file := filepath.Join(*profileFlag, fileName(sz.name+"-"+c.name)+".pprof")
		f, err := os.Create(file)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.conn.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
			b.Fatalf("-profile: %v (is pg_stat_statements loaded?)", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		for range profileRounds {
			if err := c.collect(ctx); err != nil {
				pprof.StopCPUProfile()
				b.Fatalf("size %s, %s, profiled: %v", sz.name, c.name, err)
			}
		}
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		rows, err := statements(ctx, e.conn, profileRounds)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("\nsize %s, %s: %d collections profiled; Go CPU profile %s (go tool pprof -top %s)\n", sz.name, c.name, profileRounds, file, file)
		fmt.Println("| statement | calls / collection | ms / collection | of which JIT ms | share | mean ms | max ms | rows / collection |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range rows {
			fmt.Printf("| `%s` | %.1f | %.2f | %.2f | %.0f%% | %.3f | %.2f | %.0f |\n", r.query, r.calls, r.ms, r.jitMS, 100*r.share, r.meanMS, r.maxMS, r.rows)
		}
	}
}

// statements reads pg_stat_statements since its reset: the statements of
// the camunda database, the costliest first, per collection of n.
func statements(ctx context.Context, conn *pgx.Conn, n int) ([]statementRow, error) {
	rs, err := conn.Query(ctx, `SELECT calls, rows, total_exec_time, mean_exec_time, max_exec_time,
	jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time, query
	FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
	WHERE d.datname = current_database() AND query NOT LIKE '%pg_stat_statements%'
	ORDER BY total_exec_time DESC`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []statementRow
	var total float64
	for rs.Next() {
		var r statementRow
		var calls, rows int64
		if err := rs.Scan(&calls, &rows, &r.ms, &r.meanMS, &r.maxMS, &r.jitMS, &r.query); err != nil {
			return nil, err
		}
		r.calls, r.rows, r.ms, r.jitMS = float64(calls)/float64(n), float64(rows)/float64(n), r.ms/float64(n), r.jitMS/float64(n)
		total += r.ms
		r.query = shorten(r.query, 160)
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if total > 0 {
			out[i].share = out[i].ms / total
		}
	}
	if len(out) > 15 {
		out = out[:15]
	}
	return out, nil
}

// shorten puts a statement on one line of at most n characters.
func shorten(q string, n int) string {
	q = strings.Join(strings.Fields(q), " ")
	q = strings.ReplaceAll(q, "|", `\|`)
	if len(q) > n {
		q = q[:n] + "…"
	}
	return q
}

// fileName makes s a file name.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			return r
		}
		return '_'
	}, s)
}
