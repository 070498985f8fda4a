package tables

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The tables' lists of the status page (docs/status.md). Each list of a
// table is one bounded query in the collector's own transaction, run only
// when the page is on (the collection has a collectors.Sink) and the table's
// identifiers are not switched off: the oldest rows of one kind of open
// work, `ORDER BY <time> LIMIT max_items`, with the predicate of the
// partial index the gauges already use, so it reads only open rows. Its
// total comes from the gauges of the same collection. The joins' lists cost
// no query: the join reads the records of the in-flight tasks anyway.
// Selected are identifiers, statuses and times, never a payload, a result,
// an error message or a request hash.

// items are how many items a list keeps when the page is on (a sink) and
// the table's identifiers may be shown; 0 otherwise (no query).
func (r *statusReport) items(show config.SourceStatus) int {
	if r.sink != nil && show.ShowIdentifiers() {
		return r.sink.MaxItems()
	}
	return 0
}

// listQuery is one list of a table: its kind, its SQL (arguments: $1 the
// limit, then extra) and how a row becomes an item.
type listQuery struct {
	kind  string
	sql   string
	extra []any
}

// exampleLimit is the limit the status queries are explained with.
const exampleLimit = config.DefaultStatusMaxItems

// requirement is the query as the collector declares it (for EXPLAIN).
func (q listQuery) requirement() pgschema.Query {
	return pgschema.Query{Name: "status_" + q.kind, SQL: q.sql, Args: append([]any{exampleLimit}, q.extra...)}
}

// read runs the query for the first n items (none when n is 0: the page
// is off or the table's identifiers hidden). dest are a row's leading
// columns, which item makes an item of; read scans the trailing
// ageColumns into the item's Since and AgeSeconds.
func (q listQuery) read(ctx context.Context, tx pgx.Tx, what string, n int, dest []any, item func() collectors.Item) ([]collectors.Item, error) {
	if n <= 0 {
		return nil, nil
	}
	var items []collectors.Item
	var ts *time.Time
	var age float64
	err := each(ctx, tx, what, q.sql, append([]any{n}, q.extra...), append(dest, &ts, &age), func() error {
		it := item()
		if ts != nil {
			it.Since, it.AgeSeconds = since(*ts), age
		}
		items = append(items, it)
		return nil
	})
	return items, err
}

// statusReport collects a collection's lists until the collection has
// succeeded; then they go to the sink, which is nil when the page is off.
type statusReport struct {
	sink  *collectors.Sink
	lists []collectors.List
}

// add keeps a list of the table: its items if the table's identifiers may
// be shown, its total in any case.
func (r *statusReport) add(b *tableBase, table string, show config.SourceStatus, kind string, total float64, items []collectors.Item) {
	r.lists = append(r.lists, collectors.List{Kind: kind, Database: b.database, Table: table, Total: int(total),
		IdentifiersHidden: !show.ShowIdentifiers(), Items: items})
}

// addList keeps a list built whole (the error groups).
func (r *statusReport) addList(l collectors.List) { r.lists = append(r.lists, l) }

// send hands the lists to the collection's sink, if the page is on.
func (r *statusReport) send() {
	if r.sink != nil {
		for _, l := range r.lists {
			r.sink.Add(l)
		}
	}
}

// since is a row's time as an item's Since.
func since(t time.Time) *time.Time {
	u := t.UTC()
	return &u
}

// ageColumns are the select list's end of every list query: the row's
// time and its age by the database clock.
func ageColumns(column string) string {
	c := pgschema.QuoteIdent(column)
	return fmt.Sprintf("%s::timestamptz, GREATEST(extract(epoch FROM now() - %s)::float8, 0)", c, c)
}

