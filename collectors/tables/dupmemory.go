package tables

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
)

// The duplicate memory: the duplicate_count last seen of every idempotency
// record that has one (the duplicate_count extension). The counter
// workflow_idempotency_duplicates_prevented_total adds the growth of a
// record's count when the record's update shows in the recent window, so
// the count before the update must be known: for a record updated an hour
// or a month ago as much as for one updated a minute ago.
//
// What it costs and how it stays bounded:
//   - An entry is a 64-bit hash of (scope, key), salted per memory, and
//     three 32-bit numbers (the count, the update's Unix second, a scan
//     generation): about 20 bytes in the map, 40 at worst while it grows.
//   - It is filled by a scan of the records with duplicate_count > 0 in
//     keyset pages (dupPage rows, in the order of updated_at, scope, key),
//     each page its own short read-only transaction under the database's
//     statement_timeout, never inside the collection's transaction. A
//     collection reads pages for at most a third of the time it has left
//     (dupScanShare) and goes on at the next. The scan is a baseline: until
//     it is complete the counter counts nothing (the records' earlier
//     duplicates are not ours), as at a fresh start.
//   - A complete scan also prunes: entries of records the scan did not find
//     (deleted by retention) are dropped. A prune scan runs every
//     dupPruneEvery; it only marks and drops, and counting goes on.
//   - Past max_remembered_duplicates the entries updated longest ago are
//     dropped (to nine tenths of the limit). Such a record, if it absorbs a
//     duplicate again, counts its whole duplicate_count (an overcount of
//     what it had before), logged when the eviction starts.
//   - A collection whose counters skipped part of a gap (max_catch_up)
//     missed records' updates: the counts may be stale, and a baseline scan
//     runs again.
const (
	dupPage       = 10000
	dupPruneEvery = time.Hour
	dupScanShare  = 3 // a scan uses at most 1/dupScanShare of the time left
)

// dupEntry is one record's remembered count.
type dupEntry struct {
	n, t, gen uint32 // duplicate_count, updated_at (Unix s), scan generation
}

// dupMemory is the duplicate memory of one idempotency table. The
// collecting goroutine owns it.
type dupMemory struct {
	salt  uint64
	m     map[uint64]dupEntry
	limit int
	// current: a baseline scan completed and nothing skipped since, so the
	// counts are what the records held at their last update.
	current bool
	scan    *dupScan
	gen     uint32
	// lastScan is when the last complete scan started (the database
	// clock), for the next prune.
	lastScan time.Time
	evicting bool
	// needsScanNow: the poll said a scan is due (needsScan); the scan
	// starts after it. scanFailing: the last scan page failed (logged once).
	needsScanNow bool
	scanFailing  bool
}

// dupScan is a scan in progress: its keyset cursor and what it is for.
type dupScan struct {
	baseline bool
	gen      uint32
	started  time.Time // the database clock at its first page
	afterTS  time.Time
	afterKey [2]string
	begun    bool
	rows     int
}

func newDupMemory(limit int) *dupMemory {
	return &dupMemory{salt: watermark.Salt(), m: map[uint64]dupEntry{}, limit: limit}
}

// hash is FNV-1a over the salt, the scope and the key (watermark.Hash, as
// the recent windows hash their rows).
func (d *dupMemory) hash(scope, key string) uint64 { return watermark.Hash(d.salt, scope, key) }

func unixSec(t time.Time) uint32 { return clampCount(t.Unix()) }

func clampCount(n int64) uint32 {
	switch {
	case n < 0:
		return 0
	case n > 1<<32-1:
		return 1<<32 - 1
	}
	return uint32(n)
}

// count is the remembered count of a record (0: none remembered).
func (d *dupMemory) count(h uint64) int64 { return int64(d.m[h].n) }

// set remembers a record's count as its update at ts showed it.
func (d *dupMemory) set(h uint64, n int64, ts time.Time) {
	e := d.m[h]
	e.n, e.t = clampCount(n), unixSec(ts)
	d.m[h] = e
}

// stale marks the counts as possibly behind (a skipped span, a restart
// that did not resume): a baseline scan runs at the next collection, and
// counting waits for it.
func (d *dupMemory) stale() {
	d.current = false
	if d.scan != nil && !d.scan.baseline {
		d.scan.baseline = true
	}
}

// needsScan says whether a collection at dbNow must read scan pages.
func (d *dupMemory) needsScan(dbNow time.Time) bool {
	return d.scan != nil || !d.current || dbNow.Sub(d.lastScan) >= dupPruneEvery
}

// scanDuplicates reads scan pages of the table, each in its own
// transaction, until the scan is complete or the budget is spent (a scan
// starts when the poll found one due, or goes on). The pages read before a
// failed one stay read.
func (c *Idempotency) scanDuplicates(ctx context.Context) error {
	d := c.dup
	budget := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		budget = time.Until(dl) / dupScanShare
	}
	start := time.Now()
	for d.scan != nil || d.needsScanNow {
		d.needsScanNow = false
		done, err := c.scanPage(ctx)
		if err != nil {
			return err
		}
		if done || time.Since(start) >= budget {
			return nil
		}
	}
	return nil
}

