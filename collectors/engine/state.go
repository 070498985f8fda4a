package engine

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"strings"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// What the engine's collectors keep between collections, for the three
// things done to it as a whole: it outlives the process (--storage.path,
// collectors.Stateful), label values unseen for label_value_forget_after
// are forgotten with their series (forget), and its sizes are reported
// (collectors.Remembering).
//
// Restored, always (the memory the alerts and the joins depend on): the
// tracked tasks (lock tracking: each lock's first sighting, so
// camunda_external_task_oldest_lock_age_seconds goes on; lapses; whether a
// task was redelivered, so workflow_idempotency_in_doubt keeps it), the
// workers holding locks with the time their idleness counts from
// (camunda_external_task_worker_idle_seconds), the topics reported and the
// label admissions, the incident tuples and failure signatures reported.
//
// Restored when the previous process stopped cleanly after its last
// collection (resume): the history cursors (the next reading counts the
// entries written since that collection, each once, as far as
// max_history_entries reaches), the open counts of each topic (the ended
// counter), the evidence of the last history entries, the creation times
// (durations). Without resume the file may be older than what the previous
// process counted: these start from a baseline as at a fresh start, and the
// first collection counts no lock expiration or redelivery (it updates the
// tasks' tracking, as every collection does).
//
// Never restored: the counters' values (they start from 0, as Prometheus
// expects of a restart) and the duration histograms.

// stateVersion is the version of the engine collectors' state encoding.
const stateVersion = 1

// engineState is the external-task collector's state in a state file.
type engineState struct {
	Topics       []string
	Tasks        []trackedState
	Holders      []holderState
	Unattributed bool
	Incidents    []reading.IncidentKey
	OldestInc    []string
	TopicLimit   []labellimit.Admission
	IncLimit     []labellimit.Admission
	Signatures   []signatureState

	// Resume only.
	EngineNow   time.Time
	Cursor      cursorState
	ActCursor   cursorState
	Open        map[string]reading.TopicCounts
	Evidence    map[string]evidenceState
	UsedCatches map[string]time.Time
	Creations   map[string]int64
}

// trackedState is a tracked task (locks.go's tracked).
type trackedState struct {
	ID, Topic, Worker, ActInst string
	Exp                        time.Time
	Retries                    *int
	ErrMsg                     string
	Backoff, Lapsed            bool
	Redelivered                bool
	LockedSince, RedeliveredAt time.Time
	Missed                     int
	HandoverFrom               string
	HandoverLapsed             bool
}

type holderState struct {
	Topic, Worker string
	Since         time.Time
}

type cursorState struct {
	Started, Resumed bool
	At               time.Time
	Seen             map[string]time.Time
}

type evidenceState struct {
	FailedBy []string
	EndedBy  string
	EndedAt  time.Time
	Ended    bool
}

// signatureState is an admitted failure signature of a label: the series
// of camunda_*_failures_by_error_total it keeps across a restart (its
// count starts from 0 like every counter's).
type signatureState struct {
	Label, Signature string
	Last             time.Time
}

func cursorOf(h historyCursor) cursorState {
	return cursorState{Started: h.started, Resumed: h.resumed, At: h.at, Seen: h.seen}
}

func (s cursorState) cursor() historyCursor {
	return historyCursor{started: s.Started, resumed: s.Resumed, at: s.At, seen: s.Seen}
}

