package engine

import (
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// Table tests of the classification rules in locks.go, one case per
// rule, so a changed rule fails here with its number.

var (
	tBase = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	e1    = tBase.Add(time.Minute)
	e2    = tBase.Add(2 * time.Minute)
)

func obs(worker string, exp time.Time, retries *int, msg string) taskObs {
	return taskObs{TaskObs: reading.TaskObs{ID: "t", Topic: "a", Worker: worker, Exp: exp, Retries: retries, ErrMsg: msg}}
}

func TestClassifyLocked(t *testing.T) {
	r2, r1 := new(2), new(1)
	cases := []struct {
		name        string
		o           taskObs
		prev        tracked
		seen        bool
		wantBackoff bool
		wantEv      lockEvents
	}{
		{"1 first sighting, never failed: a worker's lock", obs("w1", e1, nil, ""), tracked{}, false, false, lockEvents{}},
		{"1 first sighting, failed before: read as backoff", obs("w1", e1, r2, "boom"), tracked{}, false, true, lockEvents{}},
		{"2 lapsed, locked again by another worker: redelivery", obs("w2", e2, nil, ""), tracked{worker: "w1", exp: e1, lapsed: true}, true, false, lockEvents{redeliveries: 1}},
		{"2 lapsed, locked again by the same worker: redelivery", obs("w1", e2, nil, ""), tracked{worker: "w1", exp: e1, lapsed: true}, true, false, lockEvents{redeliveries: 1}},
		{"2 lapsed, late holder reports failure: backoff, no redelivery", obs("w1", e2, r2, "late"), tracked{worker: "w1", exp: e1, lapsed: true}, true, true, lockEvents{}},
		{"3 failed since (retries changed): backoff", obs("w1", e2, r1, "boom"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "boom"}, true, true, lockEvents{}},
		{"3 failed since (first failure): backoff", obs("w1", e2, r2, "boom"), tracked{worker: "w1", exp: e1}, true, true, lockEvents{}},
		{"4 unchanged backoff stays backoff", obs("w1", e1, r2, "boom"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "boom", backoff: true}, true, true, lockEvents{}},
		{"4 unchanged lock stays locked", obs("w1", e1, r2, "boom"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "boom"}, true, false, lockEvents{}},
		{"5 other worker after a backoff: the retry fetch", obs("w2", e2, r2, "boom"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "boom", backoff: true}, true, false, lockEvents{}},
		{"5 other worker after a worker lock: unseen lapse and redelivery", obs("w2", e2, nil, ""), tracked{worker: "w1", exp: e1}, true, false, lockEvents{1, 1}},
		{"6 same worker, new expiration: extendLock", obs("w1", e2, nil, ""), tracked{worker: "w1", exp: e1}, true, false, lockEvents{}},
		{"6 same worker after its backoff: fetched again", obs("w1", e2, r2, "boom"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "boom", backoff: true}, true, false, lockEvents{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, ev := classifyLocked(c.o, c.prev, c.seen)
			if next.backoff != c.wantBackoff || ev != c.wantEv || next.lapsed {
				t.Fatalf("backoff=%v lapsed=%v events=%+v, want backoff=%v events=%+v", next.backoff, next.lapsed, ev, c.wantBackoff, c.wantEv)
			}
		})
	}
}

func TestClassifyLapsed(t *testing.T) {
	r2, r1 := new(2), new(1)
	prevNow := tBase.Add(30 * time.Second)
	cases := []struct {
		name string
		o    taskObs
		prev tracked
		seen bool
		want lapsedReading
		ev   lockEvents
	}{
		{"1 still lapsed: counted once", obs("w1", e1, nil, ""), tracked{worker: "w1", exp: e1, lapsed: true}, true, readExpired, lockEvents{}},
		{"2 failed since, backoff already over: waiting", obs("w1", e2, r1, "x"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "x"}, true, readWaiting, lockEvents{}},
		{"3 backoff ended: waiting", obs("w1", e1, r2, "x"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "x", backoff: true}, true, readWaiting, lockEvents{}},
		{"3 worker lock lapsed: one expiration", obs("w1", e1, nil, ""), tracked{worker: "w1", exp: e1}, true, readExpired, lockEvents{expirations: 1}},
		{"3 re-fetched failed task lapsed: one expiration", obs("w2", e1, r2, "x"), tracked{worker: "w2", exp: e1, retries: r2, errMsg: "x"}, true, readExpired, lockEvents{expirations: 1}},
		{"4 extended, then lapsed: one expiration", obs("w1", e2, nil, ""), tracked{worker: "w1", exp: e1}, true, readExpired, lockEvents{expirations: 1}},
		{"4 lapsed, redelivered, lapsed again", obs("w2", e2, nil, ""), tracked{worker: "w1", exp: e1}, true, readExpired, lockEvents{2, 1}},
		{"4 re-fetched after backoff, lapsed", obs("w2", e2, r2, "x"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "x", backoff: true}, true, readExpired, lockEvents{expirations: 1}},
		{"4 lapsed, relocked, lapsed again between polls", obs("w1", e2, nil, ""), tracked{worker: "w1", exp: e1, lapsed: true}, true, readExpired, lockEvents{1, 1}},
		{"5 first sighting, never failed, lapsed since the last poll: counted", obs("w1", e1, nil, ""), tracked{}, false, readExpired, lockEvents{expirations: 1}},
		{"5 first sighting, never failed, lapsed before the last poll: not counted", obs("w1", tBase, nil, ""), tracked{}, false, readExpired, lockEvents{}},
		{"5 first sighting, failed before: read as a finished backoff", obs("w1", e1, r2, "x"), tracked{}, false, readWaiting, lockEvents{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, read, ev := classifyLapsed(c.o, c.prev, c.seen, prevNow)
			if read != c.want || ev != c.ev || next.lapsed != (read == readExpired) {
				t.Fatalf("read=%v events=%+v lapsed=%v, want read=%v events=%+v", read, ev, next.lapsed, c.want, c.ev)
			}
		})
	}
	// On the first collection (no previous engine time) nothing is counted.
	if _, _, ev := classifyLapsed(obs("w1", e1, nil, ""), tracked{}, false, time.Time{}); ev != (lockEvents{}) {
		t.Fatalf("first collection counted %+v", ev)
	}
}

func TestSameLock(t *testing.T) {
	r2 := new(2)
	held := tracked{worker: "w1", exp: e1, lockedSince: tBase}
	cases := []struct {
		name string
		o    taskObs
		prev tracked
		seen bool
		want bool
	}{
		{"first sighting", obs("w1", e1, nil, ""), tracked{}, false, false},
		{"unchanged", obs("w1", e1, nil, ""), held, true, true},
		{"extendLock by the holder", obs("w1", e2, nil, ""), held, true, true},
		{"another worker", obs("w2", e2, nil, ""), held, true, false},
		{"failed since", obs("w1", e2, r2, "boom"), held, true, false},
		{"after a backoff", obs("w1", e2, r2, "boom"), tracked{worker: "w1", exp: e1, retries: r2, errMsg: "boom", backoff: true}, true, false},
		{"after a lapse", obs("w1", e2, nil, ""), tracked{worker: "w1", exp: e1, lapsed: true}, true, false},
	}
	for _, c := range cases {
		if got := sameLock(c.o, c.prev, c.seen); got != c.want {
			t.Errorf("%s: sameLock = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestClassifyLockedSameLockAfterLapse: rule 2's same lock read as held
// again (engine nodes whose clocks differ): no redelivery, and it stays
// lapsed, so the next lapsed reading of it counts no second expiration.
func TestClassifyLockedSameLockAfterLapse(t *testing.T) {
	prev := tracked{worker: "w1", exp: e1, lapsed: true}
	next, ev := classifyLocked(obs("w1", e1, nil, ""), prev, true)
	if ev != (lockEvents{}) || !next.lapsed || next.backoff {
		t.Fatalf("events %+v, lapsed %v, backoff %v; want none, true, false", ev, next.lapsed, next.backoff)
	}
	again, read, ev := classifyLapsed(obs("w1", e1, nil, ""), next, true, tBase)
	if ev != (lockEvents{}) || read != readExpired || !again.lapsed {
		t.Fatalf("lapsed again: events %+v, read %v; want none, lock_expired", ev, read)
	}
}

// A task missing from both lists counts as ended unless its lock expired
// within LapsedMargin before the reference time (a node behind may still
// call it locked).
func TestMayBeSkewed(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		exp  time.Time
		want bool
	}{
		{"no lock", time.Time{}, false},
		{"expiring within the margin", now.Add(time.Minute), true},
		{"expiring beyond the margin", now.Add(reading.LapsedMargin + time.Second), false},
		{"expired just now", now, true},
		{"expired 25s ago", now.Add(-25 * time.Second), true},
		{"expired beyond the margin", now.Add(-reading.LapsedMargin - time.Second), false},
	} {
		if got := mayBeSkewed(tracked{exp: tc.exp}, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTrackUnlistedCountsFromTheEndEntry: a task the previous collection
// saw locked that no list holds now is judged by its history entries:
// another worker's end is an unseen lapse and a redelivery; the holder's
// own end stamped more than lateEndMargin after its lock's expiration is
// an unseen lapse alone (a late completion and a re-fetch under the same
// id look alike).
func TestTrackUnlistedCountsFromTheEndEntry(t *testing.T) {
	ended := func(worker string, at time.Time) *taskEvidence {
		return &taskEvidence{failedBy: map[string]bool{}, ended: true, endedBy: worker, endedAt: at}
	}
	cases := []struct {
		name                   string
		prev                   tracked
		ev                     *taskEvidence
		expirations, redeliver float64
	}{
		{"another worker ended it: lapse and redelivery", tracked{worker: "w1", exp: e1}, ended("w2", e1.Add(time.Second)), 1, 1},
		{"the holder ended it well after its lock expired: lapse only", tracked{worker: "w1", exp: e1}, ended("w1", e1.Add(lateEndMargin+time.Second)), 1, 0},
		{"the holder ended it within its lock", tracked{worker: "w1", exp: e1}, ended("w1", e1.Add(-time.Second)), 0, 0},
		{"the holder ended it within the clock margin after expiry", tracked{worker: "w1", exp: e1}, ended("w1", e1.Add(lateEndMargin)), 0, 0},
		{"the holder ended it late, the lapse already counted", tracked{worker: "w1", exp: e1, lapsed: true}, ended("w1", e1.Add(time.Minute)), 0, 0},
		{"the same worker fetched it again after a retry backoff", tracked{worker: "w1", exp: e1, backoff: true}, ended("w1", e1.Add(time.Minute)), 0, 0},
		{"no entry yet: wait for it", tracked{worker: "w1", exp: e1}, nil, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.prev.topic = "a"
			col := &externalTasksCollector{st: collectorState{tasks: map[string]tracked{"t": c.prev}}}
			run := &collectionRun{c: col, engineNow: e1.Add(2 * time.Minute), st: collectorState{
				tasks: map[string]tracked{}, expirations: map[string]float64{}, redeliveries: map[string]float64{}}}
			evidence := map[string]*taskEvidence{}
			if c.ev != nil {
				evidence["t"] = c.ev
			}
			run.trackUnlisted(&reading.TasksRead{}, evidence)
			if got, got2 := run.st.expirations["a"], run.st.redeliveries["a"]; got != c.expirations || got2 != c.redeliver {
				t.Fatalf("expirations %v, redeliveries %v; want %v, %v", got, got2, c.expirations, c.redeliver)
			}
		})
	}
}
