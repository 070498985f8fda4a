package poll

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/statefile"
	"github.com/workflow-exporter/workflow-exporter/collectors"
)

// StorageOptions keep a source's state in a file (--storage.path): what
// its alerts and joins depend on survives a restart (docs/production.md,
// "Restarts").
type StorageOptions struct {
	// Dir is the storage directory; the source's file is
	// statefile.Path(Dir, kind, name).
	Dir string
	// Identity is what the source reads (an engine's URL and name, a
	// database's host, port and name); a file written for another is not
	// restored.
	Identity string
	// Interval is the least time between two writes while the exporter
	// runs; the state is written after a collection once it has passed,
	// and when the exporter stops.
	Interval time.Duration
	// MaxAge is the oldest file restored: an older one is stale.
	MaxAge time.Duration
	// Program is the exporter version, written into the file.
	Program string
}

// storage is a source's state file.
type storage struct {
	o    StorageOptions
	path string

	// mu orders the writes: a write never replaces a newer state.
	mu          sync.Mutex
	lastEncoded time.Time // by the exporter clock; read and set by the collecting goroutine
	seq         uint64    // of the last encoding
	written     uint64    // the seq of the file on disk
	failing     bool      // the last write failed (logged once until one succeeds)

	// writing counts the periodic writes under way (after their
	// collection's done): Close waits for them.
	writing sync.WaitGroup
}

// wait waits for the periodic writes under way, or for ctx.
func (st *storage) wait(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		st.writing.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// encodedState is a state encoded for the file.
type encodedState struct {
	seq   uint64
	bytes []byte
	final bool
}

// UseStorage keeps the source's state in o.Dir from now on, and restores
// the state a previous process left there. Call it before the first
// collection. A missing, corrupt, stale or foreign file is one warning and
// a fresh start; a collector whose section is missing or was written for
// another table is a fresh start of that collector. A file written as its
// process stopped (final) is restored once: it is rewritten as a running
// state at once, so that a successor of this process, should it crash
// before it writes its own, does not count again what this one counts.
func (s *Source) UseStorage(o StorageOptions) {
	stateful := false
	for _, c := range s.o.Collectors {
		_, ok := c.(collectors.Stateful)
		stateful = stateful || ok
	}
	if !stateful {
		return // nothing to keep (a delivery)
	}
	st := &storage{o: o, path: statefile.Path(o.Dir, s.o.Kind, s.o.Name)}
	s.storage = st
	log := s.o.Logger.With("kind", s.o.Kind, "name", s.o.Name)
	f, err := statefile.Read(st.path)
	if err == nil {
		err = statefile.Check(st.path, f, s.o.Kind, s.o.Name, o.Identity, s.o.Now(), o.MaxAge)
	}
	if err != nil {
		log.Warn("state not restored: a fresh start, as without --storage.path (lock ages and worker idle times count from now, redeliveries before the restart are forgotten, counters start from a baseline)", "err", err)
		return
	}
	var restored, fresh []string
	for _, c := range s.o.Collectors {
		sc, ok := c.(collectors.Stateful)
		if !ok {
			continue
		}
		sec, ok := f.Sections[c.Name()]
		switch {
		case !ok:
			fresh = append(fresh, c.Name()+" (no state in the file)")
		case sec.Key != sc.StateKey():
			fresh = append(fresh, fmt.Sprintf("%s (the file's state is for %q, this collector's for %q)", c.Name(), sec.Key, sc.StateKey()))
		default:
			if err := sc.LoadState(sec.Data, f.Final); err != nil {
				fresh = append(fresh, fmt.Sprintf("%s (%v)", c.Name(), err))
				continue
			}
			restored = append(restored, c.Name())
		}
	}
	if len(fresh) > 0 {
		log.Warn("state of some collectors not restored: they start fresh", "path", st.path, "collectors", strings.Join(fresh, "; "))
	}
	how := "remembered state restored; counters start from a baseline (the file was written while the previous process ran, which may have counted more since)"
	if f.Final {
		how = "state restored; counters go on from where the previous process stopped"
	}
	log.Info(how, "path", st.path, "written", f.Written.UTC().Format(time.RFC3339), "age", s.o.Now().Sub(f.Written).Round(time.Second).String(),
		"collectors", strings.Join(restored, ","), "program", f.Program)
	if f.Final {
		f.Final = false
		if err := statefile.Write(st.path, f); err != nil {
			log.Warn("cannot mark the restored state file as taken over; if this process stops without writing its own state, its successor may count again what this one counted", "path", st.path, "err", err)
		}
	}
}

// due encodes the state if the write interval has passed since the last
// encoding; nil otherwise. Only the collecting goroutine calls it.
func (st *storage) due(s *Source) *encodedState {
	now := s.o.Now()
	if !st.lastEncoded.IsZero() && now.Sub(st.lastEncoded) < st.o.Interval {
		return nil
	}
	st.lastEncoded = now
	return st.encode(s, false)
}

// encode encodes every stateful collector's committed state. No collection
// may run meanwhile.
func (st *storage) encode(s *Source, final bool) *encodedState {
	f := &statefile.File{
		Header:   statefile.Header{Kind: s.o.Kind, Name: s.o.Name, Identity: st.o.Identity, Written: s.o.Now(), Final: final, Program: st.o.Program},
		Sections: map[string]statefile.Section{},
	}
	var failed []string
	for _, c := range s.o.Collectors {
		sc, ok := c.(collectors.Stateful)
		if !ok {
			continue
		}
		data, err := sc.SaveState()
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", c.Name(), err))
			continue
		}
		f.Sections[c.Name()] = statefile.Section{Key: sc.StateKey(), Data: data}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		s.o.Logger.Warn("some collectors' state cannot be saved; they will start fresh after a restart", "kind", s.o.Kind, "name", s.o.Name, "collectors", strings.Join(failed, "; "))
	}
	b, err := statefile.Encode(f)
	if err != nil {
		s.o.Logger.Warn("state cannot be saved", "kind", s.o.Kind, "name", s.o.Name, "err", err)
		return nil
	}
	st.mu.Lock()
	st.seq++
	seq := st.seq
	st.mu.Unlock()
	return &encodedState{seq: seq, bytes: b, final: final}
}