// idempotencyLists are the idempotency table's two list queries: records
// in progress not updated within stale_after ($2, seconds), and records in
// UNKNOWN_OUTCOME, oldest update first; st is the resolved status column.
func (c *Idempotency) idempotencyLists(st idemStatus) []listQuery {
	col := c.cfg.Columns
	open := st.open()
	q := func(statuses []string, extra string) string {
		return fmt.Sprintf(`SELECT COALESCE(%[1]s::text, ''), %[2]s::text, COALESCE(%[3]s, ''), COALESCE(%[4]s::text, ''), %[5]s
FROM %[6]s WHERE %[7]s AND %[8]s%[9]s
ORDER BY %[10]s LIMIT $1`, pgschema.QuoteIdent(col.Scope), pgschema.QuoteIdent(col.Key), st.col.text(),
			pgschema.QuoteIdent(col.JobReference), ageColumns(col.UpdatedAt), pgschema.QuoteTable(c.cfg.Table), open,
			st.col.in(st.values(statuses...)), extra, pgschema.QuoteIdent(col.UpdatedAt))
	}
	return []listQuery{
		{vocab.KindStaleInProgress, q(vocab.IdempotencyInProgressStatuses(),
			fmt.Sprintf(" AND %s < now() - make_interval(secs => $2)", pgschema.QuoteIdent(col.UpdatedAt))),
			[]any{time.Duration(c.cfg.StaleAfter).Seconds()}},
		{vocab.KindUnknownOutcome, q([]string{vocab.StatusUnknownOutcome}, ""), nil},
	}
}

// readStatus reads the idempotency lists; the totals are the gauges'.
func (p *idempotencyPoll) readStatus(ctx context.Context, tx pgx.Tx) error {
	if p.status.sink == nil {
		return nil
	}
	c := p.c
	var stale, unknown float64
	for k, a := range p.gauges {
		switch lastKey(k) {
		case vocab.StatusStarted, vocab.StatusSideEffectSubmitted:
			stale += a.stale
		case vocab.StatusUnknownOutcome:
			unknown += a.count
		}
	}
	totals := map[string]float64{vocab.KindStaleInProgress: stale, vocab.KindUnknownOutcome: unknown}
	n := p.status.items(c.cfg.Status)
	for _, q := range c.idempotencyLists(p.st) {
		var scope, key, st, ref string
		items, err := q.read(ctx, tx, "idempotency "+q.kind+" list query", n, []any{&scope, &key, &st, &ref}, func() collectors.Item {
			return collectors.Item{Scope: scope, IdempotencyKey: key, Status: st, JobReference: ref}
		})
		if err != nil {
			return err
		}
		p.status.add(&c.tableBase, c.cfg.Table, c.cfg.Status, q.kind, totals[q.kind], items)
	}
	return nil
}

