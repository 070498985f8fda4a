package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// Lock tracking: how the collector tells locked from retry_backoff, and
// lock_expired from waiting, and how it detects lock expirations and
// redeliveries. docs/camunda-states.md explains the same rules for
// operators; keep the two in step.
//
// The engine stores, per external task, a worker id, a lock expiration time
// E, retries R (null until the first failure) and an error message M. What
// the REST API shows of a task's history is only what these fields say now:
//
//   - fetchAndLock and lock set worker and E = now + lockDuration.
//   - extendLock sets E = now + newDuration (same worker, lock not expired).
//   - failure keeps the worker, sets R and M, and E = now + retryTimeout: the
//     task counts as locked (locked=true) while it waits out its backoff.
//   - unlock clears worker and E.
//   - A lapsed lock changes nothing: worker and E stay, E is now in the past.
//
// From one snapshot, a locked task with R not null is either still in retry
// backoff or was fetched again after its backoff ended; a not-locked task
// with E in the past and R not null either finished its backoff or was
// re-fetched and lost that lock. The collector resolves this by watching
// the tasks across collections, keyed by id (see classifyLocked and
// classifyLapsed), and by picking the failure reading on a first sighting.
//
// What the collector lists each collection (bounded by max_listed_tasks in
// total, sorted by id so the same tasks stay in view):
//   - per topic, the locked tasks: active, withRetriesLeft, locked (the
//     engine's SQL: E > now, the answering node's clock) and E after the
//     collection's reference time (over REST; see qLocked);
//   - per topic, the lapsed tasks: active, withRetriesLeft, notLocked and
//     lockExpirationBefore the reference time plus a margin (E not null and
//     E < now; tasks never locked have E null and are excluded).
//   In engine-database mode both compare with the database's clock.
// A task is tracked while it shows up in one of these lists.

// taskObs is one listed task as the collector saw it: as the reader listed
// it, with what the history says of it.
type taskObs struct {
	reading.TaskObs
	// history: what the history log says of this task since the previous
	// collection (nil: nothing); recent: the same over the last two
	// collections.
	history, recent *taskEvidence
}

// tracked is what the collector remembers of a task between collections.
type tracked struct {
	topic, worker string
	// actInst is the task's activity instance (activities.go).
	actInst string
	exp     time.Time
	retries *int
	errMsg  string
	// backoff: the current (or, once lapsed, the last) lock was read as a
	// failure's retry backoff, not a worker's lock.
	backoff bool
	// lapsed: a worker's lock on the task was seen to lapse (or the task was
	// first seen lapsed, never having failed); it stays set until the task is
	// locked again, which is then a redelivery.
	lapsed bool
	// redelivered: a redelivery of this task was counted; another attempt
	// runs or ran alongside the first (for the join's in_doubt).
	redelivered bool
	// lockedSince is, for a worker's lock (not a backoff), the engine time
	// of the first collection that saw the current worker hold it (see
	// sameLock); zero otherwise.
	lockedSince time.Time
	// redeliveredAt is the engine time of the collection that counted the
	// redelivery (for the status page); zero while redelivered is false.
	redeliveredAt time.Time
	// missed counts the collections since the task was last listed (see
	// trackUnlisted).
	missed int
	// handoverFrom is the worker whose lock the task was last seen in
	// before another worker failed it, while the history log did not yet
	// say who failed it; handoverLapsed says that lock was seen lapsed.
	// The next observation decides (see handover).
	handoverFrom   string
	handoverLapsed bool
}

func sameRetries(a, b *int) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// failedSince reports whether the task was failed (again) since prev: the
// failure history log names it since the previous collection, or its retries
// or error message changed. The log catches a worker that reports failures
// with unchanged retries and message (one that never decrements retries);
// the field comparison covers failures the log list did not reach.
func (o taskObs) failedSince(prev tracked) bool {
	return o.history.failed() || !sameRetries(o.Retries, prev.retries) || o.ErrMsg != prev.errMsg
}

// lockEvents are the counter increments one observation implies.
type lockEvents struct {
	expirations, redeliveries int
}

