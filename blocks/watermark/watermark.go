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
//
// After a gap (no poll for a while: nothing scraped, the database down) the
// next poll would read every row of the gap. SetMaxCatchUp bounds that: a
// poll reads at most the lookback plus the catch-up span, and the older
// part of the gap is skipped (Skipped counts it: its rows are never
// counted); a poll that fails by timing out while catching up halves the
// span of the next attempt (Backoff), so retries read less, not more.
//
// A window's state can outlive the process (State, Restore): the keys are
// hashed with a salt the state carries, so a restarted exporter recognises
// the rows its predecessor counted.
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
	"crypto/rand"
	"encoding/binary"
	"time"
)

// Window remembers counted keys inside the late-commit lookback. It is not
// safe for concurrent use; a collector owns it.
type Window struct {
	late   time.Duration
	salt   uint64
	seen   map[uint64]int64 // key hash -> row timestamp (Unix ns)
	lower  time.Time
	primed bool
	// snap is the snapshot of the last committed poll (zero: none).
	snap Snapshot

	// pending holds the keys of the poll in progress until Commit.
	pending map[uint64]int64

	// maxCatchUp bounds how far behind the lookback a poll reads (0: no
	// bound); halvings is how often a timed-out catch-up halved it since
	// the last success; skip is the span the poll in progress skips,
	// skipped the total of committed polls.
	maxCatchUp time.Duration
	halvings   int
	skip       time.Duration
	skipped    time.Duration
	// gap is how far behind the lookback the poll in progress started
	// before the bound: what a halving of the span would cut.
	gap time.Duration
}

// New returns a window with the given lookback. The lookback must exceed the
// longest transaction that writes the table, plus any clock skew between the
// writers and the database.
func New(lateCommitWindow time.Duration) *Window {
	return &Window{late: lateCommitWindow, salt: Salt(), seen: map[uint64]int64{}, pending: map[uint64]int64{}}
}

// Salt returns a random salt for Hash, one per memory of row keys.
func Salt() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand documents it)
	return binary.LittleEndian.Uint64(b[:])
}

// SetMaxCatchUp bounds the gap a poll reads behind the lookback (0: no
// bound): after a longer gap the poll reads the last d plus the lookback,
// and the rest of the gap is skipped.
func (w *Window) SetMaxCatchUp(d time.Duration) { w.maxCatchUp = d }

// Lower returns the exclusive lower bound on the timestamp column for the
// poll that starts at dbNow, the database clock at the start of the poll's
// transaction. After a gap longer than the catch-up span it is that span
// plus the lookback before dbNow, and the poll skips the rest of the gap
// (Skipping says how much; Commit adds it to Skipped).
func (w *Window) Lower(dbNow time.Time) time.Time {
	if !w.primed {
		return dbNow.Add(-w.late)
	}
	w.skip, w.gap = 0, dbNow.Add(-w.late).Sub(w.lower)
	if w.maxCatchUp > 0 {
		span := w.maxCatchUp >> min(w.halvings, 62)
		if floor := dbNow.Add(-w.late - span); floor.After(w.lower) {
			w.skip = floor.Sub(w.lower)
			return floor
		}
	}
	return w.lower
}

// Skipping is the span of the gap the poll in progress skips (Lower).
func (w *Window) Skipping() time.Duration { return w.skip }

// Skipped is the total span the committed polls skipped.
func (w *Window) Skipped() time.Duration { return w.skipped }

// Backoff notes that the poll in progress failed by running out of time:
// if it was catching up (it read further behind the lookback than half
// its catch-up span), the next attempt reads half the span. A success
// ends the halving. A poll that timed out for another reason (a slow
// gauge query) with no gap to speak of changes nothing.
func (w *Window) Backoff() {
	if w.primed && w.maxCatchUp > 0 && w.halvings < 62 && w.gap > w.maxCatchUp>>(w.halvings+1) {
		w.halvings++
	}
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
	w.skipped += w.skip
	w.skip, w.halvings = 0, 0
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
func (w *Window) Abort() {
	clear(w.pending)
	w.skip = 0
}

// Remembered returns how many keys the window holds (its memory use).
func (w *Window) Remembered() int { return len(w.seen) }

// hash is the key's Hash with the window's salt.
func (w *Window) hash(key []string) uint64 { return Hash(w.salt, key...) }

// Hash is FNV-1a (64 bits) over the salt and the key's parts, each part
// ended by 0xff: stable across processes, so a restored state recognises
// its keys (the state carries the salt); the salt, random per memory
// (Salt), keeps rows from being chosen to collide.
func Hash(salt uint64, key ...string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h ^= (salt >> (8 * i)) & 0xff
		h *= prime
	}
	for _, k := range key {
		for i := 0; i < len(k); i++ {
			h ^= uint64(k[i])
			h *= prime
		}
		h ^= 0xff
		h *= prime
	}
	return h
}

// State is a window's committed state, for a state that outlives the
// process: the salt of its key hashes, the lower bound of the next poll
// and the keys inside the lookback with their row times (Unix ns), in two
// parallel slices (compact to encode).
type State struct {
	Salt   uint64
	Lower  time.Time
	Hashes []uint64
	Stamps []int64
}

// State returns the committed state; nil before the first committed poll
// (nothing to resume).
func (w *Window) State() *State {
	if !w.primed {
		return nil
	}
	st := &State{Salt: w.salt, Lower: w.lower, Hashes: make([]uint64, 0, len(w.seen)), Stamps: make([]int64, 0, len(w.seen))}
	for h, ts := range w.seen {
		st.Hashes = append(st.Hashes, h)
		st.Stamps = append(st.Stamps, ts)
	}
	return st
}

// Restore resumes the committed state of a window of an earlier process,
// before the first poll: the next poll reads from where that process's
// last poll left off (bounded by the catch-up span) and counts each row it
// had not counted, once. A state whose slices disagree is refused (false),
// and the window stays as it was.
func (w *Window) Restore(st *State) bool {
	if st == nil || len(st.Hashes) != len(st.Stamps) || st.Lower.IsZero() {
		return false
	}
	// The horizon (Since) is not kept: the next poll reads its whole
	// lookback, as the first poll of a process does.
	w.salt, w.lower, w.primed, w.snap = st.Salt, st.Lower, true, Snapshot{}
	w.seen = make(map[uint64]int64, len(st.Hashes))
	for i, h := range st.Hashes {
		w.seen[h] = st.Stamps[i]
	}
	clear(w.pending)
	return true
}