// inboxLists are the inbox's list queries: messages waiting (open, not
// UNKNOWN_OUTCOME) and, where the shape has the state, messages in
// UNKNOWN_OUTCOME, oldest first (by id without a receive time).
func (c *Inbox) inboxLists(s inboxShape) []listQuery {
	order := s.id
	if s.received.present() {
		order = s.received.value()
	}
	q := func(pred string) string {
		return fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s, %[4]s, %[5]s
FROM %[6]s%[7]s
ORDER BY %[8]s LIMIT $1`, s.source, s.id, s.typ, s.status, s.received.listColumns(), pgschema.QuoteTable(s.table), where(s.open, pred), order)
	}
	unknown := s.unknownOutcome()
	if unknown == "" {
		return []listQuery{{vocab.KindInboxWaiting, q(""), nil}}
	}
	return []listQuery{
		{vocab.KindInboxWaiting, q("(" + unknown + ") IS NOT TRUE"), nil},
		{vocab.KindUnknownOutcome, q(unknown), nil},
	}
}

// readInboxStatus reads the inbox lists and the error groups; totals are
// the gauges'.
func (c *Inbox) readInboxStatus(ctx context.Context, tx pgx.Tx, p *inboxPlan, gauges byTuple[agg], groups byTuple[inboxGroup], report *statusReport) error {
	if report.sink == nil {
		return nil
	}
	totals := map[string]float64{}
	for k, a := range gauges {
		kind := vocab.KindInboxWaiting
		if lastKey(k) == vocab.StatusUnknownOutcome && len(p.lists) > 1 {
			kind = vocab.KindUnknownOutcome
		}
		totals[kind] += a.count
	}
	n := report.items(c.cfg.Status)
	for _, q := range p.lists {
		var source, id, typ, st string
		items, err := q.read(ctx, tx, "inbox "+q.kind+" list query", n, []any{&source, &id, &typ, &st}, func() collectors.Item {
			return collectors.Item{SourceSystem: source, MessageID: id, MessageType: typ, Status: st}
		})
		if err != nil {
			return err
		}
		report.add(&c.tableBase, c.cfg.Table, c.cfg.Status, q.kind, totals[q.kind], items)
	}
	if n == 0 || (p.sqlErrors == "" && p.sqlDeadErrors == "") {
		return nil
	}
	var eg errorGroups
	for _, q := range []struct{ what, sql string }{{"inbox error query", p.sqlErrors}, {"inbox dead-letter error query", p.sqlDeadErrors}} {
		if q.sql == "" {
			continue
		}
		if err := eg.read(ctx, tx, q.what, q.sql); err != nil {
			return err
		}
	}
	report.addList(eg.list(&c.tableBase, c.cfg.Table, c.cfg.Status, vocab.KindInboxErrorGroups))
	return nil
}

// lastKey returns the last value of a tuple key.
func lastKey(k string) string {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == '\xff' {
			return k[i+1:]
		}
	}
	return k
}

// outboxList is the outbox's list query: the oldest pending events
// (unpublished, not failed; by id without a creation time).
func (c *Outbox) outboxList(s outboxShape) listQuery {
	order := s.id
	if s.created.present() {
		order = s.created.value()
	}
	return listQuery{vocab.KindOutboxPending, fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s, %[4]s, %[5]s
FROM %[6]s%[7]s
ORDER BY %[8]s LIMIT $1`, s.id, s.agg, s.typ, s.status, s.created.listColumns(), pgschema.QuoteTable(s.table),
		where(s.open, s.notFailed()), order), nil}
}

// readOutboxStatus reads the pending list and the error groups; the total
// is the gauges'.
func (c *Outbox) readOutboxStatus(ctx context.Context, tx pgx.Tx, p *outboxPlan, groups byTuple[outboxGroup], report *statusReport) error {
	if report.sink == nil {
		return nil
	}
	var total float64
	for _, g := range groups {
		total += g.pending.count
	}
	var id, aggType, evType, st string
	n := report.items(c.cfg.Status)
	items, err := p.list.read(ctx, tx, "outbox pending list query", n, []any{&id, &aggType, &evType, &st}, func() collectors.Item {
		return collectors.Item{EventID: id, AggregateType: aggType, EventType: evType, Status: st}
	})
	if err != nil {
		return err
	}
	report.add(&c.tableBase, c.cfg.Table, c.cfg.Status, p.list.kind, total, items)
	if n == 0 || p.sqlErrors == "" {
		return nil
	}
	var eg errorGroups
	if err := eg.read(ctx, tx, "outbox error query", p.sqlErrors); err != nil {
		return err
	}
	report.addList(eg.list(&c.tableBase, c.cfg.Table, c.cfg.Status, vocab.KindOutboxErrorGroups))
	return nil
}

// joinItem is one record of a join as the page shows it: the task's side
// from the engine's view, the table's side from the row. A join's list
// shows items only when neither the table nor the engine hides its
// identifiers (joinHidden).
func joinItem(engine string, t correlate.Task, row collectors.Item) collectors.Item {
	row.Engine, row.Tenant, row.Topic, row.ExternalTaskID, row.ProcessInstanceID = engine, t.Tenant, t.Topic, t.ID, t.ProcessInstanceID
	row.BusinessKey, row.ActivityID, row.WorkerID, row.TaskState = t.BusinessKey, t.ActivityID, t.WorkerID, string(t.State)
	return row
}

// joinHidden says a join's list keeps no item: the table or the engine
// switched its identifiers off.
func joinHidden(table config.SourceStatus, view *correlate.View) bool {
	return !table.ShowIdentifiers() || view.HideIdentifiers
}
