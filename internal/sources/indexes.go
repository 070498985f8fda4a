package sources

import (
	"fmt"
	"sort"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/collectors/tables"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// DefaultRequirements returns the requirements of every table kind's
// collector and join, with the default table and column names, including
// the optional duplicate_count extension. deploy/sql/003_exporter_indexes.sql
// and the index table of docs/database.md are generated from it.
func DefaultRequirements() []pgschema.Requirements {
	cfg, err := config.Parse([]byte("camunda: [{name: main, url: 'http://localhost:8080/engine-rest'}]\ndatabases: [{name: reference, dsn: 'postgres://localhost/reference'}]\n" +
		"deliveries: [{name: reference, from: {database: reference}, to: {database: reference}}]"))
	if err != nil {
		panic(err)
	}
	o := kindOptions{prefix: "tables.", labelValueLimit: 1, folds: labellimit.NewStats()}
	var out []pgschema.Requirements
	for _, k := range tableKinds() {
		for _, c := range []TableCollector{k.collector(cfg.Databases[0].Tables, o), k.horizon(cfg.Databases[0].Tables, o), k.join(cfg.Databases[0].Tables, o)} {
			if c != nil {
				out = append(out, c.Requirements())
			}
		}
	}
	// A delivery's window and lookup (deliveries[]), from the reference
	// outbox to the reference inbox.
	d := cfg.Deliveries[0]
	for _, r := range tables.NewDelivery(tables.DeliveryOptions{Delivery: d, Key: "deliveries[0]",
		Outbox: *cfg.Databases[0].Tables.Outbox, Inbox: *cfg.Databases[0].Tables.Inbox,
		OutboxKey: "tables.outbox", InboxKey: "tables.inbox"}).Requirements() {
		r.Kind += " (deliveries[])"
		out = append(out, r)
	}
	return out
}

// PresetRequirements returns, per library preset (blocks/presets), the
// requirements of the tables its outbox and inbox presets read, every
// variant of a preset's schema included, in the order of the presets.
// deploy/sql/presets/<preset>.sql is generated from them. A preset without
// a default table (nservicebus) is rendered for PresetPlaceholderTable.
func PresetRequirements() (names []string, reqs map[string][]pgschema.Requirements) {
	reqs = map[string][]pgschema.Requirements{}
	add := func(name string, r ...pgschema.Requirements) {
		if _, ok := reqs[name]; !ok {
			names = append(names, name)
		}
		reqs[name] = append(reqs[name], r...)
	}
	o := kindOptions{prefix: "tables.", labelValueLimit: 1, folds: labellimit.NewStats()}
	for _, name := range presets.OutboxNames() {
		table := ""
		if presets.DefaultTable("outbox", name) == "" {
			table = ", table: " + PresetPlaceholderTable
		}
		cfg := mustParse(fmt.Sprintf("databases: [{name: reference, dsn: 'postgres://localhost/reference', tables: {outbox: {preset: %s%s}}}]", name, table))
		c := tables.NewOutbox(tables.OutboxOptions{Table: *cfg.Databases[0].Tables.Outbox, ConfigKey: o.prefix + "outbox",
			LabelValueLimit: o.labelValueLimit, Folds: o.folds})
		add(name, c.VariantRequirements()...)
	}
	for _, name := range presets.InboxNames() {
		cfg := mustParse(fmt.Sprintf("databases: [{name: reference, dsn: 'postgres://localhost/reference', tables: {inbox: {preset: %s}}}]", name))
		c := tables.NewInbox(tables.InboxOptions{Table: *cfg.Databases[0].Tables.Inbox, ConfigKey: o.prefix + "inbox",
			LabelValueLimit: o.labelValueLimit, Folds: o.folds})
		add(name, c.Requirements())
	}
	sort.Strings(names)
	return names, reqs
}

// PresetPlaceholderTable is the table name deploy/sql/presets uses for a
// preset whose library names its table after the application.
const PresetPlaceholderTable = "Endpoint_OutboxData"

func mustParse(doc string) *config.Config {
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		panic(err)
	}
	return cfg
}

