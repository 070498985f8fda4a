package tables

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// OutboxRelay watches the change-data-capture relay of an outbox
// (databases[].tables.outbox.relay): the logical replication slot its relay
// reads (Debezium's PostgreSQL connector with the outbox event router,
// pg_recvlogical, any logical decoding consumer), and how long the outbox
// writes it has not confirmed have waited (relay_marks.go). It reads no
// column of the outbox table: the table may have any shape and be empty at
// all times (Debezium's pattern inserts and deletes each event in one
// transaction); its writes are counted from its statistics
// (pg_stat_user_tables).
//
// It only reads: pg_replication_slots, the table's statistics, settings and
// the server's WAL position, in the collection's read-only transaction. It
// never opens a replication connection and never consumes, advances or
// otherwise touches the slot.
type OutboxRelay struct {
	tableBase
	table string
	relay config.OutboxRelay

	// State, changed only by a successful collection.
	marks   relayMarks
	counts  *tableCounts
	written float64

	sqlReading, sqlPublications string
}

// tableCounts are the outbox's cumulative statistics at one reading.
type tableCounts struct {
	// inserts is n_tup_ins: every insert, rolled back or not.
	inserts int64
	// mods is n_mod_since_analyze: committed inserts, updates and
	// deletes since the last ANALYZE, which resets it (analyses counts
	// them).
	mods, analyses int64
}

// NewOutboxRelay returns the collector of an outbox's relay; o.Table.Relay
// must be set.
func NewOutboxRelay(o OutboxOptions) *OutboxRelay {
	c := &OutboxRelay{
		tableBase: newTableBase(o, catalog.OutboxRelaySlotActive, catalog.OutboxRelayLagSeconds, catalog.OutboxRelayLagBytes,
			catalog.OutboxRelayRetainedWALBytes, catalog.OutboxRelayWALStatus, catalog.OutboxRelayWALKeepLimitBytes, catalog.OutboxEventsWritten),
		table: o.Table.Table,
		relay: *o.Table.Relay,
	}
	// One statement: the clock, the WAL position, the table's statistics
	// and the slot are read at the same moment. In recovery
	// pg_current_wal_lsn() fails; the CASE turns that into a NULL that
	// says "a standby".
	c.sqlReading = `SELECT now(),
	CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_lsn()::text END,
	(SELECT setting::bigint FROM pg_settings WHERE name = 'max_slot_wal_keep_size'),
	coalesce(t.n_tup_ins, 0), coalesce(t.n_mod_since_analyze, 0), coalesce(t.analyze_count + t.autoanalyze_count, 0),
	s.slot_name IS NOT NULL, coalesce(s.slot_type, ''), coalesce(s.database::text, ''), coalesce(s.plugin::text, ''),
	coalesce(s.active, false), s.restart_lsn::text, s.confirmed_flush_lsn::text, s.wal_status
FROM (SELECT to_regclass($1) AS oid) r
LEFT JOIN pg_stat_user_tables t ON t.relid = r.oid
LEFT JOIN pg_replication_slots s ON s.slot_name = $2`
	// Every publication, with whether it publishes the table's inserts:
	// pg_publication_tables resolves FOR TABLE, FOR TABLES IN SCHEMA and
	// FOR ALL TABLES alike.
	c.sqlPublications = `SELECT p.pubname::text, p.pubinsert,
	EXISTS (SELECT 1 FROM pg_publication_tables pt JOIN pg_class c ON c.oid = to_regclass($1)
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE pt.pubname = p.pubname AND pt.schemaname = n.nspname AND pt.tablename = c.relname)
FROM pg_publication p ORDER BY 1`
	return c
}

// Name implements collectors.Collector.
func (c *OutboxRelay) Name() string { return vocab.CollectorOutboxRelay }

// Requirements says what the collector needs: the table (none of its
// columns), and the slot, which `check` probes.
func (c *OutboxRelay) Requirements() pgschema.Requirements {
	return pgschema.Requirements{
		Kind:  vocab.TableOutbox,
		Table: c.table,
		Probes: []pgschema.Probe{{Name: "relay slot " + c.relay.Slot, Run: func(ctx context.Context, tx pgx.Tx) (pgschema.ProbeReport, error) {
			r, err := c.readSlot(ctx, tx)
			if err != nil {
				return pgschema.ProbeReport{}, err
			}
			return r.report(c.relay), nil
		}}},
	}
}

// slotReading is one reading of the slot and the outbox's statistics.
type slotReading struct {
	at time.Time
	// lsn is pg_current_wal_lsn() read with the statistics, inserted
	// pg_current_wal_insert_lsn() read after them.
	lsn, inserted uint64
	keepLimitMB   int64
	counts        tableCounts
	plugin        string
	active        bool
	// restart and confirmed are absent (has* false) when the slot's row
	// holds NULL: restart_lsn of a slot that lost its WAL.
	restart, confirmed       uint64
	hasRestart, hasConfirmed bool
	walStatus                string
	// publications names the publications that publish the table's
	// inserts (pgoutput slots).
	publications []string
}