// classifyLocked decides, for a task that is locked now (E in the future by
// the engine's clock), whether the lock is a worker's (locked) or a
// failure's retry backoff, and which events happened since prev.
//
// Rules, in order:
//  1. Never seen before: R null means no failure ever, so a worker holds it
//     (locked). R not null is ambiguous; it is read as retry_backoff, because
//     the last event the engine recorded is a failure and nothing visible
//     says a fetch followed. The reading corrects itself at the next change
//     of the lock: a backoff ends by lapsing (then waiting), a worker's lock
//     by complete, failure, extendLock or lapse.
//  2. Seen lapsed (prev.lapsed): a failure since (failedSince) by the late
//     holder: backoff, no redelivery; by another worker (the history log
//     names it, and the task now belongs to it): that worker fetched the
//     task after the lapse and failed it, one redelivery, backoff. The
//     same lock (worker and E unchanged) read as held again: no event, it
//     stays lapsed (engine nodes whose clocks differ; a lapsed lock cannot
//     be extended, and a new fetch sets a new E). Otherwise it was locked
//     again (by the same or another worker): one redelivery, locked.
//  3. Failed since (failedSince: in the failure log, or R or M changed):
//     retry_backoff. If the history log says another worker failed it while
//     the worker of prev's lock (not a backoff) reported nothing (handover),
//     that lock lapsed unseen and the other worker fetched the task: one
//     lock expiration and one redelivery too.
//  4. Same E: nothing happened; the reading stays.
//  5. E changed, no failure, other worker: the previous lock ended and the
//     task was fetched again. If that lock was a backoff, this is the normal
//     retry fetch (locked, no event). If it was a worker's lock, that lock
//     lapsed unseen between two collections (no other worker could fetch it
//     otherwise; an operator's unlock looks the same): one lock expiration
//     and one redelivery.
//  6. E changed, no failure, same worker: extendLock, or the same worker
//     fetching the task again after its backoff: locked, no event. (A lapse
//     and re-fetch by the same worker entirely between two collections looks
//     like this too and is not counted.)
func classifyLocked(o taskObs, prev tracked, seen bool) (next tracked, ev lockEvents) {
	next = tracked{topic: o.Topic, actInst: o.ActInst, worker: o.Worker, exp: o.Exp, retries: o.Retries, errMsg: o.ErrMsg}
	defer func() { next.redelivered = (seen && prev.redelivered) || ev.redeliveries > 0 }()
	switch {
	case !seen:
		next.backoff = o.Retries != nil
	case prev.lapsed:
		switch {
		case o.failedSince(prev):
			next.backoff = true
			handover(o, prev, &next, &ev)
		case o.Exp.Equal(prev.exp) && o.Worker == prev.worker:
			// The same lock, read as held again: behind a load
			// balancer, a node whose clock runs behind still holds it.
			// No redelivery; it stays lapsed, so that the next lapsed
			// reading is no second expiration.
			next.lapsed = true
		default:
			ev.redeliveries = 1
		}
	case o.failedSince(prev):
		next.backoff = true
		handover(o, prev, &next, &ev)
	case o.Exp.Equal(prev.exp):
		next.backoff = prev.backoff
	case o.Worker != prev.worker:
		if !prev.backoff {
			ev.expirations, ev.redeliveries = 1, 1
		}
	default:
		// rule 6: locked, no event
	}
	resolveHandover(o, prev, &ev)
	return next, ev
}

// handover deals with a failure since prev of a task another worker holds
// now than prev's (a worker's lock, not a backoff: after a backoff a fetch
// by another worker is a retry). The history log names the workers: if it
// says another worker failed or ended the task while prev's holder reported
// nothing, prev's lock lapsed (counted, unless prev was seen lapsed) and the
// other worker fetched the task: one redelivery. If it says prev's holder
// failed the task, it was a retry. If it says neither yet (over REST the
// history is read before the lists, so the entry can arrive a collection
// after the lists show the failure), next remembers prev's holder and
// resolveHandover decides at the next observation.
func handover(o taskObs, prev tracked, next *tracked, ev *lockEvents) {
	if prev.backoff || o.Worker == prev.worker {
		return
	}
	switch {
	case o.recent.actedOtherThan(prev.worker):
		ev.redeliveries = 1
		if !prev.lapsed {
			ev.expirations = 1
		}
	case o.recent == nil || !o.recent.failedBy[prev.worker]:
		next.handoverFrom, next.handoverLapsed = prev.worker, prev.lapsed
	}
}

