package tables

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/failure"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// What a table collector keeps between collections, for the three things
// done to it as a whole (tableBase.keep registers it): its state outlives
// the process (--storage.path: SaveState, LoadState), label values unseen
// for label_value_forget_after are forgotten with their series (forget),
// and its sizes are reported (Remembered).
//
// Restored, always: the label admissions (the same values keep their own
// label), the label tuples that report 0 once drained. Restored when the
// previous process stopped cleanly after its last collection (resume): the
// counters' watermark windows, so the next poll counts the rows written
// since that collection, each once; and the duplicate memory. Not
// restored: the counters' values (a restarted exporter's counters start
// from 0, as Prometheus expects of a restart; with the windows resumed they
// count what happened while it was down, within max_catch_up). Without
// resume the windows start with a baseline poll, as a fresh start does,
// because the file may be older than what the previous process counted.

// keptTuples is a set of label tuples kept between collections, with how
// to find the limiter's label values in one of them (nil: the tuple is
// the limiter's tuple).
type keptTuples struct {
	set    tuples
	labels func(t []string) []string
}

// tableParts are the parts of a collector's memory that keep registers.
type tableParts struct {
	windows []*watermark.Window
	kept    []keptTuples
	// counters are keyed by tupleKey of the limiter's label values, then
	// any more values (a status).
	counters []map[string]float64
}

// keep registers what the collector keeps. Call it once, in the
// collector's constructor, with maps the collector never replaces.
func (b *tableBase) keep(name string, p tableParts) {
	b.name, b.parts = name, p
	for _, w := range p.windows {
		w.SetMaxCatchUp(b.maxCatchUp)
	}
	b.limiter.SetForgetAfter(b.forgetAfter)
}

// stateKey is what the collector's state is about: its kind, the state's
// version, the table and the columns its window keys are made of.
func (b *tableBase) stateKey(kind, table string, keyColumns ...string) string {
	return fmt.Sprintf("%s/v1 table=%s keys=%s", kind, table, strings.Join(keyColumns, ","))
}

// tableState is a collector's state in a state file.
type tableState struct {
	Windows  []windowSlot
	Admitted []labellimit.Admission
	Tuples   [][][]string
	Dup      *dupState
}

// windowSlot is one window's state; Present false before its first poll.
type windowSlot struct {
	Present bool
	State   watermark.State
}

// SaveState implements collectors.Stateful for the collectors that embed
// tableBase and have a StateKey: the registered parts (label admissions,
// windows, kept tuples).
func (b *tableBase) SaveState() ([]byte, error) { return b.saveState(nil) }

// LoadState implements collectors.Stateful (see SaveState).
func (b *tableBase) LoadState(data []byte, resume bool) error { return b.loadState(data, resume, nil) }

// Remembered implements collectors.Remembering: the registered parts'
// sizes.
func (b *tableBase) Remembered(note func(kind string, n int)) { b.remembered(note) }

