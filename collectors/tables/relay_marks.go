package tables

import (
	"time"
)

// The outbox relay's lag in seconds, from what the exporter can read
// without decoding the WAL: the outbox table's insert statistics say that
// it was written between two readings, WAL positions taken at readings
// bound where those writes are, and the slot's confirmed_flush_lsn says how
// far the relay has confirmed. Each reading that counts new writes leaves a
// mark; the lag is the age of the oldest mark the relay has not confirmed.
//
// A mark's writes were committed after the previous reading (since: the lag
// counts from it) and before this one, so their commit records end before
// the WAL insert position read after the statistics (hi): a slot confirmed
// at or past hi has confirmed them all.
//
// A slot confirmed short of hi may still have confirmed them. A relay
// confirms a transaction with its commit's position, and some confirm
// nothing beyond their last transaction (Debezium's default
// lsn.flush.mode=connector: the WAL of other tables after its last event
// stays unconfirmed), so a caught-up relay sits inside the mark's window. And
// PostgreSQL's statistics reach other sessions late (a backend flushes them
// at the end of a transaction at most once a second, after its last
// transaction within PGSTAT_IDLE_INTERVAL, 10 s, and under contention for
// the statistics' locks within PGSTAT_MAX_INTERVAL, 60 s): a write counted
// now may have been committed before the previous reading. So while the
// slot is active, a confirmed position past lo (the WAL position of the
// newest reading at least statsLate before the previous one) counts as
// having confirmed the mark, and the mark is dropped, once, so that a later
// disconnect cannot bring it back. While the slot is inactive no relay can
// confirm more: every mark short of hi counts. A relay that stopped is so
// behind from the first write it has not confirmed.
//
// The lag is at most one collection interval above the oldest unconfirmed
// write's age. It is below it while a connected relay has confirmed WAL
// within about statsLate and a collection interval before unconfirmed
// writes: a connected relay that stops confirming reads as behind once the
// writes after it have such marks, and one catching up on a backlog reads a
// little early as caught up.

// statsLate is how late a committed write may show in another session's
// table statistics, in the usual case: an idle session flushes its last
// transaction's statistics within PGSTAT_IDLE_INTERVAL (10 s).
const statsLate = 15 * time.Second

// maxWriteMarks bounds the marks kept while a relay is behind: at the
// default min_interval of 30 s they span 34 hours; past the bound
// neighbouring marks are merged (see relayMarks.bound).
const maxWriteMarks = 4096

// writeMark is the outbox writes first counted by one reading.
type writeMark struct {
	// since is the previous reading's time: the lag counts from it.
	since time.Time
	// lo is the WAL position of the newest reading at least statsLate
	// before the previous one: the writes are past it. hi is the WAL
	// insert position after this reading's statistics: they end before
	// it.
	lo, hi uint64
}

// lsnSample is a reading's database time and WAL position.
type lsnSample struct {
	at  time.Time
	lsn uint64
}

// relayMarks is the outbox writes a relay has not confirmed, and the
// readings that bound them. Its zero value has seen no reading.
type relayMarks struct {
	// samples are the readings from the newest one at least statsLate
	// older than the last (the next mark's lo) on, oldest first.
	samples []lsnSample
	marks   []writeMark
	max     int
}

// slotProgress is what a reading says of the slot: its
// confirmed_flush_lsn (hasConfirmed false when NULL) and whether a relay
// streams from it.
type slotProgress struct {
	confirmed    uint64
	hasConfirmed bool
	active       bool
}

// observe takes a reading at (at, lsn), with the insert position hi read
// after its statistics; wrote says the outbox was written since the
// previous reading. It returns the seconds the oldest unconfirmed write has
// waited (0 for none), whether the lag is known (false at the first
// reading: nothing says what was written before it), and how many marks it
// merged to stay within the bound.
func (m *relayMarks) observe(at time.Time, lsn, hi uint64, wrote bool, slot slotProgress) (lag float64, known bool, merged int) {
	first := len(m.samples) == 0
	if wrote && !first {
		m.marks = append(m.marks, writeMark{since: m.samples[len(m.samples)-1].at, lo: m.samples[0].lsn, hi: hi})
	}
	m.samples = append(m.samples, lsnSample{at, lsn})
	m.prune(at)
	if slot.hasConfirmed {
		kept := m.marks[:0]
		for _, mk := range m.marks {
			switch {
			case slot.confirmed >= mk.hi:
			case slot.active && slot.confirmed > mk.lo:
			default:
				kept = append(kept, mk)
			}
		}
		clear(m.marks[len(kept):])
		m.marks = kept
	}
	merged = m.bound()
	if len(m.marks) > 0 {
		lag = max(at.Sub(m.marks[0].since).Seconds(), 0)
	}
	return lag, !first, merged
}

// prune keeps the readings from the newest one at least statsLate before
// now on: the next mark's lo and those that may become one.
func (m *relayMarks) prune(now time.Time) {
	keep := 0
	for i, s := range m.samples {
		if s.at.After(now.Add(-statsLate)) {
			break
		}
		keep = i
	}
	m.samples = append(m.samples[:0], m.samples[keep:]...)
}

// bound merges neighbouring marks in pairs while there are more than the
// maximum, and returns how many marks it removed. A merged mark keeps the
// earlier mark's since and the later one's bounds: it is confirmed only
// when both were, so the lag is never lowered, only coarser.
func (m *relayMarks) bound() int {
	limit := m.max
	if limit <= 0 {
		limit = maxWriteMarks
	}
	removed := 0
	for len(m.marks) > limit {
		merged := m.marks[:0]
		for i := 0; i < len(m.marks); i += 2 {
			mk := m.marks[i]
			if i+1 < len(m.marks) {
				mk.lo, mk.hi = m.marks[i+1].lo, m.marks[i+1].hi
				removed++
			}
			merged = append(merged, mk)
		}
		m.marks = merged
	}
	return removed
}