// resolveHandover counts a handover that handover left open once the
// history log names another worker than the earlier holder.
func resolveHandover(o taskObs, prev tracked, ev *lockEvents) {
	if prev.handoverFrom == "" || ev.redeliveries > 0 {
		return
	}
	if o.recent.actedOtherThan(prev.handoverFrom) {
		ev.redeliveries++
		if !prev.handoverLapsed {
			ev.expirations++
		}
	}
}

// lapsedReading is how a lapsed task (E in the past) counts.
type lapsedReading int

const (
	readExpired lapsedReading = iota // lock_expired
	readWaiting                      // waiting: a finished retry backoff
)

// classifyLapsed decides, for a task whose lock expiration is in the past
// (not locked now, still open, retries left or null, active), whether it is
// a worker's lapsed lock (lock_expired) or a finished retry backoff
// (waiting), and which events happened since prev. prevEngineNow is the
// engine time of the previous successful collection (zero on the first).
//
// Rules, in order:
//  1. Seen before and already lapsed with the same E: unchanged.
//  2. Seen before, failed since (failedSince): the failure's backoff has
//     ended already: waiting. As in classifyLocked rules 2 and 3, a failure
//     by another worker than prev's holder (handover) means that worker
//     fetched the task after prev's lock ended: one redelivery, and one lock
//     expiration unless prev's lapse was counted already (or prev was a
//     backoff, whose end is no lapse).
//  3. Seen before with the same E: if that lock was a backoff, the backoff
//     ended: waiting. Otherwise a worker's lock lapsed: one lock expiration.
//  4. Seen before with another E and no failure: the task was locked again
//     (extendLock, or a fetch) and that lock lapsed: one lock expiration;
//     if the worker changed, the earlier worker lock (unless it was a
//     backoff) lapsed too and the task was redelivered: one more expiration
//     and one redelivery.
//  5. Never seen: R null means the task never failed, so this past E is a
//     worker's lock that lapsed: lock_expired. It is counted as a lock
//     expiration only if E is later than the previous collection (the lapse
//     happened since, between two collections, so it cannot have been
//     counted before; on the first collection nothing is counted, so an
//     exporter restart does not replay old lapses). R not null is ambiguous
//     (finished backoff, or re-fetch then lapse) and is read as waiting, the
//     counterpart of reading a first-seen locked failed task as backoff.
func classifyLapsed(o taskObs, prev tracked, seen bool, prevEngineNow time.Time) (next tracked, read lapsedReading, ev lockEvents) {
	next = tracked{topic: o.Topic, actInst: o.ActInst, worker: o.Worker, exp: o.Exp, retries: o.Retries, errMsg: o.ErrMsg}
	defer func() { next.redelivered = (seen && prev.redelivered) || ev.redeliveries > 0 }()
	switch {
	case seen && prev.lapsed && o.Exp.Equal(prev.exp) && !o.failedSince(prev):
		next.lapsed = true
	case seen && o.failedSince(prev):
		next.backoff = true
		handover(o, prev, &next, &ev)
	case seen && o.Exp.Equal(prev.exp):
		if prev.backoff {
			next.backoff = true
		} else {
			next.lapsed = true
			ev.expirations = 1
		}
	case seen:
		next.lapsed = true
		ev.expirations = 1
		if o.Worker != prev.worker && !prev.backoff && !prev.lapsed {
			ev.expirations++
			ev.redeliveries++
		}
		if prev.lapsed {
			// It was lapsed, got locked again and lapsed again, all
			// between two collections.
			ev.redeliveries++
		}
	case o.Retries == nil:
		next.lapsed = true
		if !prevEngineNow.IsZero() && o.Exp.After(prevEngineNow) {
			ev.expirations = 1
		}
	default:
		next.backoff = true
	}
	if seen {
		resolveHandover(o, prev, &ev)
	}
	if next.lapsed {
		read = readExpired
	} else {
		read = readWaiting
	}
	return next, read, ev
}

// sameLock reports whether a task read as a worker's lock now is the lock
// prev saw: the same worker held it then as a worker's lock (not a retry
// backoff, not lapsed) and has not failed the task since. extendLock keeps
// it (rule 6); another worker (rule 5), a failure (rule 3) or a lapse
// (rule 2) starts a new lock. A lapse and re-fetch by the same worker
// between two collections looks like extendLock here too.
func sameLock(o taskObs, prev tracked, seen bool) bool {
	return seen && !prev.backoff && !prev.lapsed && !prev.lockedSince.IsZero() &&
		prev.worker == o.Worker && !o.failedSince(prev)
}
