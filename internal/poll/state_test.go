package poll

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/statefile"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// statefulCollector counts its collections and keeps the count as its
// state: what a restored state holds is what it restores.
type statefulCollector struct {
	name, key string
	count     int
	// loaded is what LoadState restored (-1: not called); resumed its
	// resume argument.
	loaded   int
	resumed  bool
	failSave bool
}

func newStateful(name string) *statefulCollector {
	return &statefulCollector{name: name, key: name + "/v1", loaded: -1}
}

func (c *statefulCollector) Name() string { return c.name }
func (c *statefulCollector) Collect(context.Context, *collectors.Sink) ([]prometheus.Metric, error) {
	c.count++
	return nil, nil
}
func (c *statefulCollector) StateKey() string { return c.key }
func (c *statefulCollector) SaveState() ([]byte, error) {
	if c.failSave {
		return nil, errors.New("cannot")
	}
	return []byte{byte(c.count)}, nil
}
func (c *statefulCollector) LoadState(data []byte, resume bool) error {
	if len(data) != 1 {
		return errors.New("one byte expected")
	}
	c.loaded, c.resumed, c.count = int(data[0]), resume, int(data[0])
	return nil
}
func (c *statefulCollector) Remembered(note func(string, int)) { note("locks", c.count) }

// stateRig is a source of stateful collectors over one storage directory,
// with an exporter clock the test moves.
type stateRig struct {
	t    *testing.T
	dir  string
	now  time.Time
	logs *testkit.LogBuffer
}

func (r *stateRig) source(identity string, cs ...*statefulCollector) *Source {
	r.logs = &testkit.LogBuffer{}
	list := make([]collectors.Collector, len(cs))
	for i, c := range cs {
		list[i] = c
	}
	s := NewSource(SourceOptions{Kind: "camunda", Name: "main", MinInterval: time.Nanosecond, Collectors: list,
		Logger: slog.New(slog.NewTextHandler(r.logs, nil)), Now: func() time.Time { return r.now }})
	s.UseStorage(StorageOptions{Dir: r.dir, Identity: identity, Interval: time.Minute, MaxAge: time.Hour, Program: "test"})
	return s
}

// collect runs one collection and waits for the state write after it.
func (r *stateRig) collect(s *Source) {
	r.now = r.now.Add(time.Second)
	s.Refresh(context.Background())
	s.storage.wait(context.Background())
}

func (r *stateRig) warnings() int { return strings.Count(r.logs.String(), "level=WARN") }

