package tables

import (
	"testing"
	"time"
)

// The write marks' rules, reading by reading: the lag in seconds for each
// way a relay behaves. Readings every 30 s (the default min_interval); WAL
// positions are small numbers, a reading's insert position (hi) is its
// position plus 10; c is the slot's confirmed_flush_lsn.
func TestRelayMarks(t *testing.T) {
	type reading struct {
		at     int // seconds
		lsn    uint64
		wrote  bool
		c      uint64
		active bool
		lag    float64 // want
	}
	cases := []struct {
		name     string
		readings []reading
	}{
		{"stopped relay, writes keep coming: from the reading before the first write on", []reading{
			{0, 100, false, 100, false, 0},
			{30, 200, true, 100, false, 30},
			{60, 300, true, 100, false, 60},
			{90, 300, false, 100, false, 90},
		}},
		{"caught up", []reading{
			{0, 100, false, 100, true, 0},
			{30, 200, true, 210, true, 0},
			{60, 300, true, 301, true, 0},
		}},
		{"relay stopped in the middle of a window's writes, nothing written after", []reading{
			{0, 100, false, 100, true, 0},
			{30, 200, true, 210, true, 0},
			{60, 300, true, 250, false, 30}, // confirmed within the window of (30, 60]: some of it, maybe
			{90, 300, false, 250, false, 60},
			{120, 300, false, 311, true, 0}, // back, and past the window
		}},
		{"connected relay that confirms only its own transactions, statistics late (Debezium, lsn.flush.mode=connector)", []reading{
			{0, 100, false, 100, true, 0},
			{30, 200, false, 151, true, 0},  // a write committed at 150 before this reading, confirmed at 151
			{60, 300, true, 151, true, 0},   // its statistics arrive: the slot is active and past lo (the reading at 0)
			{90, 350, false, 151, false, 0}, // stopped later: the mark is gone, nothing comes back
		}},
		{"connected relay that stopped confirming, writes keep coming: behind once their lo passes it", []reading{
			{0, 100, false, 100, true, 0},
			{30, 200, true, 150, true, 0},  // lo 100
			{60, 300, true, 150, true, 0},  // lo 100
			{90, 400, true, 150, true, 30}, // lo 200 (the reading at 30): the writes since 60 count
			{120, 500, true, 150, true, 60},
		}},
		{"catching up on a backlog: the oldest mark not confirmed counts", []reading{
			{0, 100, false, 100, false, 0},
			{30, 200, true, 100, false, 30},
			{60, 300, true, 100, false, 60},
			{90, 400, true, 100, false, 90},
			{120, 400, false, 150, true, 60}, // active and past lo 100: the marks since 0 and 30 go; lo of the mark since 60 is 200
			{150, 400, false, 410, true, 0},
		}},
		{"a relay that confirms nothing and the outbox quiet: not behind", []reading{
			{0, 100, false, 50, false, 0},
			{30, 5000, false, 50, false, 0},
			{60, 9000, false, 50, false, 0},
		}},
	}
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m relayMarks
			for i, r := range tc.readings {
				lag, known, _ := m.observe(t0.Add(time.Duration(r.at)*time.Second), r.lsn, r.lsn+10, r.wrote,
					slotProgress{confirmed: r.c, hasConfirmed: true, active: r.active})
				if known != (i > 0) {
					t.Errorf("reading %d: known %v, want %v (unknown at the first reading only)", i, known, i > 0)
				}
				if lag != r.lag {
					t.Errorf("reading at %ds: lag %v, want %v (marks %+v)", r.at, lag, r.lag, m.marks)
				}
			}
		})
	}
}

// Past the bound, marks merge in pairs: the lag is coarser, never lower
// than without the bound, and the marks stay within it.
func TestRelayMarksBound(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	bounded, unbounded := relayMarks{max: 4}, relayMarks{max: 1 << 20}
	merged := 0
	step := func(at int, lsn, c uint64, wrote bool) {
		t.Helper()
		slot := slotProgress{confirmed: c, hasConfirmed: true}
		lb, _, n := bounded.observe(t0.Add(time.Duration(at)*time.Second), lsn, lsn+10, wrote, slot)
		lu, _, _ := unbounded.observe(t0.Add(time.Duration(at)*time.Second), lsn, lsn+10, wrote, slot)
		merged += n
		if lb < lu {
			t.Errorf("at %ds: bounded lag %v below the unbounded %v", at, lb, lu)
		}
		if len(bounded.marks) > 4 {
			t.Errorf("at %ds: %d marks, bound 4", at, len(bounded.marks))
		}
	}
	step(0, 100, 100, false)
	for i := 1; i <= 10; i++ {
		step(30*i, uint64(100+100*i), 100, true)
	}
	if merged == 0 {
		t.Fatal("10 marks against a bound of 4: nothing merged")
	}
	// The relay catches up step by step (its slot inactive: no benefit
	// of the doubt, each mark goes at its hi).
	for i := 1; i <= 11; i++ {
		step(300+30*i, 1100, uint64(100+100*i)+10, false)
	}
	if len(bounded.marks) != 0 {
		t.Errorf("caught up, %d marks left", len(bounded.marks))
	}
}
