package watermark

import (
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