func encodeState(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeState(data []byte, v any) error {
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// stateKey is the state's version and how topics are keyed (the tenant
// label makes tenant-and-topic keys).
func (e *Engine) stateKey(collector string) string {
	return fmt.Sprintf("%s/v%d tenant_label=%t", collector, stateVersion, e.cfg.TenantLabel)
}

// StateKey implements collectors.Stateful.
func (c *externalTasksCollector) StateKey() string { return c.e.stateKey(nameTasks) }

// SaveState implements collectors.Stateful.
func (c *externalTasksCollector) SaveState() ([]byte, error) {
	st := c.st
	out := engineState{
		Topics: sortedKeys(st.topics), Unattributed: st.unattributed, OldestInc: sortedKeys(st.oldestInc),
		TopicLimit: c.topicLimit.Admissions(), IncLimit: c.incidentLimit.Admissions(),
		Signatures: st.failureGroups.signatures(),
		EngineNow:  st.engineNow, Cursor: cursorOf(st.cursor), ActCursor: cursorOf(st.actCursor),
		Open: st.open, UsedCatches: st.usedCatches, Creations: c.creations,
		Evidence: make(map[string]evidenceState, len(st.evidence)),
	}
	for _, id := range sortedKeys(st.tasks) {
		t := st.tasks[id]
		out.Tasks = append(out.Tasks, trackedState{ID: id, Topic: t.topic, Worker: t.worker, ActInst: t.actInst, Exp: t.exp, Retries: t.retries,
			ErrMsg: t.errMsg, Backoff: t.backoff, Lapsed: t.lapsed, Redelivered: t.redelivered, LockedSince: t.lockedSince,
			RedeliveredAt: t.redeliveredAt, Missed: t.missed, HandoverFrom: t.handoverFrom, HandoverLapsed: t.handoverLapsed})
	}
	for k, since := range st.holders {
		out.Holders = append(out.Holders, holderState{Topic: k.topic, Worker: k.worker, Since: since})
	}
	for ik := range st.incidents {
		out.Incidents = append(out.Incidents, ik)
	}
	for id, ev := range st.evidence {
		out.Evidence[id] = evidenceState{FailedBy: sortedKeys(ev.failedBy), EndedBy: ev.endedBy, EndedAt: ev.endedAt, Ended: ev.ended}
	}
	return encodeState(&out)
}

// LoadState implements collectors.Stateful (see the top of this file).
func (c *externalTasksCollector) LoadState(data []byte, resume bool) error {
	var in engineState
	if err := decodeState(data, &in); err != nil {
		return err
	}
	c.topicLimit.Restore(in.TopicLimit)
	c.incidentLimit.Restore(in.IncLimit)
	st := &c.st
	for _, t := range in.Topics {
		if t == labellimit.Other || c.topicLimit.Has(t) {
			st.topics[t] = true
		}
	}
	for _, t := range in.Tasks {
		st.tasks[t.ID] = tracked{topic: t.Topic, worker: t.Worker, actInst: t.ActInst, exp: t.Exp, retries: t.Retries, errMsg: t.ErrMsg,
			backoff: t.Backoff, lapsed: t.Lapsed, redelivered: t.Redelivered, lockedSince: t.LockedSince, redeliveredAt: t.RedeliveredAt,
			missed: t.Missed, handoverFrom: t.HandoverFrom, handoverLapsed: t.HandoverLapsed}
	}
	for _, h := range in.Holders {
		st.holders[topicWorker{h.Topic, h.Worker}] = h.Since
	}
	st.unattributed = in.Unattributed
	for _, ik := range in.Incidents {
		if (ik == reading.IncidentKey{Type: labellimit.Other, Key: labellimit.Other, Activity: labellimit.Other}) || c.incidentLimit.Has(ik.Type, ik.Key, ik.Activity) {
			st.incidents[ik] = true
		}
	}
	for _, typ := range in.OldestInc {
		st.oldestInc[typ] = true
	}
	st.failureGroups.restore(in.Signatures)
	if !resume {
		// The first collection counts no lock event: the previous process
		// may have counted them after it wrote this file.
		c.quiet = true
		return nil
	}
	st.engineNow = in.EngineNow
	st.cursor, st.actCursor = in.Cursor.cursor(), in.ActCursor.cursor()
	for k, v := range in.Open {
		st.open[k] = v
	}
	st.evidence = make(map[string]*taskEvidence, len(in.Evidence))
	for id, ev := range in.Evidence {
		e := &taskEvidence{failedBy: map[string]bool{}, endedBy: ev.EndedBy, endedAt: ev.EndedAt, ended: ev.Ended}
		for _, w := range ev.FailedBy {
			e.failedBy[w] = true
		}
		st.evidence[id] = e
	}
	for id, t := range in.UsedCatches {
		st.usedCatches[id] = t
	}
	for id, ts := range in.Creations {
		if len(c.creations) >= maxCreations {
			break
		}
		c.creations[id] = ts
	}
	return nil
}

// Remembered implements collectors.Remembering.
func (c *externalTasksCollector) Remembered(note func(kind string, n int)) {
	redelivered := 0
	for _, t := range c.st.tasks {
		if t.redelivered {
			redelivered++
		}
	}
	note(vocab.RememberedLocks, len(c.st.tasks))
	note(vocab.RememberedRedeliveries, redelivered)
	note(vocab.RememberedWorkers, len(c.st.holders))
	note(vocab.RememberedLabelValues, c.topicLimit.Len()+c.incidentLimit.Len()+c.st.failureGroups.size())
	note(vocab.RememberedWatermarkKeys, len(c.st.cursor.seen)+len(c.st.actCursor.seen))
	note(vocab.RememberedCreations, len(c.creations))
}

// forget frees the topics and incident tuples unseen for
// label_value_forget_after (the engine's clock now), with everything kept
// under them, and the failure signatures without a failure for as long.
func (c *externalTasksCollector) forget(now time.Time) {
	for _, freed := range c.topicLimit.Sweep(now) {
		t := freed[0]
		st := &c.st
		delete(st.topics, t)
		delete(st.expirations, t)
		delete(st.redeliveries, t)
		delete(st.history, t)
		delete(st.open, t)
		delete(st.ended, t)
		delete(st.durations, t)
		if st.failureGroups.by != nil {
			delete(st.failureGroups.by, t)
		}
	}
	for _, freed := range c.incidentLimit.Sweep(now) {
		delete(c.st.incidents, reading.IncidentKey{Type: freed[0], Key: freed[1], Activity: freed[2]})
	}
	c.st.failureGroups.forget(now, c.forgetAfter)
}

// signatures lists the admitted signatures of every label.
func (g failureGroups) signatures() []signatureState {
	var out []signatureState
	for _, label := range sortedKeys(g.by) {
		for _, sig := range sortedKeys(g.by[label]) {
			out = append(out, signatureState{Label: label, Signature: sig, Last: g.by[label][sig].last})
		}
	}
	return out
}

// restore admits the signatures of an earlier process, at a count of 0
// (a group's count is a counter's value), up to the limit per label.
func (g failureGroups) restore(sigs []signatureState) {
	if g.by == nil {
		return
	}
	for _, s := range sigs {
		m := g.by[s.Label]
		if m == nil {
			m = map[string]*failureGroup{}
			g.by[s.Label] = m
		}
		if _, ok := m[s.Signature]; ok || (s.Signature != otherSignature && len(m) >= g.limit) {
			continue
		}
		m[s.Signature] = &failureGroup{first: s.Last, last: s.Last, workers: map[string]struct{}{}}
	}
}

// forget drops the groups without a failure for d (0: never).
func (g failureGroups) forget(now time.Time, d time.Duration) {
	if g.by == nil || d <= 0 {
		return
	}
	floor := now.Add(-d)
	for label, sigs := range g.by {
		for sig, fg := range sigs {
			if fg.last.Before(floor) {
				delete(sigs, sig)
			}
		}
		if len(sigs) == 0 {
			delete(g.by, label)
		}
	}
}

// size is how many groups are kept.
func (g failureGroups) size() int {
	n := 0
	for _, sigs := range g.by {
		n += len(sigs)
	}
	return n
}

// jobsStateFile is the jobs collector's state in a state file.
type jobsStateFile struct {
	Exhausted, Executable []string
	Limits                [4][]labellimit.Admission
	Signatures            []signatureState
	// Resume only.
	At     time.Time
	Cursor cursorState
}

func (c *jobsCollector) limiters() [4]*labellimit.Limiter {
	return [4]*labellimit.Limiter{c.exhaustedLimit, c.executableLimit, c.failureLimit, c.successLimit}
}

// StateKey implements collectors.Stateful.
func (c *jobsCollector) StateKey() string { return c.e.stateKey(nameJobs) }

// SaveState implements collectors.Stateful.
func (c *jobsCollector) SaveState() ([]byte, error) {
	out := jobsStateFile{Exhausted: sortedKeys(c.st.exhausted), Executable: sortedKeys(c.st.executable),
		Signatures: c.st.failureGroups.signatures(), At: c.st.at, Cursor: cursorOf(c.st.cursor)}
	for i, l := range c.limiters() {
		out.Limits[i] = l.Admissions()
	}
	return encodeState(&out)
}

// LoadState implements collectors.Stateful: the keys that report 0, the
// admissions and signatures; with resume the job log's cursor.
func (c *jobsCollector) LoadState(data []byte, resume bool) error {
	var in jobsStateFile
	if err := decodeState(data, &in); err != nil {
		return err
	}
	for i, l := range c.limiters() {
		l.Restore(in.Limits[i])
	}
	for _, k := range in.Exhausted {
		if k == labellimit.Other || c.exhaustedLimit.Has(k) {
			c.st.exhausted[k] = true
		}
	}
	for _, k := range in.Executable {
		if k == labellimit.Other || c.executableLimit.Has(k) {
			c.st.executable[k] = true
		}
	}
	c.st.failureGroups.restore(in.Signatures)
	if resume {
		c.st.at, c.st.cursor = in.At, in.Cursor.cursor()
	}
	return nil
}

// Remembered implements collectors.Remembering.
func (c *jobsCollector) Remembered(note func(kind string, n int)) {
	n := c.st.failureGroups.size()
	for _, l := range c.limiters() {
		n += l.Len()
	}
	note(vocab.RememberedLabelValues, n)
	note(vocab.RememberedWatermarkKeys, len(c.st.cursor.seen))
}

// forget frees the keys unseen for label_value_forget_after.
func (c *jobsCollector) forget(now time.Time) {
	maps := [4][]map[string]bool{{c.st.exhausted}, {c.st.executable}, nil, nil}
	counters := [4]map[string]float64{nil, nil, c.st.failures, c.st.successes}
	for i, l := range c.limiters() {
		for _, freed := range l.Sweep(now) {
			for _, m := range maps[i] {
				delete(m, freed[0])
			}
			if counters[i] != nil {
				delete(counters[i], freed[0])
			}
			if i == 2 && c.st.failureGroups.by != nil {
				delete(c.st.failureGroups.by, freed[0])
			}
		}
	}
	c.st.failureGroups.forget(now, time.Duration(c.e.forgetAfter()))
}

// keysState is the state of a collector that only remembers the keys it
// reported (processes, history cleanup).
type keysState struct {
	Seen   []string
	Limits []labellimit.Admission
}

func saveKeys(seen map[string]bool, l *labellimit.Limiter) ([]byte, error) {
	return encodeState(&keysState{Seen: sortedKeys(seen), Limits: l.Admissions()})
}

func loadKeys(data []byte, seen map[string]bool, l *labellimit.Limiter) error {
	var in keysState
	if err := decodeState(data, &in); err != nil {
		return err
	}
	l.Restore(in.Limits)
	for _, k := range in.Seen {
		if k == labellimit.Other || l.Has(k) {
			seen[k] = true
		}
	}
	return nil
}

// forgetKeys frees a key collector's keys unseen too long; it returns the
// seen map without them.
func forgetKeys(now time.Time, seen map[string]bool, l *labellimit.Limiter) map[string]bool {
	freed := l.Sweep(now)
	if len(freed) == 0 {
		return seen
	}
	out := cloneMap(seen)
	for _, f := range freed {
		delete(out, strings.Join(f, "\xff"))
	}
	return out
}

// keyedState is the state of a collector whose series are per process
// definition key and keep reporting once seen (camunda_processes,
// camunda_history): the keys that report 0 and the label admissions
// (limit, whose values unseen for label_value_forget_after are freed),
// kept under the collector's name.
type keyedState struct {
	e     *Engine
	name  string
	limit *labellimit.Limiter // process_definition_key
	seen  map[string]bool
}

func newKeyedState(e *Engine, o Options, name, metric string) keyedState {
	k := keyedState{e: e, name: name, limit: labellimit.NewLimiter(o.Folds, metric, e.cfg.LabelValueLimit), seen: map[string]bool{}}
	k.limit.SetForgetAfter(e.forgetAfter())
	return k
}

// StateKey implements collectors.Stateful.
func (k *keyedState) StateKey() string { return k.e.stateKey(k.name) }

// SaveState implements collectors.Stateful: the keys that report 0 and the
// admissions.
func (k *keyedState) SaveState() ([]byte, error) { return saveKeys(k.seen, k.limit) }

// LoadState implements collectors.Stateful.
func (k *keyedState) LoadState(data []byte, _ bool) error { return loadKeys(data, k.seen, k.limit) }

// Remembered implements collectors.Remembering.
func (k *keyedState) Remembered(note func(kind string, n int)) {
	note(vocab.RememberedLabelValues, k.limit.Len())
}

// forgetAfter is the engine's label_value_forget_after (0: never).
func (e *Engine) forgetAfter() time.Duration {
	if e.cfg.LabelValueForgetAfter == nil {
		return 0
	}
	return time.Duration(*e.cfg.LabelValueForgetAfter)
}