// scanPage reads one keyset page; done when the scan is complete.
func (c *Idempotency) scanPage(ctx context.Context) (done bool, err error) {
	d := c.dup
	type rec struct {
		scope, key string
		n          int64
		ts         time.Time
	}
	var page []rec
	var dbNow time.Time
	err = c.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if dbNow, err = pgsource.Now(ctx, tx); err != nil {
			return err
		}
		sc := d.scan
		args := []any{sc == nil || !sc.begun, time.Time{}, "", ""}
		if sc != nil && sc.begun {
			args = []any{false, sc.afterTS, sc.afterKey[0], sc.afterKey[1]}
		}
		var r rec
		return each(ctx, tx, "idempotency duplicate_count scan", c.sqlDupScan(), args, []any{&r.scope, &r.key, &r.n, &r.ts}, func() error {
			page = append(page, r)
			return nil
		})
	})
	if err != nil {
		return false, fmt.Errorf("database %s: %w", c.database, err)
	}
	if d.scan == nil {
		d.gen++
		d.scan = &dupScan{baseline: !d.current, gen: d.gen, started: dbNow}
	}
	sc := d.scan
	for _, r := range page {
		h := d.hash(r.scope, r.key)
		e, ok := d.m[h]
		if sc.baseline {
			// Counts only grow: a record the window read since is kept
			// at its newer count.
			if !ok || clampCount(r.n) > e.n {
				e.n, e.t = clampCount(r.n), unixSec(r.ts)
			}
		} else if !ok {
			// A prune adds nothing: a record it finds unknown has just
			// absorbed its first duplicate, which the window counts.
			continue
		}
		e.gen = sc.gen
		d.m[h] = e
	}
	sc.rows += len(page)
	if n := len(page); n > 0 {
		sc.begun, sc.afterTS, sc.afterKey = true, page[n-1].ts, [2]string{page[n-1].scope, page[n-1].key}
	}
	if len(page) == dupPage {
		return false, nil
	}
	// Complete: drop what the scan did not find, unless the window saw it
	// updated since the scan began (a record created or changed meanwhile).
	floor := unixSec(sc.started)
	for h, e := range d.m {
		if e.gen != sc.gen && e.t < floor {
			delete(d.m, h)
		}
	}
	d.lastScan, d.scan = sc.started, nil
	if sc.baseline {
		d.current = true
	}
	d.bound(c)
	return true, nil
}

// bound drops the entries updated longest ago past the limit.
func (d *dupMemory) bound(c *Idempotency) {
	if len(d.m) <= d.limit {
		d.evicting = false
		return
	}
	times := make([]uint32, 0, len(d.m))
	for _, e := range d.m {
		times = append(times, e.t)
	}
	slices.Sort(times)
	keep := d.limit * 9 / 10
	cut := times[len(times)-keep]
	for h, e := range d.m {
		if e.t < cut {
			delete(d.m, h)
		}
	}
	if !d.evicting {
		c.logger.Warn("idempotency: more records with a duplicate_count than max_remembered_duplicates; the ones updated longest ago are forgotten, and one that absorbs a duplicate again counts its whole duplicate_count",
			"database", c.database, "table", c.cfg.Table, "max_remembered_duplicates", d.limit)
	}
	d.evicting = true
}

// sqlDupScan is one keyset page of the records with a duplicate_count, in
// the order of (updated_at, scope, key): $1 true reads the first page,
// else the page after ($2, $3, $4). A record updated during the scan moves
// ahead of the cursor and is read (again) later, never skipped.
func (c *Idempotency) sqlDupScan() string {
	col := c.cfg.Columns
	return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, %[3]s::bigint, %[4]s::timestamptz
FROM %[5]s
WHERE %[3]s > 0 AND ($1 OR (%[4]s, COALESCE(%[1]s::text, ''), %[2]s::text) > ($2::timestamptz, $3::text, $4::text))
ORDER BY %[4]s, COALESCE(%[1]s::text, ''), %[2]s::text
LIMIT %[6]d`, pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Key), pgschema.QuoteIdent(c.dupColumn),
		pgschema.QuoteIdent(col.UpdatedAt), pgschema.QuoteTable(c.cfg.Table), dupPage)
}

// dupState is the memory in a state file: the salt, whether the counts are
// current, and the entries in parallel slices.
type dupState struct {
	Salt     uint64
	Current  bool
	LastScan time.Time
	Hashes   []uint64
	Counts   []uint32
	Times    []uint32
}

func (d *dupMemory) state() *dupState {
	st := &dupState{Salt: d.salt, Current: d.current && d.scan == nil, LastScan: d.lastScan,
		Hashes: make([]uint64, 0, len(d.m)), Counts: make([]uint32, 0, len(d.m)), Times: make([]uint32, 0, len(d.m))}
	for h, e := range d.m {
		st.Hashes = append(st.Hashes, h)
		st.Counts = append(st.Counts, e.n)
		st.Times = append(st.Times, e.t)
	}
	return st
}

func (d *dupMemory) restore(st *dupState) error {
	if len(st.Hashes) != len(st.Counts) || len(st.Hashes) != len(st.Times) {
		return fmt.Errorf("duplicate memory: %d hashes, %d counts, %d times", len(st.Hashes), len(st.Counts), len(st.Times))
	}
	d.salt, d.current, d.lastScan = st.Salt, st.Current, st.LastScan
	d.m = make(map[uint64]dupEntry, len(st.Hashes))
	for i, h := range st.Hashes {
		d.m[h] = dupEntry{n: st.Counts[i], t: st.Times[i]}
	}
	return nil
}
