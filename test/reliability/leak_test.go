package reliability

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// faultedCollections is how many faulted collections of each kind the
// leak test runs (LEAK_COLLECTIONS overrides it, for a longer run by hand).
func faultedCollections() int {
	if n, err := strconv.Atoi(os.Getenv("LEAK_COLLECTIONS")); err == nil && n > 0 {
		return n
	}
	return 200
}

// The margins of the leak test. The baseline and the final reading are
// both taken after closing every idle HTTP connection (the exporter's to the
// proxy, the proxy's to the engine, the test's to the exporter), so they
// compare like with like; a leak of one goroutine or descriptor per
// collection shows as 200.
const (
	goroutineMargin = 5
	fdMargin        = 3
	heapMargin      = 8 << 20
)

// resources is what a leak would grow.
type resources struct {
	goroutines, fds, backends int
	heap                      uint64
}

func (r resources) String() string {
	return fmt.Sprintf("%d goroutines, %d open descriptors, %d PostgreSQL backends, %.1f MiB heap",
		r.goroutines, r.fds, r.backends, float64(r.heap)/(1<<20))
}

// measure reads the resources; backends counts the exporter role's
// sessions (-1 without a database).
func measure(t *testing.T, backends func() int) resources {
	t.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds := -1
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		fds = len(ents)
	}
	b := -1
	if backends != nil {
		b = backends()
	}
	return resources{goroutines: runtime.NumGoroutine(), fds: fds, backends: b, heap: ms.HeapAlloc}
}

// settle waits until the resources are back within the margins of base, or
// fails the test with what grew and a goroutine dump.
func settle(t *testing.T, base resources, quiesce func(), backends func() int, maxBackends int) {
	t.Helper()
	var now resources
	deadline := time.Now().Add(10 * time.Second)
	for {
		quiesce()
		now = measure(t, backends)
		ok := now.goroutines <= base.goroutines+goroutineMargin &&
			now.fds <= base.fds+fdMargin &&
			now.backends <= maxBackends &&
			now.heap <= base.heap+heapMargin
		if ok {
			t.Logf("baseline: %s; after: %s", base, now)
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var dump bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
	t.Fatalf("resources did not return to the baseline (margins: %d goroutines, %d descriptors, %d backends at most, %d MiB heap):\nbaseline: %s\nafter:    %s\n%s",
		goroutineMargin, fdMargin, maxBackends, heapMargin>>20, base, now, dump.String())
}

// runFaulted runs n faulted collections, checking only that each one
// reported the source or a collector down (the fault matrix checks the
// rest). It may run on another goroutine than the test's.
func runFaulted(t *testing.T, r *rig, f fault, n int) error {
	for i := 0; i < n; i++ {
		var p page
		if f.during != nil {
			p = f.during(t, r, i)
		} else {
			time.Sleep(3 * time.Millisecond) // past min_interval
			var err error
			if p, err = r.scrape(60 * time.Second); err != nil {
				return err
			}
		}
		down := false
		for _, v := range p.family("workflow_exporter_collector_up") {
			down = down || v == 0
		}
		if v, _ := p.get("workflow_exporter_source_up", "source", f.kind, "name", f.source); v == 0 {
			down = true
		}
		if !down {
			return fmt.Errorf("faulted collection %d reported nothing down", i)
		}
	}
	return nil
}

// TestNoLeaksDatabase: after faultedCollections faulted collections of each
// kind of the database matrix, and the fault cleared, goroutines, open
// descriptors, the role's PostgreSQL backends and the heap are back at
// their baseline.
func TestNoLeaksDatabase(t *testing.T) {
	srv := pgtest.NewServer(t)
	n := faultedCollections()
	for _, df := range databaseFaults(srv) {
		t.Run(df.name, func(t *testing.T) {
			if df.name == "stopped during a collection" {
				// Each repetition stops and starts the server (about a
				// second); "session terminated during a collection" takes
				// the same path through the exporter 200 times.
				t.Skip("covered by the fault matrix once and by \"session terminated during a collection\" here")
			}
			d := newFaultDB(t, srv)
			t.Setenv("WFX_REL_DSN", d.dsn)
			f := df.fault
			f.kind, f.source = "database", "orders"
			df.make(t, d, &f)
			settings := df.settings
			if df.leakSettings != nil {
				settings = df.leakSettings
			}
			r := newRig(t, databaseConfig(settings...), nil)
			backends := func() int {
				var n int
				c, err := pgtestConnect(srv, d)
				if err != nil {
					return 1 << 20 // the server is down: not settled
				}
				defer c.Close(context.Background())
				if err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, d.role).Scan(&n); err != nil {
					return 1 << 20
				}
				return n
			}
			quiesce := func() { http.DefaultClient.CloseIdleConnections() }
			for i := 0; i < 5; i++ {
				r.collect()
			}
			quiesce()
			base := measure(t, backends)
			start := time.Now()
			f.inject(t)
			err := runFaulted(t, r, f, n)
			f.clear(t)
			must(t, err)
			t.Logf("%d faulted collections in %s", n, time.Since(start).Round(time.Millisecond))
			for i := 0; i < 3; i++ {
				r.collect()
			}
			settle(t, base, quiesce, backends, 2) // max_connections
		})
	}
}

// camundaLeakRigs is how many exporters run the faulted collections of a
// Camunda kind side by side: a source collects one at a time, and a
// faulted collection can take most of a second (a reset endpoint is
// retried twice, after 200 and 400 ms), so 200 in a row would take minutes.
const camundaLeakRigs = 10