// write puts an encoded state on disk unless a newer one is there already.
// A failure is logged when it starts, and its end when a write succeeds.
func (st *storage) write(s *Source, e *encodedState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if e.seq <= st.written {
		return
	}
	if err := statefile.WriteBytes(st.path, e.bytes); err != nil {
		if !st.failing {
			s.o.Logger.Warn("cannot write the state file; a restart would start fresh", "kind", s.o.Kind, "name", s.o.Name, "path", st.path, "err", err)
		}
		st.failing = true
		return
	}
	if st.failing {
		s.o.Logger.Info("state file written again", "kind", s.o.Kind, "name", s.o.Name, "path", st.path)
	}
	st.failing = false
	st.written = e.seq
}

// Persist writes the state as the exporter stops (final): its successor
// goes on counting from here. Call it after Close; it writes nothing while
// a collection still runs (Close gave up waiting for it) and reports that.
func (s *Source) Persist() error {
	if s.storage == nil {
		return nil
	}
	s.mu.Lock()
	running := s.inflight != nil
	s.mu.Unlock()
	if running {
		return fmt.Errorf("%s %s: a collection was still running; the state file stays as last written", s.o.Kind, s.o.Name)
	}
	e := s.storage.encode(s, true)
	if e == nil {
		return fmt.Errorf("%s %s: the state could not be encoded", s.o.Kind, s.o.Name)
	}
	s.storage.write(s, e)
	s.storage.mu.Lock()
	defer s.storage.mu.Unlock()
	if s.storage.written != e.seq {
		return fmt.Errorf("%s %s: the state file could not be written (logged)", s.o.Kind, s.o.Name)
	}
	return nil
}

// remembered sums what the collectors report they keep, by kind; nil when
// none reports. Only the collecting goroutine calls it.
func (s *Source) remembered() map[string]int {
	var out map[string]int
	for _, c := range s.o.Collectors {
		r, ok := c.(collectors.Remembering)
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		r.Remembered(func(kind string, n int) { out[kind] += n })
	}
	return out
}
