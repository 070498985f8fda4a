package watermark

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// row is one visible row of the table.
type row struct {
	id string
	ts int // seconds after t0
}

// poll simulates one collection: the rows visible at dbNow with a timestamp
// above the window's lower bound are observed; it returns how many counted.
func poll(w *Window, dbNow int, visible []row) int {
	now := at(dbNow)
	lower := w.Lower(now)
	n := 0
	for _, r := range visible {
		if at(r.ts).After(lower) && w.Observe(at(r.ts), r.id) {
			n++
		}
	}
	w.Commit(now)
	return n
}

func TestLateCommitCountedExactlyOnce(t *testing.T) {
	w := New(60 * time.Second)
	if got := poll(w, 0, []row{{"old", -10}}); got != 0 {
		t.Fatalf("baseline poll counted %d rows", got)
	}
	// Row "late" gets timestamp 5 but its transaction commits at 40: polls
	// at 30 do not see it; the poll at 60 does, although the watermark
	// (the last poll) has long passed 5.
	steps := []struct {
		now     int
		visible []row
		want    int
	}{
		{30, []row{{"old", -10}, {"a", 20}}, 1},
		{60, []row{{"old", -10}, {"a", 20}, {"late", 5}, {"b", 55}}, 2},
		{90, []row{{"old", -10}, {"a", 20}, {"late", 5}, {"b", 55}}, 0},
		{200, []row{{"old", -10}, {"a", 20}, {"late", 5}, {"b", 55}, {"c", 150}}, 1},
	}
	for _, s := range steps {
		if got := poll(w, s.now, s.visible); got != s.want {
			t.Fatalf("poll at %d counted %d, want %d", s.now, got, s.want)
		}
	}
}

// A counted row stamped again under the same key (a record updated and
// still in its status) is remembered by its newer time: it does not count
// again when the lookback passes its first time, only when it is updated
// after the lookback let it go.
func TestUpdatedRowCountsOnce(t *testing.T) {
	w := New(60 * time.Second)
	poll(w, 0, nil)
	for _, s := range []struct {
		now  int
		ts   int
		want int
	}{
		{10, 5, 1},   // counted
		{40, 35, 0},  // updated: the same key
		{70, 35, 0},  // the lookback passed 5, not 35
		{85, 35, 0},  // the row is read again: still remembered
		{100, 35, 0}, // forgotten now (35 <= 100-60): not read either
		{200, 190, 1},
	} {
		if got := poll(w, s.now, []row{{"k1", s.ts}}); got != s.want {
			t.Fatalf("poll at %d (row stamped %d) counted %d, want %d", s.now, s.ts, got, s.want)
		}
	}
}

func TestRetentionDeleteChangesNothing(t *testing.T) {
	w := New(60 * time.Second)
	poll(w, 0, nil)
	all := []row{{"a", 10}, {"b", 20}, {"c", 25}}
	if got := poll(w, 30, all); got != 3 {
		t.Fatalf("counted %d, want 3", got)
	}
	// Retention deletes a and b: nothing is counted again, nothing un-counted.
	if got := poll(w, 40, []row{{"c", 25}}); got != 0 {
		t.Fatalf("after delete counted %d, want 0", got)
	}
}

func TestAbortKeepsStateForRetry(t *testing.T) {
	w := New(60 * time.Second)
	poll(w, 0, nil)
	lower := w.Lower(at(30))
	if !w.Observe(at(10), "a") {
		t.Fatal("new row not counted")
	}
	w.Abort()
	if got := w.Lower(at(30)); !got.Equal(lower) {
		t.Fatalf("abort moved the lower bound")
	}
	if got := poll(w, 30, []row{{"a", 10}}); got != 1 {
		t.Fatalf("row of an aborted poll counted %d times on retry, want 1", got)
	}
}

func TestMemoryIsBoundedByTheLookback(t *testing.T) {
	w := New(60 * time.Second)
	poll(w, 0, nil)
	var rows []row
	for i := 0; i < 1000; i++ {
		rows = append(rows, row{id: string(rune('a'+i%26)) + string(rune(i)), ts: i})
	}
	poll(w, 1000, rows)
	// Only rows with ts > 1000-60 stay remembered.
	if got := w.Remembered(); got != 59 {
		t.Fatalf("remembered %d keys, want 59", got)
	}
}

