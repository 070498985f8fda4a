// Package watermark turns rows that carry a timestamp into counters that
// never double-count and never go down.
//
// A writer's timestamp (now() in its transaction, or its own clock) is taken
// before its transaction commits. A plain "rows newer than the last poll"
// watermark misses a row whose transaction began before the watermark passed
// its timestamp and committed after. A Window therefore re-reads a lookback
// of LateCommitWindow behind the last poll on every poll and remembers the
// keys it has counted whose timestamps are still inside that lookback, so a
// late row is counted when it becomes visible, and exactly once.
//
// Counts live in the exporter's memory and only grow; deleting old rows
// (retention) cannot lower them, and rows older than the lookback are never
// read again. The cost of a poll is the rows written in the last
// LateCommitWindow plus the poll interval, independent of the table's size.
package watermark

import (
	"hash/maphash"
	"time"
)

// Window remembers counted keys inside the late-commit lookback. It is not
// safe for concurrent use; a collector owns it.
type Window struct {
	late   time.Duration
	seed   maphash.Seed
	seen   map[uint64]int64 // key hash -> row timestamp (Unix ns)
	lower  time.Time
	primed bool

	// pending holds the keys of the poll in progress until Commit.
	pending map[uint64]int64
}

// New returns a window with the given lookback. The lookback must exceed the
// longest transaction that writes the table, plus any clock skew between the
// writers and the database.
func New(lateCommitWindow time.Duration) *Window {
	return &Window{late: lateCommitWindow, seed: maphash.MakeSeed(), seen: map[uint64]int64{}, pending: map[uint64]int64{}}
}

// Lower returns the exclusive lower bound on the timestamp column for the
// poll that starts at dbNow, the database clock at the start of the poll's
// transaction.
func (w *Window) Lower(dbNow time.Time) time.Time {
	if !w.primed {
		return dbNow.Add(-w.late)
	}
	return w.lower
}

// Primed reports whether a baseline poll has been committed. Rows of the
// baseline poll are remembered but not counted: they happened before the
// exporter started watching.
func (w *Window) Primed() bool { return w.primed }

// Observe reports whether the row identified by key, with timestamp ts, is
// new and must be counted. It returns false for rows already counted and for
// every row of the baseline poll. A row counted before and stamped again
// since (updated, its key unchanged) is remembered by its newer timestamp,
// so it counts again only if it is updated after the lookback has let it
// go. Nothing is remembered until Commit, so a failed poll can be retried
// without losing or doubling anything.
func (w *Window) Observe(ts time.Time, key ...string) bool {
	h, ns := w.hash(key), ts.UnixNano()
	if p, ok := w.pending[h]; ok {
		w.pending[h] = max(p, ns)
		return false
	}
	if s, ok := w.seen[h]; ok {
		if ns > s {
			w.pending[h] = ns
		}
		return false
	}
	w.pending[h] = ns
	return w.primed
}

// Commit ends a successful poll that started at dbNow: it remembers the
// poll's keys, moves the lower bound to dbNow minus the lookback, and
// forgets keys below it, which no later poll can return.
func (w *Window) Commit(dbNow time.Time) {
	for h, ts := range w.pending {
		w.seen[h] = ts
	}
	clear(w.pending)
	w.lower = dbNow.Add(-w.late)
	w.primed = true
	floor := w.lower.UnixNano()
	for h, ts := range w.seen {
		if ts <= floor {
			delete(w.seen, h)
		}
	}
}

// Abort forgets the keys of a failed poll.
func (w *Window) Abort() { clear(w.pending) }

// Remembered returns how many keys the window holds (its memory use).
func (w *Window) Remembered() int { return len(w.seen) }

func (w *Window) hash(key []string) uint64 {
	var h maphash.Hash
	h.SetSeed(w.seed)
	for _, k := range key {
		h.WriteString(k)
		h.WriteByte(0xff)
	}
	return h.Sum64()
}