// RelayError is a relay the exporter cannot watch as configured: a slot
// that is not there, a server without logical decoding, a publication
// that leaves out the table, a role that may not read the slot. Its text
// says what to fix, naming the config key.
type RelayError struct {
	// Key is the config key to fix (or whose target is wrong).
	Key string
	// Problem is the class of the problem, without any value from the
	// database (blocks/failure).
	Problem string
	Detail  string
}

func (e *RelayError) Error() string { return e.Detail + " (config key " + e.Key + ")" }

// FailureClass names the failure for the log and the status page.
func (e *RelayError) FailureClass() string { return "relay: " + e.Problem + " (" + e.Key + ")" }

func (c *OutboxRelay) relayErr(key, problem, format string, args ...any) error {
	return &RelayError{Key: c.key + ".relay" + key, Problem: problem, Detail: fmt.Sprintf(format, args...)}
}

// readSlot reads the slot and the outbox's statistics in tx, and fails on
// anything that keeps the relay from being watched.
func (c *OutboxRelay) readSlot(ctx context.Context, tx pgx.Tx) (slotReading, error) {
	var r slotReading
	var user, walLevel string
	if err := tx.QueryRow(ctx, "SELECT current_user, current_setting('wal_level')").Scan(&user, &walLevel); err != nil {
		return r, fmt.Errorf("outbox relay query: %w", err)
	}
	if walLevel != "logical" {
		return r, c.relayErr("", "wal_level is not logical",
			"wal_level is %s: logical replication slots, and so any change-data-capture relay, need wal_level = logical (set it in postgresql.conf and restart PostgreSQL)", walLevel)
	}
	var lsn, restart, confirmed, walStatus *string
	var keepLimit *int64
	var found bool
	var slotType, slotDB, currentDB string
	table := pgschema.QuoteTable(c.table)
	err := tx.QueryRow(ctx, c.sqlReading, table, c.relay.Slot).Scan(&r.at, &lsn, &keepLimit,
		&r.counts.inserts, &r.counts.mods, &r.counts.analyses,
		&found, &slotType, &slotDB, &r.plugin, &r.active, &restart, &confirmed, &walStatus)
	if err != nil {
		return r, c.privilegeError(user, err)
	}
	if lsn == nil {
		return r, c.relayErr("", "database is a standby",
			"the server is a standby (in recovery): the outbox is written on the primary, and its insert statistics and WAL position are the primary's; point the database's DSN at the primary")
	}
	if r.lsn, err = parseLSN(*lsn); err != nil {
		return r, err
	}
	// After the statistics were read: every write they count has its
	// commit record before this position.
	var inserted string
	if err := tx.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&inserted); err != nil {
		return r, c.privilegeError(user, err)
	}
	if r.inserted, err = parseLSN(inserted); err != nil {
		return r, err
	}
	r.keepLimitMB = -1
	if keepLimit != nil {
		r.keepLimitMB = *keepLimit
	}
	if err := tx.QueryRow(ctx, "SELECT current_database()").Scan(&currentDB); err != nil {
		return r, fmt.Errorf("outbox relay query: %w", err)
	}
	if !found {
		return r, c.missingSlot(ctx, tx, currentDB)
	}
	switch {
	case slotType != "logical":
		return r, c.relayErr(".slot", "not a logical slot",
			"replication slot %q is a %s slot, not a logical one: a change-data-capture relay reads a logical slot; name the slot the outbox's relay reads", c.relay.Slot, slotType)
	case slotDB != currentDB:
		return r, c.relayErr(".slot", "slot of another database",
			"replication slot %q decodes database %s, not %s, where the outbox is: name the slot of this database's relay (or point the DSN at database %s)", c.relay.Slot, slotDB, currentDB, slotDB)
	}
	for _, p := range []struct {
		s   *string
		dst *uint64
		ok  *bool
	}{{restart, &r.restart, &r.hasRestart}, {confirmed, &r.confirmed, &r.hasConfirmed}} {
		if p.s == nil {
			continue
		}
		if *p.dst, err = parseLSN(*p.s); err != nil {
			return r, err
		}
		*p.ok = true
	}
	if walStatus != nil {
		r.walStatus = *walStatus
	}
	if r.plugin == "pgoutput" {
		if r.publications, err = c.publishing(ctx, tx, user); err != nil {
			return r, err
		}
	}
	return r, nil
}