func TestDuplicateKeysWithinOnePollCountOnce(t *testing.T) {
	w := New(time.Minute)
	poll(w, 0, nil)
	if got := poll(w, 10, []row{{"a", 5}, {"a", 5}}); got != 1 {
		t.Fatalf("counted %d, want 1", got)
	}
}

// After a gap longer than the catch-up span, a poll reads the span plus
// the lookback and skips the rest of the gap, once: the skipped rows are
// never counted, the later ones are, and the skipped span is reported.
func TestCatchUpSkipsTheOlderPartOfAGap(t *testing.T) {
	w := New(60 * time.Second)
	w.SetMaxCatchUp(100 * time.Second)
	poll(w, 0, nil)
	// An hour without polls; rows all along it.
	var rows []row
	for s := 10; s <= 3600; s += 10 {
		rows = append(rows, row{fmt.Sprint("r", s), s})
	}
	if got := w.Lower(at(3600)); !got.Equal(at(3600 - 60 - 100)) {
		t.Fatalf("lower after an hour = %v, want the span plus the lookback before the poll (%v)", got, at(3440))
	}
	// The poll counts the rows after the bound: 3450..3600, 16 rows.
	if got := poll(w, 3600, rows); got != 16 {
		t.Fatalf("the catch-up poll counted %d rows, want 16", got)
	}
	if want := (3600 - 60 - 100 + 60) * time.Second; w.Skipped() != want {
		t.Fatalf("skipped %s, want %s (from the last poll's lower bound to the catch-up bound)", w.Skipped(), want)
	}
	// The next poll reads from the last one on: nothing skipped, nothing
	// counted twice.
	if got := poll(w, 3630, append(rows, row{"new", 3620})); got != 1 {
		t.Fatalf("the poll after the catch-up counted %d rows, want 1", got)
	}
	if want := 3500 * time.Second; w.Skipped() != want {
		t.Fatalf("skipped grew to %s after a poll without a gap", w.Skipped())
	}
}

// A catch-up that times out reads half as far back at its next attempt,
// and so on, down to the lookback alone: retries never read more than the
// attempt that failed. A success ends the halving.
func TestTimedOutCatchUpReadsLessAtEachRetry(t *testing.T) {
	w := New(60 * time.Second)
	w.SetMaxCatchUp(800 * time.Second)
	poll(w, 0, nil)
	prev := time.Duration(1 << 62)
	for i, now := range []int{3600, 3630, 3660, 3690, 3720} {
		read := at(now).Sub(w.Lower(at(now)))
		if read >= prev {
			t.Fatalf("attempt %d reads %s back, the failed attempt before it %s", i, read, prev)
		}
		prev = read
		w.Backoff()
		w.Abort()
	}
	if w.Skipped() != 0 {
		t.Fatalf("failed polls counted a skipped span of %s", w.Skipped())
	}
	// 800s halved five times: 25s, plus the lookback.
	if got := at(3750).Sub(w.Lower(at(3750))); got != 85*time.Second {
		t.Fatalf("after five timeouts the poll reads %s back, want 85s", got)
	}
	w.Commit(at(3750))
	w.Lower(at(6000))
	if got := w.Skipping(); got != 6000*time.Second-3750*time.Second-800*time.Second {
		t.Fatalf("after a success the span is back to 800s: skipping %s", got)
	}
}

// A timeout without a gap (a slow query) does not shrink the catch-up.
func TestTimeoutWithoutAGapKeepsTheSpan(t *testing.T) {
	w := New(60 * time.Second)
	w.SetMaxCatchUp(800 * time.Second)
	poll(w, 0, nil)
	for _, now := range []int{30, 60, 90} {
		w.Lower(at(now))
		w.Backoff()
		w.Abort()
	}
	w.Lower(at(2000))
	if got := w.Skipping(); got != (2000-60-800-(-60))*time.Second {
		t.Fatalf("skipping %s after timeouts without a gap, want the full span kept", got)
	}
}

// A restored state resumes counting where the earlier process stopped:
// the rows it counted do not count again (the late commit included), the
// ones that arrived since count once; a new window (no state) would count
// none of them (its first poll is a baseline).
func TestRestoredStateCountsEachRowOnce(t *testing.T) {
	w := New(60 * time.Second)
	poll(w, 0, nil)
	rows := []row{{"a", 10}, {"b", 20}}
	if got := poll(w, 30, rows); got != 2 {
		t.Fatalf("counted %d", got)
	}
	st := w.State()
	next := New(60 * time.Second)
	if !next.Restore(st) {
		t.Fatal("a state State returned was refused")
	}
	// The restarted process sees a, b again (inside the lookback), a late
	// commit stamped before the stop, and a row written after it.
	rows = append(rows, row{"late", 25}, row{"c", 50})
	if got := poll(next, 60, rows); got != 2 {
		t.Fatalf("the restored window counted %d rows at its first poll, want 2 (late and c)", got)
	}
	fresh := New(60 * time.Second)
	if got := poll(fresh, 60, rows); got != 0 {
		t.Fatalf("a fresh window counted %d rows at its first poll", got)
	}
}

