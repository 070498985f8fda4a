// Package benchcamunda measures what one collection of the Camunda collector
// costs as an engine grows, in both of its modes, against the naive way of
// getting the same counts and against the cheapest possible one. It runs
// only with `make bench-camunda` (go test -bench); `make test` compiles it
// and runs nothing heavy.
//
// Setup, all in one run: one throwaway PostgreSQL (test/harness/pgtest.Start)
// with one database for one Camunda 7.24 engine (test/harness/camundatest, on
// that database, with the JVM's default JIT and GC instead of the harness's
// fast-start flags). The workload is built through the engine's REST API:
// per topic one process definition whose external service task is a
// parallel multi-instance (one process start creates all the topic's
// tasks), then workers lock, fail, complete and let lapse some tasks of
// every topic, and every 20th topic's definition is suspended with its
// instances. The same per-topic mix at every size:
//
//   - A: -small-topics topics (20: 5,000 open tasks, ~5k history rows);
//   - B: -topics topics (200: 50,000 open tasks, ~54k history rows), the
//     same engine after adding topics;
//   - C: B with the history log (ACT_HI_EXT_TASK_LOG) grown to -history
//     rows (1M) by an SQL INSERT ... SELECT generate_series of old
//     creation/success pairs, then VACUUM ANALYZE;
//   - C+index: C after CREATE INDEX ON act_hi_ext_task_log (timestamp_).
//
// Contenders, measured round-robin per size (-warmup untimed rounds, then
// -samples timed ones): the exporter's Camunda source built from a config
// file as the binary builds it, in REST mode and in engine-database mode;
// the "list everything" baseline (every open task paged through
// GET /external-task, 1000 at a time, counted per topic and state by the
// client); and the "physical limit", one GROUP BY over act_ru_ext_task
// through pgx. Per collection: wall time, HTTP requests (a counting reverse
// proxy sits in front of the engine), engine JVM CPU and PostgreSQL CPU
// (utime+stime from /proc, the server's postmaster and all its children).
// Each contender's per-topic counts are checked against the engine's
// tables at every size.
package benchcamunda

import (
	"flag"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
)

var (
	samplesFlag   = flag.Int("samples", 9, "timed collections per contender and size (the median wall time is reported)")
	warmupFlag    = flag.Int("warmup", 5, "untimed collections per contender and size before the timed ones, at least")
	maxWarmupFlag = flag.Int("max-warmup", 30, "untimed collections per contender and size at most, while the engine's JIT compiler takes more than 5% of its CPU")
	smallFlag     = flag.Int("small-topics", 20, "topics of size A")
	topicsFlag    = flag.Int("topics", 200, "topics of sizes B and C")
	historyFlag   = flag.Int("history", 1000000, "rows of the history log (ACT_HI_EXT_TASK_LOG) at size C")
	jvmFlag       = flag.String("jvm", "-Xmx1g", "engine JVM flags, space-separated; they replace the harness's fast-start flags (-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m)")
	sizesFlag     = flag.String("sizes", "A,B,C,C+index,B again", "the sizes to measure, comma-separated (those they grow from are built, not measured)")
	ipcFlag       = flag.Int("ipc-repeat", 3, "rounds of the items-per-count measurement (each: one count per topic, 30 list pages per list shape)")
)

// TestMain keeps the engine's and the server's files in a directory of this
// run (a cleanup of stray /tmp directories by a concurrent run cannot
// remove them), and stops what the benchmark started on SIGINT or SIGTERM.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wfx-benchcam-")
	if err == nil && os.Chmod(dir, 0o755) == nil {
		if err := os.Setenv("TMPDIR", dir); err != nil {
			panic(err)
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		runCleanups()
		if dir != "" {
			os.RemoveAll(dir)
		}
		os.Exit(1)
	}()
	code := m.Run()
	runCleanups()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// cleanups stop the engine and the server: run by the benchmark's defers,
// by TestMain after the run, or on a signal, whichever comes first; each
// runs once.
var cleanups struct {
	mu  sync.Mutex
	fns []func()
}

func onCleanup(f func()) func() {
	var once sync.Once
	g := func() { once.Do(f) }
	cleanups.mu.Lock()
	cleanups.fns = append(cleanups.fns, g)
	cleanups.mu.Unlock()
	return g
}

func runCleanups() {
	cleanups.mu.Lock()
	fns := cleanups.fns
	cleanups.fns = nil
	cleanups.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