// publishing returns the publications that publish the table's inserts,
// and fails when none does (or the configured one does not): a pgoutput
// relay sees only the tables of the publications it streams.
func (c *OutboxRelay) publishing(ctx context.Context, tx pgx.Tx, user string) ([]string, error) {
	type pub struct {
		name            string
		inserts, covers bool
	}
	var pubs []pub
	var row pub
	err := each(ctx, tx, "outbox relay publications query", c.sqlPublications, []any{pgschema.QuoteTable(c.table)}, []any{&row.name, &row.inserts, &row.covers}, func() error {
		pubs = append(pubs, row)
		return nil
	})
	if err != nil {
		return nil, c.privilegeError(user, err)
	}
	var ok, names []string
	for _, p := range pubs {
		names = append(names, p.name)
		if p.covers && p.inserts {
			ok = append(ok, p.name)
		}
	}
	if want := c.relay.Publication; want != "" {
		i := slices.IndexFunc(pubs, func(p pub) bool { return p.name == want })
		switch {
		case i < 0:
			return nil, c.relayErr(".publication", "publication missing",
				"publication %q does not exist (publications: %s): the relay's slot uses pgoutput, which streams the tables of the publications its relay names; create it (CREATE PUBLICATION %s FOR TABLE %s) or name the relay's publication", want, orNone(names), want, c.table)
		case !pubs[i].covers:
			return nil, c.relayErr(".publication", "publication leaves out the table",
				"publication %q does not cover table %s: the relay never sees the outbox's writes (ALTER PUBLICATION %s ADD TABLE %s)", want, c.table, want, c.table)
		case !pubs[i].inserts:
			return nil, c.relayErr(".publication", "publication leaves out inserts",
				"publication %q does not publish inserts (its publish parameter), so the relay never sees an event: ALTER PUBLICATION %s SET (publish = 'insert, update, delete')", want, want)
		}
		return []string{want}, nil
	}
	if len(ok) == 0 {
		return nil, c.relayErr("", "no publication covers the table",
			"the slot %q uses pgoutput, and no publication publishes the inserts of table %s (publications: %s): the relay never sees the outbox's writes; add the table to the relay's publication (ALTER PUBLICATION name ADD TABLE %s) and set relay.publication to it", c.relay.Slot, c.table, orNone(names), c.table)
	}
	return ok, nil
}

// missingSlot is the error for a slot that does not exist, naming the
// logical slots of the database there are.
func (c *OutboxRelay) missingSlot(ctx context.Context, tx pgx.Tx, db string) error {
	var names []string
	var n string
	err := each(ctx, tx, "replication slots query", `SELECT slot_name::text FROM pg_replication_slots
WHERE slot_type = 'logical' AND database = current_database() ORDER BY 1 LIMIT 20`, nil, []any{&n}, func() error {
		names = append(names, n)
		return nil
	})
	if err != nil {
		return err
	}
	return c.relayErr(".slot", "replication slot missing",
		"replication slot %q does not exist (logical slots of database %s: %s): a relay creates its slot when it first connects (Debezium: slot.name), so either it never ran or the slot was dropped, and a relay whose slot was dropped cannot resume where it stopped", c.relay.Slot, db, orNone(names))
}

// privilegeError names what the role may not read, for an error of
// SQLSTATE 42501; other errors it returns as they are.
func (c *OutboxRelay) privilegeError(user string, err error) error {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || pg.Code != "42501" {
		return fmt.Errorf("outbox relay query: %w", err)
	}
	return c.relayErr("", "privileges missing",
		"role %q may not read what watching the relay needs (%s): it needs SELECT on pg_replication_slots, pg_stat_user_tables, pg_settings, pg_publication and pg_publication_tables and EXECUTE on pg_current_wal_lsn() and pg_current_wal_insert_lsn(), which PUBLIC holds unless revoked: grant them to the role (docs/database.md)", user, pg.Message)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// report says what check prints of a reading: notes, and warnings of
// what will go wrong.
func (r slotReading) report(relay config.OutboxRelay) pgschema.ProbeReport {
	var rep pgschema.ProbeReport
	state := "inactive (no relay connected)"
	if r.active {
		state = "active (a relay streams from it)"
	}
	walStatus := r.walStatus
	if walStatus == "" {
		walStatus = "unknown (NULL)"
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("logical slot, plugin %s, %s, wal_status %s", r.plugin, state, walStatus))
	if r.plugin == "pgoutput" {
		rep.Notes = append(rep.Notes, "the table's inserts are published by "+strings.Join(r.publications, ", "))
	} else {
		rep.Notes = append(rep.Notes, "plugin "+r.plugin+" decodes every table of the database: no publication to check")
	}
	if r.hasConfirmed {
		rep.Notes = append(rep.Notes, fmt.Sprintf("confirmed %s of WAL behind the server's position (other tables' WAL included)", bytesText(r.lsn-min(r.lsn, r.confirmed))))
	}
	if !r.active {
		rep.Warnings = append(rep.Warnings, "no relay is connected: the slot retains WAL and nothing is published until the relay (slot "+relay.Slot+") runs")
	}
	switch r.walStatus {
	case "unreserved", "lost":
		rep.Warnings = append(rep.Warnings, "wal_status "+r.walStatus+": the WAL the relay needs is due for removal or gone (runbook WorkflowOutboxRelayWALAtRisk)")
	}
	if r.keepLimitMB < 0 {
		rep.Warnings = append(rep.Warnings, "max_slot_wal_keep_size is -1 (unlimited): a stopped relay's slot retains WAL until the disk is full, and no alert can say how near that is; set it, and WorkflowOutboxRelayWALAtRisk warns before PostgreSQL invalidates the slot")
	} else {
		rep.Notes = append(rep.Notes, fmt.Sprintf("max_slot_wal_keep_size %s", bytesText(uint64(r.keepLimitMB)<<20)))
	}
	return rep
}

// bytesText is a byte count for people.
func bytesText(b uint64) string {
	for _, u := range []struct {
		unit string
		size uint64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
		if b >= u.size {
			return strconv.FormatFloat(float64(b)/float64(u.size), 'f', 1, 64) + " " + u.unit
		}
	}
	return strconv.FormatUint(b, 10) + " bytes"
}

// parseLSN parses PostgreSQL's text form of a WAL position, "16/B374D848".
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("outbox relay: %q is not a WAL position", s)
	}
	return h<<32 | l, nil
}