func newStateRig(t *testing.T) *stateRig {
	return &stateRig{t: t, dir: t.TempDir(), now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// stopped runs a source for three collections and stops it as SIGTERM
// does: its state (3) is in the file, final.
func (r *stateRig) stopped(identity string) {
	c := newStateful("camunda")
	s := r.source(identity, c)
	for i := 0; i < 3; i++ {
		r.collect(s)
	}
	s.Close(context.Background())
	if err := s.Persist(); err != nil {
		r.t.Fatal(err)
	}
}

func TestStateRestoredAfterAStop(t *testing.T) {
	r := newStateRig(t)
	r.stopped("engine A")
	r.now = r.now.Add(10 * time.Minute)
	c := newStateful("camunda")
	s := r.source("engine A", c)
	if c.loaded != 3 || !c.resumed {
		t.Fatalf("restored %d (resume %v), want 3 resumed\n%s", c.loaded, c.resumed, r.logs.String())
	}
	if r.warnings() != 0 {
		t.Fatalf("warnings on a good restore:\n%s", r.logs.String())
	}
	// Taken over at once: the file no longer reads as final.
	f, err := statefile.Read(statefile.Path(r.dir, "camunda", "main"))
	if err != nil || f.Final {
		t.Fatalf("after the restore the file is %v, final %v", err, f != nil && f.Final)
	}
	r.collect(s)
	if snap := s.Current(); snap.Remembered["locks"] != 4 {
		t.Fatalf("remembered %v, want locks 4", snap.Remembered)
	}
}

// Every unusable file is one warning naming why, and a fresh start: the
// collector's LoadState is never called and the exporter runs on.
func TestUnusableStateIsAFreshStart(t *testing.T) {
	cases := []struct {
		name     string
		prepare  func(r *stateRig)
		identity string
		reason   string
	}{
		{"missing", func(*stateRig) {}, "engine A", "missing"},
		{"corrupt", func(r *stateRig) {
			r.stopped("engine A")
			path := statefile.Path(r.dir, "camunda", "main")
			b, _ := os.ReadFile(path)
			b[len(b)/2] ^= 0xff
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "engine A", "checksum mismatch"},
		{"truncated", func(r *stateRig) {
			r.stopped("engine A")
			path := statefile.Path(r.dir, "camunda", "main")
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path, b[:len(b)/3], 0o600); err != nil {
				t.Fatal(err)
			}
		}, "engine A", "corrupt"},
		{"stale", func(r *stateRig) {
			r.stopped("engine A")
			r.now = r.now.Add(2 * time.Hour)
		}, "engine A", "stale"},
		{"foreign engine", func(r *stateRig) { r.stopped("engine A") }, "engine B", "foreign"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newStateRig(t)
			tc.prepare(r)
			c := newStateful("camunda")
			s := r.source(tc.identity, c)
			if c.loaded != -1 {
				t.Fatalf("LoadState called with %d", c.loaded)
			}
			if r.warnings() != 1 || !strings.Contains(r.logs.String(), tc.reason) || !strings.Contains(r.logs.String(), "a fresh start") {
				t.Fatalf("want one warning naming %q and a fresh start:\n%s", tc.reason, r.logs.String())
			}
			r.collect(s)
			if c.count != 1 {
				t.Fatalf("count %d after the first collection of a fresh start", c.count)
			}
		})
	}
}

// A collector whose section was written for another table (another key)
// starts fresh alone; the others are restored.
func TestStateOfAnotherTableIsNotRestored(t *testing.T) {
	r := newStateRig(t)
	a, b := newStateful("a"), newStateful("b")
	s := r.source("db", a, b)
	r.collect(s)
	s.Close(context.Background())
	if err := s.Persist(); err != nil {
		t.Fatal(err)
	}
	a2, b2 := newStateful("a"), newStateful("b")
	b2.key = "b/v1 table=other"
	r.source("db", a2, b2)
	if a2.loaded != 1 || b2.loaded != -1 {
		t.Fatalf("restored a=%d b=%d, want a=1 and b fresh", a2.loaded, b2.loaded)
	}
	if r.warnings() != 1 || !strings.Contains(r.logs.String(), "table=other") {
		t.Fatalf("want one warning naming b's key:\n%s", r.logs.String())
	}
}

// While running, the state is written after a collection once the write
// interval passed, never final: a successor restores it without resume.
func TestPeriodicStateIsNotFinal(t *testing.T) {
	r := newStateRig(t)
	c := newStateful("camunda")
	s := r.source("engine A", c)
	r.collect(s) // written: the first write is due at once
	r.collect(s) // not: a second later
	f, err := statefile.Read(statefile.Path(r.dir, "camunda", "main"))
	if err != nil || f.Final || f.Sections["camunda"].Data[0] != 1 {
		t.Fatalf("periodic file: %v, %+v", err, f)
	}
	r.now = r.now.Add(time.Minute)
	r.collect(s)
	// A crash now: the successor restores 3 without resume.
	c2 := newStateful("camunda")
	r.source("engine A", c2)
	if c2.loaded != 3 || c2.resumed {
		t.Fatalf("restored %d (resume %v), want 3 without resume", c2.loaded, c2.resumed)
	}
}

// Persist writes nothing while a collection still runs (Close gave up
// waiting), and says so; a collector whose state cannot be saved is left
// out, the others are written.
func TestPersistRefusesARunningCollection(t *testing.T) {
	r := newStateRig(t)
	c := newStateful("camunda")
	s := r.source("engine A", c)
	s.mu.Lock()
	s.inflight = make(chan struct{})
	s.mu.Unlock()
	if err := s.Persist(); err == nil {
		t.Fatal("Persist wrote a state while a collection ran")
	}
	s.mu.Lock()
	s.inflight = nil
	s.mu.Unlock()
	bad := newStateful("bad")
	bad.failSave = true
	s2 := r.source("engine A", newStateful("camunda"), bad)
	if err := s2.Persist(); err != nil {
		t.Fatal(err)
	}
	f, err := statefile.Read(statefile.Path(r.dir, "camunda", "main"))
	if err != nil || len(f.Sections) != 1 {
		t.Fatalf("file %v with sections %v, want camunda's only", err, f)
	}
}
