package tables

import (
	"fmt"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// inboxShape is what the inbox collector reads from its table.
type inboxShape struct {
	table, preset string
	columns       []pgschema.Column
	// id, source and typ are text expressions (never NULL); status is the
	// stored status as text, which statuses maps onto the canonical ones.
	id, source, typ, status string
	statuses                resolvedStatuses
	// statusCol is the mapped status column (nil for a preset, whose
	// status expression yields canonical statuses).
	statusCol *statusColumn
	// openSelection: the unfinished rows; noOpen: no unfinished row is
	// ever visible (openRows says why).
	openSelection
	noOpen              bool
	received, processed timeExpr
	attempts, errorText string
	processedIndex      string
	libraryIndexes      map[string]string
	dead                *deadLetterShape
}

// deadLetterShape is the dead-letter table beside a library's inbox.
type deadLetterShape struct {
	table                      string
	columns                    []pgschema.Column
	id, source, typ, errorText string
	since                      timeExpr
	where, rows                string
}

// series says which of the inbox's series the shape supports.
func (s inboxShape) series() map[string]bool {
	return map[string]bool{
		presets.InboxMessages:     !s.noOpen,
		presets.InboxOldestAge:    !s.noOpen && s.received.present(),
		presets.InboxProcessed:    s.processed.present(),
		presets.InboxRetrying:     !s.noOpen && s.attempts != "",
		presets.InboxFailed:       s.dead != nil,
		presets.InboxOldestFailed: s.dead != nil && s.dead.since.present(),
	}
}

// unknownOutcome selects the rows in UNKNOWN_OUTCOME ("" when the shape
// has no such state).
func (s inboxShape) unknownOutcome() string {
	if s.statusCol == nil {
		return ""
	}
	return s.statusCol.in(s.statuses.values(vocab.StatusUnknownOutcome))
}

// configInboxShape is the shape of a table mapped by the config's columns
// (cols nil: the default shape, a text status column).
func configInboxShape(t config.InboxTable, key string, cols map[string]pgschema.ColumnType) (inboxShape, error) {
	c := t.Columns
	q := pgschema.QuoteIdent
	base := pgschema.BaseName(t.Table)
	s := inboxShape{
		table: t.Table,
		id:    q(c.MessageID) + "::text", source: textOr(q(c.SourceSystem)), typ: textOr(q(c.MessageType)), status: textOr(q(c.Status)),
		received: timeExpr{c.ReceivedAt, presets.Timestamp}, processed: timeExpr{c.ProcessedAt, presets.Timestamp},
		openSelection:  openSelection{openIndex: base + "_open_idx", openIndexColumns: []string{c.SourceSystem, c.MessageType, c.Status, c.ReceivedAt}},
		processedIndex: base + "_processed_at_idx",
	}
	col := func(k, name string) pgschema.Column { return pgschema.Column{Key: key + ".columns." + k, Name: name} }
	s.columns = []pgschema.Column{col("source_system", c.SourceSystem), col("message_id", c.MessageID), col("message_type", c.MessageType),
		col("status", c.Status), col("received_at", c.ReceivedAt), col("processed_at", c.ProcessedAt)}
	status, err := statusColumnIn(t.Table, key, c.Status, cols)
	if err != nil {
		return s, err
	}
	s.statusCol = &status
	s.statuses = resolveStatuses(key+".statuses", t.Statuses, status)
	s.open = status.notIn(s.statuses.values(vocab.InboxTerminalStatuses()...))
	s.columns, s.attempts, s.errorText, err = attemptsAndError(t.Table, key, c.Attempts, c.Error, cols, s.columns)
	return s, err
}

// presetInboxShape is the shape of a library's table by its preset.
func presetInboxShape(t config.InboxTable, key string) (inboxShape, error) {
	p, ok := presets.InboxPreset(t.Preset)
	if !ok {
		return inboxShape{}, fmt.Errorf("%s.preset: unknown inbox preset %q", key, t.Preset)
	}
	base := pgschema.BaseName(t.Table)
	s := inboxShape{
		table: t.Table, preset: p.Preset, columns: presetColumns(key, p.Columns),
		id: textOr(p.MessageID), source: textOr(p.SourceSystem), typ: textOr(p.MessageType), status: textOr(p.Status),
		openSelection: presetOpenSelection(base, p.Open, p.OpenRows, p.OpenIndex, p.Columns), noOpen: p.NoOpenRows,
		received: timeOf(p.Received), processed: timeOf(p.Processed),
		attempts: p.Attempts, errorText: p.Error, libraryIndexes: p.LibraryIndexes,
	}
	// The preset's status expression yields the canonical statuses.
	identity := config.StatusMap{}
	for _, st := range vocab.InboxStatuses() {
		identity[st] = []string{st}
	}
	s.statuses = resolvedStatuses{m: identity}
	if s.processed.present() {
		s.processedIndex = base + "_" + s.processed.column + "_idx"
	}
	if d := p.DeadLetters; d != nil {
		dt := presets.SchemaOf(t.Table) + d.Table
		s.dead = &deadLetterShape{table: dt, columns: presetColumns(key, d.Columns),
			id: textOr(d.MessageID), source: textOr(d.SourceSystem), typ: textOr(d.MessageType), errorText: d.Error,
			since: timeOf(d.Since), where: d.Where, rows: d.Rows}
	}
	return s, nil
}

// inboxShapeOf resolves the table's shape.
func inboxShapeOf(t config.InboxTable, key string, cols map[string]pgschema.ColumnType) (inboxShape, error) {
	if t.Preset != "" {
		return presetInboxShape(t, key)
	}
	return configInboxShape(t, key, cols)
}