// Collect implements collectors.Collector.
func (c *OutboxRelay) Collect(ctx context.Context, _ *collectors.Sink) ([]prometheus.Metric, error) {
	var r slotReading
	var relayErr *RelayError
	err := c.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := c.check(ctx, tx, c.Requirements()); err != nil {
			return err
		}
		var err error
		r, err = c.readSlot(ctx, tx)
		errors.As(err, &relayErr)
		return err
	})
	if relayErr != nil {
		// The database answered: the relay is not as configured. Kept
		// as a *RelayError, so the log and the status page class it.
		err = fmt.Errorf("database %s: %w", c.database, relayErr)
	}
	if err != nil {
		return nil, err
	}
	// The reading succeeded: only now does it change the collector's
	// state.
	wrote := false
	if prev := c.counts; prev != nil {
		added := r.counts.inserts - prev.inserts
		if added < 0 {
			// The statistics were reset (pg_stat_reset, a crash):
			// what they count now was inserted since.
			added = r.counts.inserts
		}
		c.written += float64(added)
		// n_tup_ins counts rolled-back inserts too; a committed one
		// moves n_mod_since_analyze as well, unless an ANALYZE reset
		// it meanwhile, when it cannot be told apart.
		wrote = added > 0 && (r.counts.mods != prev.mods || r.counts.analyses != prev.analyses || r.counts.inserts < prev.inserts)
	}
	c.counts = &r.counts
	lag, known, merged := c.marks.observe(r.at, r.lsn, r.inserted, wrote, slotProgress{confirmed: r.confirmed, hasConfirmed: r.hasConfirmed, active: r.active})
	if merged > 0 {
		c.logger.Warn("outbox relay behind for long: merged the oldest write marks in pairs, so its lag in seconds is coarser (never lower) until it catches up",
			"database", c.database, "slot", c.relay.Slot, "merged", merged, "kept", len(c.marks.marks))
	}
	return c.metrics(r, lag, known), nil
}

func (c *OutboxRelay) metrics(r slotReading, lag float64, lagKnown bool) []prometheus.Metric {
	db, slot := c.database, c.relay.Slot
	out := []prometheus.Metric{
		c.gauge(catalog.OutboxRelaySlotActive, boolFloat(r.active), db, slot),
		c.counter(catalog.OutboxEventsWritten, c.written, db),
	}
	if lagKnown {
		out = append(out, c.gauge(catalog.OutboxRelayLagSeconds, lag, db, slot))
	}
	if r.hasConfirmed {
		out = append(out, c.gauge(catalog.OutboxRelayLagBytes, float64(r.lsn-min(r.lsn, r.confirmed)), db, slot))
	}
	if r.hasRestart {
		out = append(out, c.gauge(catalog.OutboxRelayRetainedWALBytes, float64(r.lsn-min(r.lsn, r.restart)), db, slot))
	}
	for _, s := range vocab.SlotWALStatuses() {
		out = append(out, c.gauge(catalog.OutboxRelayWALStatus, boolFloat(r.walStatus == s), db, slot, s))
	}
	if r.keepLimitMB >= 0 {
		out = append(out, c.gauge(catalog.OutboxRelayWALKeepLimitBytes, float64(r.keepLimitMB)*(1<<20), db, slot))
	}
	return out
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