func TestRestoreRefusesABrokenState(t *testing.T) {
	w := New(time.Minute)
	if w.State() != nil {
		t.Fatal("an unprimed window returned a state")
	}
	for name, st := range map[string]*State{
		"nil":      nil,
		"slices":   {Salt: 1, Lower: t0, Hashes: []uint64{1, 2}, Stamps: []int64{1}},
		"no lower": {Salt: 1, Hashes: []uint64{1}, Stamps: []int64{1}},
	} {
		if w.Restore(st) {
			t.Errorf("%s: restored", name)
		}
	}
	if w.Primed() {
		t.Fatal("a refused state primed the window")
	}
}

func TestSince(t *testing.T) {
	snap := Snapshot{Xmin: 1000, Xmax: 1010, Server: "s1"}
	for _, c := range []struct {
		name   string
		commit *Snapshot // nil: no poll committed
		cur    Snapshot
		want   uint64
		ok     bool
	}{
		{"before the first poll", nil, snap, 0, false},
		{"after a poll without a snapshot", &Snapshot{}, snap, 0, false},
		{"the same server, later", &snap, Snapshot{Xmin: 1500, Xmax: 1600, Server: "s1"}, 1000, true},
		{"the same snapshot", &snap, snap, 1000, true},
		{"another server", &snap, Snapshot{Xmin: 1500, Xmax: 1600, Server: "s2"}, 0, false},
		{"transaction ids went back", &snap, Snapshot{Xmin: 900, Xmax: 950, Server: "s1"}, 0, false},
		{"too far behind", &snap, Snapshot{Xmin: 1000 + maxSpan, Xmax: 1000 + maxSpan, Server: "s1"}, 0, false},
		{"just within reach", &snap, Snapshot{Xmin: 999 + maxSpan, Xmax: 999 + maxSpan, Server: "s1"}, 1000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := New(time.Minute)
			if c.commit != nil {
				w.CommitSnapshot(at(0), *c.commit)
			}
			got, ok := w.Since(c.cur)
			if got != c.want || ok != c.ok {
				t.Fatalf("Since = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
	// A failed poll keeps the horizon of the last committed one.
	w := New(time.Minute)
	w.CommitSnapshot(at(0), snap)
	w.Observe(at(1), "a")
	w.Abort()
	if got, ok := w.Since(Snapshot{Xmin: 2000, Xmax: 2000, Server: "s1"}); got != 1000 || !ok {
		t.Fatalf("after an aborted poll Since = %d, %v; want 1000, true", got, ok)
	}
}

// version is one row version in the model database of TestHorizonReadsWhatTheLookbackReads.
type version struct {
	key  string
	ts   int    // its timestamp (seconds)
	xmin uint64 // the transaction that wrote it
}

// mvcc is a small model of PostgreSQL's row versions and snapshots: each
// transaction writes one version of one row (a new key or a new version of
// an existing one) stamped with its start time, and it becomes visible when
// the transaction commits.
type mvcc struct {
	next    uint64
	running map[uint64]version // by xid
	rows    map[string]version // the committed, visible version of each key
}

func (m *mvcc) begin(key string, ts int) uint64 {
	m.next++
	m.running[m.next] = version{key, ts, m.next}
	return m.next
}

func (m *mvcc) end(xid uint64, commit bool) {
	if commit {
		v := m.running[xid]
		m.rows[v.key] = v
	}
	delete(m.running, xid)
}

func (m *mvcc) snapshot() Snapshot {
	s := Snapshot{Xmin: m.next + 1, Xmax: m.next + 1, Server: "model"}
	for xid := range m.running {
		s.Xmin = min(s.Xmin, xid)
	}
	return s
}

// TestHorizonReadsWhatTheLookbackReads checks the argument of the package
// comment on random histories: a window that skips the versions older than
// Since counts exactly what a window that reads the whole lookback counts,
// poll after poll, with late commits (transactions up to twice the
// lookback long), updates that re-stamp a row, aborts and failed polls.
func TestHorizonReadsWhatTheLookbackReads(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rnd := newRand(seed)
		m := &mvcc{running: map[uint64]version{}, rows: map[string]version{}}
		full, skip := New(60*time.Second), New(60*time.Second)
		type open struct {
			xid uint64
			end int
		}
		var txs []open
		writing := map[string]bool{}
		keys := 0
		read, skipped := 0, 0
		for now := 0; now < 600; now++ {
			// Transactions end (commit or abort) when their time comes.
			kept := txs[:0]
			for _, tx := range txs {
				if tx.end <= now {
					delete(writing, m.running[tx.xid].key)
					m.end(tx.xid, rnd.intn(10) > 0)
				} else {
					kept = append(kept, tx)
				}
			}
			txs = kept
			// New transactions: an insert or an update of a row nobody is
			// writing, most short, some long.
			for range rnd.intn(4) {
				key := fmt.Sprintf("k%d", keys)
				if keys > 0 && rnd.intn(3) == 0 {
					key = fmt.Sprintf("k%d", rnd.intn(keys))
				} else {
					keys++
				}
				if writing[key] {
					continue
				}
				writing[key] = true
				d := rnd.intn(3)
				if rnd.intn(20) == 0 {
					d = rnd.intn(120)
				}
				txs = append(txs, open{m.begin(key, now), now + d})
			}
			if now%7 != 0 {
				continue
			}
			snap := m.snapshot()
			since, ok := skip.Since(snap)
			nFull, nSkip := 0, 0
			for _, v := range m.rows {
				if !at(v.ts).After(full.Lower(at(now))) {
					continue
				}
				if full.Observe(at(v.ts), v.key) {
					nFull++
				}
				if ok && v.xmin < since {
					skipped++
					continue
				}
				read++
				if skip.Observe(at(v.ts), v.key) {
					nSkip++
				}
			}
			if nFull != nSkip {
				t.Fatalf("seed %d, poll at %d: the whole lookback counted %d, with the horizon %d", seed, now, nFull, nSkip)
			}
			// Now and then a poll fails after reading: both forget it.
			if rnd.intn(10) == 0 {
				full.Abort()
				skip.Abort()
				continue
			}
			full.Commit(at(now))
			skip.CommitSnapshot(at(now), snap)
		}
		if skipped == 0 || read == 0 {
			t.Fatalf("seed %d: the horizon skipped %d versions and read %d; the model exercises nothing", seed, skipped, read)
		}
	}
}

// prng is a small deterministic generator (the model needs no more).
type prng struct{ s uint64 }

func newRand(seed int64) *prng { return &prng{uint64(seed)*0x9e3779b97f4a7c15 + 1} }

func (r *prng) intn(n int) int {
	r.s ^= r.s << 13
	r.s ^= r.s >> 7
	r.s ^= r.s << 17
	return int(r.s % uint64(n))
}

// Hash is FNV-1a of the salt's eight bytes (least significant first) and
// each part ended by 0xff: what the state files of earlier versions hold,
// so it must not change. The end mark keeps ("a", "bc") apart from
// ("ab", "c").
func TestHashIsFNV1aOfTheSaltAndTheParts(t *testing.T) {
	for _, tc := range []struct {
		salt uint64
		key  []string
	}{
		{0, nil},
		{0, []string{"a", "bc"}},
		{0x0102030405060708, []string{"ab", "c"}},
		{1<<64 - 1, []string{"", "orders", "7f1c0a4e"}},
	} {
		want := fnv.New64a()
		var salt [8]byte
		binary.LittleEndian.PutUint64(salt[:], tc.salt)
		want.Write(salt[:])
		for _, k := range tc.key {
			want.Write(append([]byte(k), 0xff))
		}
		if got := Hash(tc.salt, tc.key...); got != want.Sum64() {
			t.Errorf("Hash(%#x, %q) = %#x, want %#x", tc.salt, tc.key, got, want.Sum64())
		}
	}
	if Hash(7, "a", "bc") == Hash(7, "ab", "c") {
		t.Error(`Hash(7, "a", "bc") = Hash(7, "ab", "c"): the parts' end mark is lost`)
	}
	w := New(time.Minute)
	if w.hash([]string{"x", "y"}) != Hash(w.salt, "x", "y") {
		t.Error("a window hashes its keys with another function than Hash")
	}
}
