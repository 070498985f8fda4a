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
// read again.
//
// A poll need not read every row of the lookback, though: re-reading a row
// version a poll already read counts nothing, so a poll may skip every
// version it can prove an earlier poll read. PostgreSQL proves it with the
// snapshot of a poll (Snapshot): every transaction older than the
// snapshot's xmin had ended when the poll began, so a row version such a
// transaction wrote, and that is still there, was visible to that poll and
// was read by it if its timestamp was inside its lookback (which the next
// lookback's is too: the lower bound only moves forward). Since gives the
// horizon of the last committed poll; a poll reads the lookback's versions
// written at or after it (xmin not older) and skips the rest. By induction
// over the polls, it reads every version no earlier poll read: the new and
// updated rows, and the late commits, whose transactions were still running
// at the last poll and so are not older than its xmin. The cost of a poll is
// then the versions written since the last poll (plus those of any
// transaction still running then), found through the timestamp index of the
// lookback; the keys remembered are still those of the lookback. Without a
// horizon (the first poll, another server, a table without row versions)
// a poll reads the whole lookback, which is always exact.
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
	// snap is the snapshot of the last committed poll (zero: none).
	snap Snapshot

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

// Snapshot places a poll in the database's transaction order: Xmin and
// Xmax are its snapshot's bounds (PostgreSQL's pg_snapshot_xmin and
// pg_snapshot_xmax of pg_current_snapshot(), 64-bit transaction ids taken
// at the start of the poll, before it reads any row), Server names the
// database server's life (its start time), so that two transaction orders
// are never compared. The zero Snapshot is none.
type Snapshot struct {
	Xmin, Xmax uint64
	Server     string
}

// maxSpan is how far, in transaction ids, a horizon may lie behind the
// current snapshot. PostgreSQL compares 32-bit transaction ids modulo 2^32
// (age() is a 32-bit signed difference); 2^30 keeps every comparison far
// from the wrap, and a poll that follows a pause of a billion transactions
// reads its whole lookback, which is always exact.
const maxSpan = 1 << 30

// Since returns the horizon of the last committed poll for the poll whose
// snapshot is cur: the row versions of the lookback written by
// transactions older than it were read by an earlier poll and may be
// skipped. ok is false when the poll must read every row of the lookback:
// before the first commit, after a poll committed without a snapshot, when
// cur is of another server or lies before the horizon (the transaction ids
// went back: a restored or another database behind the same address), and
// when the horizon is more than maxSpan behind.
func (w *Window) Since(cur Snapshot) (xmin uint64, ok bool) {
	prev := w.snap
	if !w.primed || prev.Server == "" || cur.Server != prev.Server || cur.Xmin < prev.Xmin || cur.Xmax < cur.Xmin || cur.Xmax-prev.Xmin >= maxSpan {
		return 0, false
	}
	return prev.Xmin, true
}

// Commit ends a successful poll that started at dbNow and read every row
// of its lookback, or had no snapshot: the next poll reads its whole
// lookback. Polls that read with a horizon commit with CommitSnapshot.
func (w *Window) Commit(dbNow time.Time) { w.CommitSnapshot(dbNow, Snapshot{}) }

// CommitSnapshot ends a successful poll that started at dbNow with snapshot
// snap: it remembers the poll's keys, moves the lower bound to dbNow minus
// the lookback, forgets keys below it, which no later poll can return, and
// keeps snap as the next poll's horizon (Since). The poll must have read
// every row version of its lookback that its own horizon did not let it
// skip, with reads that began after snap was taken.
func (w *Window) CommitSnapshot(dbNow time.Time, snap Snapshot) {
	w.snap = snap
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