// PresetIndexSQL renders the indexes a preset's queries need, with the
// reason for each, the library's own indexes that serve a query instead
// (as comments), and the queries that need none, and why.
func PresetIndexSQL(name string, reqs []pgschema.Requirements) string {
	var b strings.Builder
	fmt.Fprintf(&b, `-- Indexes the exporter needs on the tables of preset %s (docs/outbox-shapes.md).
-- Generated from the collectors' requirements (go generate ./internal/sources);
-- do not edit by hand. Each index keeps one collector query proportional to
-- the rows it reports on (open work, or the last late_commit_window of
-- activity). Where the library's own schema already creates an index that
-- serves a query, the statement is left commented out. CONCURRENTLY builds
-- without blocking writers; run each statement on its own, outside a
-- transaction block. 'workflow-exporter check' asks the planner which ones a
-- database lacks.
`, name)
	seen := map[string]bool{}
	var all []pgschema.Requirements
	for _, r := range reqs {
		all = append(all, r)
		all = append(all, r.Related...)
	}
	for _, r := range all {
		heading := fmt.Sprintf("\n-- %s table %s\n", r.Kind, r.Table)
		if r.Table == PresetPlaceholderTable {
			heading = fmt.Sprintf("\n-- %s table %s: the library names it after the endpoint; put yours in its place\n", r.Kind, r.Table)
		}
		var body strings.Builder
		for _, ix := range r.Indexes {
			var line string
			switch {
			case ix.NoneNeeded != "":
				line = fmt.Sprintf("-- the %s query needs no index: %s\n", orQuery(ix.Query), ix.NoneNeeded)
			case ix.LibraryIndex != "":
				line = fmt.Sprintf("-- %s: the library's own index %s serves this; if your table lacks it, run:\n-- %s\n", ix.Why, ix.LibraryIndex, ix.CreateStatement(r.Table))
			default:
				line = fmt.Sprintf("-- %s\n%s\n", ix.Why, ix.CreateStatement(r.Table))
			}
			if seen[r.Table+line] {
				continue
			}
			seen[r.Table+line] = true
			body.WriteString(line)
		}
		if body.Len() > 0 {
			b.WriteString(heading + body.String())
		}
	}
	return b.String()
}

func orQuery(q string) string {
	if q == "" {
		return "gauge"
	}
	return q
}

// IndexSQL renders the CREATE INDEX statements of the requirements with the
// reason for each.
func IndexSQL(reqs []pgschema.Requirements) string {
	var b strings.Builder
	b.WriteString(`-- Indexes the exporter needs. Generated from the collectors' requirements
-- (make generate); do not edit by hand. Each index keeps one
-- collector query proportional to the rows it reports on (open work, or the
-- last late_commit_window of activity) instead of the table's whole history.
-- CONCURRENTLY builds without blocking writers; run each statement on its
-- own, outside a transaction block. The exporter never creates them itself:
-- it only reads. 'workflow-exporter check' lists the ones a database lacks.
`)
	// An index two collectors share is created once; the second names the
	// first.
	written := map[string]bool{}
	for _, r := range reqs {
		fmt.Fprintf(&b, "\n-- %s table %s\n", r.Kind, r.Table)
		for _, ix := range r.Indexes {
			if ix.NoneNeeded != "" {
				fmt.Fprintf(&b, "-- the %s query needs no index: %s\n", orQuery(ix.Query), ix.NoneNeeded)
				continue
			}
			if ix.Requires != "" {
				fmt.Fprintf(&b, "-- %s: needs the optional column %s; created by 002_duplicate_count_extension.sql\n", ix.Why, ix.Requires)
				continue
			}
			if ix.ReferencePrimaryKey {
				fmt.Fprintf(&b, "-- %s: the reference schema's primary key serves this; with another key, run:\n-- %s\n", ix.Why, ix.CreateStatement(r.Table))
				continue
			}
			stmt := ix.CreateStatement(r.Table)
			if written[stmt] {
				fmt.Fprintf(&b, "-- %s: the index %s above serves this\n", ix.Why, ix.Name)
				continue
			}
			written[stmt] = true
			fmt.Fprintf(&b, "-- %s\n%s\n", ix.Why, stmt)
		}
	}
	return b.String()
}