// saveState encodes the registered parts (and dup, the idempotency
// collector's duplicate memory).
func (b *tableBase) saveState(dup *dupMemory) ([]byte, error) {
	st := tableState{Admitted: b.limiter.Admissions()}
	for _, w := range b.parts.windows {
		slot := windowSlot{}
		if ws := w.State(); ws != nil {
			slot = windowSlot{Present: true, State: *ws}
		}
		st.Windows = append(st.Windows, slot)
	}
	for _, k := range b.parts.kept {
		st.Tuples = append(st.Tuples, k.set.sorted())
	}
	if dup != nil {
		st.Dup = dup.state()
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&st); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// loadState restores what saveState encoded (see the top of this file
// for what and when).
func (b *tableBase) loadState(data []byte, resume bool, dup *dupMemory) error {
	var st tableState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if len(st.Windows) != len(b.parts.windows) || len(st.Tuples) != len(b.parts.kept) {
		return fmt.Errorf("the state has %d windows and %d tuple sets, the collector %d and %d", len(st.Windows), len(st.Tuples), len(b.parts.windows), len(b.parts.kept))
	}
	b.limiter.Restore(st.Admitted)
	for i, k := range b.parts.kept {
		for _, t := range st.Tuples[i] {
			if b.admitted(k, t) {
				k.set.add(t...)
			}
		}
	}
	if !resume {
		return nil
	}
	for i, w := range b.parts.windows {
		if st.Windows[i].Present {
			ws := st.Windows[i].State
			if !w.Restore(&ws) {
				return fmt.Errorf("window %d: its keys and times disagree", i)
			}
		}
	}
	if dup != nil && st.Dup != nil {
		if err := dup.restore(st.Dup); err != nil {
			return err
		}
	}
	return nil
}

// admitted says whether a kept tuple's label values are admitted (or are
// the folded ones): a tuple the limiter did not restore (its limit was
// lowered) is not restored either.
func (b *tableBase) admitted(k keptTuples, t []string) bool {
	vals := t
	if k.labels != nil {
		vals = k.labels(t)
	}
	allOther := true
	for _, v := range vals {
		allOther = allOther && v == labellimit.Other
	}
	return allOther || b.limiter.Has(vals...)
}

// forget sweeps the limiter at the source's time now and drops the freed
// label values' tuples and counters: their series go away.
func (b *tableBase) forget(now time.Time) {
	for _, freed := range b.limiter.Sweep(now) {
		key := tupleKey(freed...)
		for _, k := range b.parts.kept {
			for tk, t := range k.set {
				vals := t
				if k.labels != nil {
					vals = k.labels(t)
				}
				if tupleKey(vals...) == key {
					delete(k.set, tk)
				}
			}
		}
		for _, m := range b.parts.counters {
			for ck := range m {
				if ck == key || strings.HasPrefix(ck, key+"\xff") {
					delete(m, ck)
				}
			}
		}
	}
}

// afterPoll ends a successful poll at the database time dbNow: the span
// its windows skipped is counted and logged, and unseen label values are
// forgotten.
func (b *tableBase) afterPoll(dbNow time.Time, skippedBefore time.Duration) {
	if skipped := b.skippedTotal(); skipped > skippedBefore {
		b.logger.Warn("a gap without collections was longer than max_catch_up: the counters read only its last part, rows written before were skipped and are never counted (workflow_exporter_collection_skipped_seconds_total)",
			"database", b.database, "collector", b.name, "skipped", (skipped - skippedBefore).Round(time.Second).String(), "max_catch_up", b.maxCatchUp)
	}
	b.forget(dbNow)
}

// skippedTotal is the span the collector's polls skipped: per poll the
// longest of its windows' skips (they skip the same gap).
func (b *tableBase) skippedTotal() time.Duration {
	var out time.Duration
	for _, w := range b.parts.windows {
		out = max(out, w.Skipped())
	}
	return out
}

// skippedMetric is the collector's workflow_exporter_collection_skipped_seconds_total.
func (b *tableBase) skippedMetric() prometheus.Metric {
	return prometheus.MustNewConstMetric(catalog.Desc(catalog.ExporterCollectionSkipped), prometheus.CounterValue,
		b.skippedTotal().Seconds(), vocab.SourceDatabase, b.database, b.name)
}

// timedOut says whether a failed poll ran out of time (its own deadline or
// the server's statement_timeout): a catch-up reads less at its next try.
func timedOut(err error) bool {
	c := failure.Class(err)
	return c == failure.Timeout || c == "statement_timeout"
}

// remembered reports the registered parts' sizes.
func (b *tableBase) remembered(note func(kind string, n int)) {
	note(vocab.RememberedLabelValues, b.limiter.Len())
	n := 0
	for _, w := range b.parts.windows {
		n += w.Remembered()
	}
	if len(b.parts.windows) > 0 {
		note(vocab.RememberedWatermarkKeys, n)
	}
}
