package tables

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"time"
)

// The relay collector's state across restarts (--storage.path;
// collectors.Stateful). Restored, always: the write marks the relay has not
// confirmed, so that the lag in seconds (WorkflowOutboxRelayBehind, which
// pages without a for:) goes on from the oldest unconfirmed write instead
// of starting over. A mark is checked against the slot's
// confirmed_flush_lsn, which the server keeps, so a mark the relay
// confirmed while the exporter was away is dropped at the first reading.
// Restored when the previous process stopped cleanly after its last
// reading (resume): that reading's WAL positions and table statistics, so
// the writes made while the exporter was away get a mark from that reading
// on. Without resume the first reading is a baseline, as at a fresh start
// (the lag is unknown at it), and writes made since the file was written
// and before that reading have no mark. Never restored: the
// events_written counter (it starts from 0, as Prometheus expects of a
// restart).

// relayStateVersion is the version of the relay collector's state.
const relayStateVersion = 1

// relayState is the relay collector's state in a state file.
type relayState struct {
	Marks []relayMarkState
	// Resume only: the last reading's.
	Samples []relaySampleState
	Counts  *relayCountsState
}

type relayMarkState struct {
	Since  time.Time
	Lo, Hi uint64
}

type relaySampleState struct {
	At  time.Time
	LSN uint64
}

type relayCountsState struct{ Inserts, Mods, Analyses int64 }

// StateKey implements collectors.Stateful: the outbox table and its slot.
func (c *OutboxRelay) StateKey() string {
	return fmt.Sprintf("outbox_relay/v%d table=%s slot=%s", relayStateVersion, c.table, c.relay.Slot)
}

// SaveState implements collectors.Stateful.
func (c *OutboxRelay) SaveState() ([]byte, error) {
	st := relayState{}
	for _, m := range c.marks.marks {
		st.Marks = append(st.Marks, relayMarkState{Since: m.since, Lo: m.lo, Hi: m.hi})
	}
	for _, s := range c.marks.samples {
		st.Samples = append(st.Samples, relaySampleState{At: s.at, LSN: s.lsn})
	}
	if c.counts != nil {
		st.Counts = &relayCountsState{Inserts: c.counts.inserts, Mods: c.counts.mods, Analyses: c.counts.analyses}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&st); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadState implements collectors.Stateful (see the top of this file).
func (c *OutboxRelay) LoadState(data []byte, resume bool) error {
	var st relayState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	marks := make([]writeMark, 0, len(st.Marks))
	for _, m := range st.Marks {
		marks = append(marks, writeMark{since: m.Since, lo: m.Lo, hi: m.Hi})
	}
	c.marks.marks = marks
	c.marks.bound()
	if !resume {
		return nil
	}
	c.marks.samples = nil
	for _, s := range st.Samples {
		c.marks.samples = append(c.marks.samples, lsnSample{at: s.At, lsn: s.LSN})
	}
	if st.Counts != nil {
		c.counts = &tableCounts{inserts: st.Counts.Inserts, mods: st.Counts.Mods, analyses: st.Counts.Analyses}
	}
	return nil
}
