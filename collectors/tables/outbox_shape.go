package tables

import (
	"fmt"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// outboxShape is what the outbox collector reads from its table.
type outboxShape struct {
	table           string
	preset, variant string
	columns         []pgschema.Column
	// id, agg, typ and status are text expressions (never NULL).
	id, agg, typ, status string
	// openSelection: the unpublished rows; failed, among them, those given
	// up on ("" none).
	openSelection
	failed    string
	created   timeExpr
	published timeExpr
	rowsStay  bool
	// attempts is an integer expression, errorText a text one; "" none.
	attempts, errorText string
	// index names and keys: the names of the time indexes, and the
	// library's own serving indexes.
	createdIndex, publishedIndex string
	// publishedIndexColumns are the publish-time index's columns: the
	// publish time, and for a mapped table the event id after it, so that
	// the one index also serves a delivery's keyset pages (deliveries[]),
	// which order the events of one publish time by id.
	publishedIndexColumns []string
	libraryIndexes        map[string]string
	notes, warnings       []string
}

// failedFlag is the failed predicate as a boolean never NULL.
func (s outboxShape) failedFlag() string {
	if s.failed == "" {
		return "false"
	}
	return "COALESCE(" + s.failed + ", false)"
}

// notFailed selects the rows not failed, NULL counted as not failed.
func (s outboxShape) notFailed() string {
	if s.failed == "" {
		return ""
	}
	return "(" + s.failed + ") IS NOT TRUE"
}

// series says which of the outbox's series the shape supports.
func (s outboxShape) series() map[string]bool {
	return map[string]bool{
		presets.OutboxPending:      true,
		presets.OutboxOldestAge:    s.created.present(),
		presets.OutboxFailed:       s.failed != "",
		presets.OutboxOldestFailed: s.failed != "" && s.created.present(),
		presets.OutboxRetrying:     s.attempts != "",
		presets.OutboxCreated:      s.created.present() && s.rowsStay,
		presets.OutboxPublished:    s.published.present(),
		presets.OutboxDelay:        s.created.present() && s.published.present(),
	}
}

// configOutboxShape is the shape of a table mapped by the config's columns.
// cols are the table's column types; nil gives the default shape (a text
// status column, the optional columns absent unless set), from which
// deploy/sql is generated.
func configOutboxShape(t config.OutboxTable, key string, cols map[string]pgschema.ColumnType) (outboxShape, error) {
	c := t.Columns
	q := pgschema.QuoteIdent
	base := pgschema.BaseName(t.Table)
	s := outboxShape{
		table: t.Table,
		id:    textOr(q(c.EventID)), agg: textOr(q(c.AggregateType)), typ: textOr(q(c.EventType)), status: textOr(q(c.Status)),
		openSelection: openSelection{open: q(c.PublishedAt) + " IS NULL",
			openIndex: base + "_unpublished_idx", openIndexColumns: []string{c.AggregateType, c.EventType, c.CreatedAt}},
		created: timeExpr{c.CreatedAt, presets.Timestamp}, published: timeExpr{c.PublishedAt, presets.Timestamp},
		rowsStay:     true,
		createdIndex: base + "_created_at_idx", publishedIndex: base + "_published_at_idx",
		publishedIndexColumns: []string{c.PublishedAt, c.EventID},
	}
	col := func(k, name string) pgschema.Column { return pgschema.Column{Key: key + ".columns." + k, Name: name} }
	s.columns = []pgschema.Column{col("event_id", c.EventID), col("aggregate_type", c.AggregateType), col("event_type", c.EventType),
		col("status", c.Status), col("created_at", c.CreatedAt), col("published_at", c.PublishedAt)}
	status, err := statusColumnIn(t.Table, key, c.Status, cols)
	if err != nil {
		return s, err
	}
	held, warnings := resolveList(key+".failed_statuses", t.FailedStatuses, status)
	s.warnings = warnings
	// No failed statuses (failed_statuses: []), or none the type can
	// hold: nothing is ever failed, and events_failed says 0, as before.
	s.failed = status.in(held)
	s.columns, s.attempts, s.errorText, err = attemptsAndError(t.Table, key, c.Attempts, c.Error, cols, s.columns)
	return s, err
}

// presetOutboxShape is the shape of a library's table by its preset: the
// variant whose columns the table has (cols nil: the first).
func presetOutboxShape(t config.OutboxTable, key string, cols map[string]pgschema.ColumnType) (outboxShape, error) {
	p, ok := presets.OutboxVariant(t.Preset, func(c string) bool {
		_, ok := cols[c]
		return cols == nil || ok
	})
	if !ok {
		return outboxShape{}, fmt.Errorf("%s.preset: unknown outbox preset %q", key, t.Preset)
	}
	base := pgschema.BaseName(t.Table)
	s := outboxShape{
		table: t.Table, preset: p.Preset, variant: p.Variant, columns: presetColumns(key, p.Columns),
		id: textOr(p.ID), agg: textOr(p.AggregateType), typ: textOr(p.EventType), status: textOr(p.Status),
		openSelection: presetOpenSelection(base, p.Open, p.OpenRows, p.OpenIndex, p.Columns), failed: p.Failed,
		created: timeOf(p.Created), published: timeOf(p.Published), rowsStay: p.RowsStay,
		attempts: p.Attempts, errorText: p.Error, libraryIndexes: p.LibraryIndexes,
	}
	if s.created.present() {
		s.createdIndex = base + "_" + s.created.column + "_idx"
	}
	if s.published.present() {
		s.publishedIndex = base + "_" + s.published.column + "_idx"
	}
	return s, nil
}

// outboxShapeOf resolves the table's shape.
func outboxShapeOf(t config.OutboxTable, key string, cols map[string]pgschema.ColumnType) (outboxShape, error) {
	if t.Preset != "" {
		return presetOutboxShape(t, key, cols)
	}
	return configOutboxShape(t, key, cols)
}
