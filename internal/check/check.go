// Package check inspects every configured source the way the collectors
// will use it. For each Camunda engine: whether it answers, its version and
// flavor, whether the credentials are accepted, and its history level with
// what it means for each metric; in engine-database mode
// also the engine's tables, the time zone and the history index. For each
// database, per table: whether it exists, which mapped columns are missing,
// which recommended indexes are missing (with the CREATE INDEX statement),
// and whether the exporter's role could write (it should not).
//
// It is handed the sources built as start-up builds them (that wiring is
// internal/sources/check.go), and knows of the collectors only what they declare
// they need (pgschema.Requirements).
//
// Index checks ask the planner, not the catalog text: for each collector
// query, EXPLAIN (with sequential scans disabled) must find an index that
// restricts the rows read, either by an index condition or by being partial.
// So an index with another name or column order that serves the query counts,
// and one that exists but cannot serve it does not.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Report counts what was found.
type Report struct {
	Errors   int // unreachable sources, refused credentials, missing tables or columns, a wrong time zone
	Warnings int // missing indexes, writable role
}

// EngineTarget is one configured Camunda engine, built as start-up builds it.
type EngineTarget struct {
	Config config.Camunda
	// Key is the config key, e.g. "camunda[0]".
	Key string
	// Client is the engine's REST client; ClientErr says why there is none.
	Client    *camunda.Client
	ClientErr error
	// Database is the engine's own database in engine-database mode, nil
	// in REST mode.
	Database *EngineDBTarget
	// HistoryLevel finds the engine's history level as the first
	// collection does; nil: not checked.
	HistoryLevel func(context.Context) capability.HistoryLevelReport
	// Warnings are about how the engine is reached (plain HTTP, a DSN
	// that does not verify the server), as start-up logs them.
	Warnings []string
}

// EngineDBTarget is an engine's database as engine-database mode opens it.
type EngineDBTarget struct {
	// DB is the opened database; Err says why there is none.
	DB  *pgsource.DB
	Err error
	// Verify runs the checks of the mode's first collection: tables,
	// columns, privileges, and the time zone against the engine.
	Verify func(context.Context) error
	// Tables are the engine tables the mode reads.
	Tables []pgschema.Requirements
}

// DatabaseTarget is one configured database with what its collectors (the table
// collectors and the Camunda joins) need from its tables.
type DatabaseTarget struct {
	Config config.Database
	// DB is the opened database; Err says why there is none.
	DB     *pgsource.DB
	Err    error
	Tables []pgschema.Requirements
	// Warnings are about how the database is reached (a DSN that does not
	// verify the server), as start-up logs them.
	Warnings []string
}

// Run checks every engine and database and writes a human-readable report.
func Run(ctx context.Context, engines []EngineTarget, databases []DatabaseTarget, w io.Writer) Report {
	var rep Report
	for _, e := range engines {
		checkEngine(ctx, e, w, &rep)
	}
	if len(databases) == 0 {
		fmt.Fprintln(w, "no databases configured")
	}
	for _, d := range databases {
		warn(w, &rep, "database "+d.Config.Name, d.Warnings)
		if d.Err != nil {
			fmt.Fprintf(w, "database %s: ERROR %v\n", d.Config.Name, d.Err)
			rep.Errors++
			continue
		}
		checkDatabase(ctx, d, w, &rep)
	}
	fmt.Fprintf(w, "\n%d error(s), %d warning(s)\n", rep.Errors, rep.Warnings)
	return rep
}

// warn prints each warning about how a source is reached, as its own line
// before the source's checks (which may fail for the same source).
func warn(w io.Writer, rep *Report, source string, warnings []string) {
	for _, text := range warnings {
		rep.Warnings++
		fmt.Fprintf(w, "%s: WARNING %s\n", source, text)
	}
}

func checkEngine(ctx context.Context, e EngineTarget, w io.Writer, rep *Report) {
	cfg := e.Config
	warn(w, rep, "camunda "+cfg.Name, e.Warnings)
	if e.ClientErr != nil {
		fmt.Fprintf(w, "camunda %s: ERROR %s: %v\n", cfg.Name, e.Key, e.ClientErr)
		rep.Errors++
		return
	}
	client := e.Client
	ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.Timeout))
	defer cancel()
	info, err := client.EngineInfo(ctx)
	if err != nil {
		fmt.Fprintf(w, "camunda %s: ERROR %v\n", cfg.Name, err)
		rep.Errors++
		return
	}
	auth := "no credentials configured"
	if cfg.Username != "" {
		auth = fmt.Sprintf("credentials of %q accepted", cfg.Username)
	}
	fmt.Fprintf(w, "camunda %s: ok, %s %s at %s (%s)\n", cfg.Name, info.Flavor, info.Version, client.Root(), auth)
	// With authorization on, queries are filtered silently: a user that
	// sees no task might only lack READ permissions.
	if n, err := client.CountExternalTasks(ctx, camunda.ExternalTaskQuery{}); err != nil {
		fmt.Fprintf(w, "    ERROR counting external tasks: %v\n", err)
		rep.Errors++
	} else {
		fmt.Fprintf(w, "    open external tasks visible to this user: %d (with authorization enabled, the user needs READ on process instances and definitions or this undercounts)\n", n)
	}
	level := ""
	if e.HistoryLevel != nil {
		lv := e.HistoryLevel(ctx)
		checkHistoryLevel(lv, w, rep)
		level = lv.Level
	}
	if e.Database == nil && cfg.Username != "" {
		checkPermissions(ctx, e, w, rep)
		checkTenants(ctx, e, w, rep)
	}
	if e.Database == nil {
		fmt.Fprintf(w, "    mode: REST API; %s\n", restHistoryReading(level, e.Key))
		return
	}
	checkEngineDatabase(ctx, cfg, *e.Database, w, rep)
}

// restHistoryReading says what the REST reader reads of the history at
// level, and what keeps that reading cheap: the external task log at full
// (and when check has no level to go by), the activity instance history at
// activity and audit, nothing at none or while the level is unknown.
func restHistoryReading(level, key string) string {
	switch level {
	case "none":
		return "no history is read at level none: completions, BPMN errors and durations are absent, failures a lower bound observed at runtime"
	case "unknown":
		return fmt.Sprintf("no history is read while the history level is unknown: completions, BPMN errors and durations are absent (set %s.history_level)", key)
	case "activity", "audit":
		return "completions, BPMN errors and durations come from the activity instance history by end time, which the engine's own index on act_hi_actinst (end_time_) keeps cheap; failures are a lower bound observed at runtime"
	}
	return fmt.Sprintf("failures and completions come from the history log sorted by timestamp, which stays cheap only with an index on act_hi_ext_task_log (timestamp_) in the engine's database (deploy/sql/camunda/001_history_timestamp_index.sql; configure %s.database to have it checked)", key)
}

// checkHistoryLevel names the engine's history level, where it came from
// and what it means for each metric that depends on it; a level below full
// (or unknown) is a warning, with what the detection cannot tell apart.
func checkHistoryLevel(lv capability.HistoryLevelReport, w io.Writer, rep *Report) {
	from := ""
	if lv.From != "" {
		from = " (from " + lv.From + ")"
	}
	fmt.Fprintf(w, "    history level: %s%s\n", lv.Level, from)
	for _, g := range capability.SupportAt(lv.Level) {
		fmt.Fprintf(w, "      %s: %s\n", g.Support, strings.Join(g.Metrics, ", "))
	}
	if lv.Detected != "" && lv.Detected != lv.Level {
		rep.Warnings++
		fmt.Fprintf(w, "    WARNING history_level is %s, but the engine is at %s: the series above are wrong or missing; remove the setting or correct it\n", lv.Level, lv.Detected)
	}
	if lv.Level == "full" {
		return
	}
	rep.Warnings++
	why := ""
	if lv.Why != "" {
		why = ": " + lv.Why
	}
	fmt.Fprintf(w, "    WARNING history level %s is below full%s. The engine writes no external task log and no job log: see the lines above and docs/camunda-states.md (History levels); CamundaExternalTaskWorkerSilent cannot fire\n", lv.Level, why)
}

// checkEngineDatabase checks camunda[].database as the first collection
// does (tables, columns, privileges, time zone), then the index the
// history reading relies on, and whether the role could write.
func checkEngineDatabase(ctx context.Context, cfg config.Camunda, ed EngineDBTarget, w io.Writer, rep *Report) {
	if ed.Err != nil {
		fmt.Fprintf(w, "    engine database: ERROR %v\n", ed.Err)
		rep.Errors++
		return
	}
	version, user, err := whoAmI(ctx, ed.DB)
	if err != nil {
		fmt.Fprintf(w, "    engine database: ERROR cannot connect: %v\n", err)
		rep.Errors++
		return
	}
	fmt.Fprintf(w, "    mode: engine database, connected (PostgreSQL %s) as role %q\n", version, user)
	if err := ed.Verify(ctx); err != nil {
		fmt.Fprintf(w, "    ERROR %v\n", err)
		rep.Errors++
	} else {
		fmt.Fprintf(w, "    tables, columns and time_zone %q: ok\n", cfg.Database.TimeZone)
	}
	for _, req := range ed.Tables {
		checkTable(ctx, ed.DB, req, user, w, rep)
	}
}

func checkDatabase(ctx context.Context, d DatabaseTarget, w io.Writer, rep *Report) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(d.Config.Timeout))
	defer cancel()
	version, user, err := whoAmI(ctx, d.DB)
	if err != nil {
		fmt.Fprintf(w, "database %s: ERROR cannot connect: %v\n", d.Config.Name, err)
		rep.Errors++
		return
	}
	fmt.Fprintf(w, "database %s: connected (PostgreSQL %s) as role %q\n", d.Config.Name, version, user)
	// Several collectors may read one table (the idempotency collector
	// and its retention horizon): a table that is not there is one error.
	missing := map[string]bool{}
	for _, req := range d.Tables {
		if missing[req.Table] {
			continue
		}
		if !checkTable(ctx, d.DB, req, user, w, rep) {
			missing[req.Table] = true
		}
	}
}

// whoAmI connects and names the server version and the exporter's role.
func whoAmI(ctx context.Context, db *pgsource.DB) (version, user string, err error) {
	err = db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT current_setting('server_version'), current_user").Scan(&version, &user)
	})
	return version, user, err
}

// checkTable checks one table and its probes and says whether the table
// is there.
func checkTable(ctx context.Context, db *pgsource.DB, req pgschema.Requirements, user string, w io.Writer, rep *Report) bool {
	found := false
	err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if err := checkTableIn(ctx, tx, req, user, w, rep); err != nil {
			return err
		}
		var err error
		_, found, err = pgschema.TableColumns(ctx, tx, req.Table)
		return err
	})
	if err != nil {
		fmt.Fprintf(w, "    ERROR %v\n", err)
		rep.Errors++
	}
	// A probe of a table that is not there would only repeat that.
	for _, p := range req.Probes {
		if found {
			checkProbe(ctx, db, p, w, rep)
		}
	}
	return found
}

// checkProbe runs a collector's probe (pgschema.Probe) in a read-only
// transaction of its own, so a failing one leaves the others their own.
func checkProbe(ctx context.Context, db *pgsource.DB, p pgschema.Probe, w io.Writer, rep *Report) {
	var pr pgschema.ProbeReport
	err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		pr, err = p.Run(ctx, tx)
		return err
	})
	if err != nil {
		fmt.Fprintf(w, "    ERROR %s: %v\n", p.Name, err)
		rep.Errors++
		return
	}
	for _, n := range pr.Notes {
		fmt.Fprintf(w, "    %s: %s\n", p.Name, n)
	}
	for _, warn := range pr.Warnings {
		fmt.Fprintf(w, "    WARNING %s: %s\n", p.Name, warn)
		rep.Warnings++
	}
}

// tableHeading is a table's line of the report: its kind, name and preset.
func tableHeading(req pgschema.Requirements) string {
	if req.Preset != "" {
		return fmt.Sprintf("  %s: table %s (preset %s)\n", req.Kind, req.Table, req.Preset)
	}
	return fmt.Sprintf("  %s: table %s\n", req.Kind, req.Table)
}

// checkTableIn checks one table in tx: its columns (for the shape its
// column types resolve to), what a status mapping cannot match, the
// indexes its queries need, the role's privileges, then the related
// tables the same collector reads.
func checkTableIn(ctx context.Context, tx pgx.Tx, req pgschema.Requirements, user string, w io.Writer, rep *Report) error {
	cols, ok, err := pgschema.TableColumns(ctx, tx, req.Table)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprint(w, tableHeading(req))
		fmt.Fprintf(w, "    ERROR table does not exist or role %q cannot see it\n", user)
		rep.Errors++
		return nil
	}
	var notes, warnings []string
	if req.Resolve != nil {
		res, err := req.Resolve(ctx, tx)
		var se *pgschema.Error
		switch {
		case errors.As(err, &se):
			fmt.Fprint(w, tableHeading(req))
			fmt.Fprintf(w, "    ERROR %v\n", se)
			rep.Errors++
			return nil
		case err != nil:
			return err
		}
		req, notes, warnings = res.Requirements, res.Notes, res.Warnings
	}
	fmt.Fprint(w, tableHeading(req))
	present := map[string]bool{}
	var missing []string
	for _, c := range req.Columns {
		if _, ok := cols[c.Name]; ok {
			present[c.Name] = true
			continue
		}
		if c.Optional {
			fmt.Fprintf(w, "    note: optional column %s is absent (%s); the feature it enables is off\n", c.Name, c.Key)
			continue
		}
		missing = append(missing, fmt.Sprintf("%s (%s)", c.Name, c.Key))
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "    ERROR missing columns: %s\n", strings.Join(missing, ", "))
		rep.Errors++
		return nil
	}
	fmt.Fprintf(w, "    columns: ok (%d mapped)\n", len(present))
	for _, n := range notes {
		fmt.Fprintf(w, "    note: %s\n", n)
	}
	for _, wn := range warnings {
		fmt.Fprintf(w, "    WARNING %s\n", wn)
		rep.Warnings++
	}

	queries := map[string]pgschema.Query{}
	for _, q := range req.Queries {
		queries[q.Name] = q
	}
	for _, ix := range req.Indexes {
		if ix.NoneNeeded != "" {
			what := "its"
			if ix.Query != "" {
				what = "the " + ix.Query
			}
			fmt.Fprintf(w, "    index for %s query: none needed (%s)\n", what, ix.NoneNeeded)
			continue
		}
		if ix.Requires != "" && !present[ix.Requires] {
			continue
		}
		q, ok := queries[ix.Query]
		if !ok {
			continue
		}
		serving := pgschema.ServingIndex
		if q.Ordered {
			serving = pgschema.ServingOrderedIndex
		}
		used, err := serving(ctx, tx, req.Table, q.SQL, q.Args...)
		if err != nil {
			return fmt.Errorf("explain %s query: %w", q.Name, err)
		}
		if used != "" {
			fmt.Fprintf(w, "    index for %s query: ok (served by %s)\n", q.Name, used)
			continue
		}
		rep.Warnings++
		lib := ""
		if ix.LibraryIndex != "" {
			lib = fmt.Sprintf(" (the library's own %s would serve it: the table lacks it)", ix.LibraryIndex)
		}
		fmt.Fprintf(w, "    WARNING index for %s query missing%s: %s\n      %s\n", q.Name, lib, ix.Why, ix.CreateStatement(req.Table))
	}

	var super, ins, upd, del, trunc bool
	if err := tx.QueryRow(ctx, `SELECT r.rolsuper,
			has_table_privilege(current_user, $1::regclass, 'INSERT'), has_table_privilege(current_user, $1::regclass, 'UPDATE'),
			has_table_privilege(current_user, $1::regclass, 'DELETE'), has_table_privilege(current_user, $1::regclass, 'TRUNCATE')
		FROM pg_roles r WHERE r.rolname = current_user`, pgschema.QuoteTable(req.Table)).Scan(&super, &ins, &upd, &del, &trunc); err != nil {
		return fmt.Errorf("privilege check: %w", err)
	}
	var can []string
	for name, ok := range map[string]bool{"INSERT": ins, "UPDATE": upd, "DELETE": del, "TRUNCATE": trunc} {
		if ok {
			can = append(can, name)
		}
	}
	switch {
	case super:
		rep.Warnings++
		fmt.Fprintf(w, "    WARNING role %q is a superuser; the exporter needs only SELECT (see deploy/sql/004_exporter_role.sql)\n", user)
	case len(can) > 0:
		rep.Warnings++
		sort.Strings(can)
		fmt.Fprintf(w, "    WARNING role %q can %s this table; grant SELECT only (the exporter reads in read-only transactions anyway)\n", user, strings.Join(can, ", "))
	default:
		fmt.Fprintf(w, "    privileges: read-only (ok)\n")
	}
	for _, r := range req.Related {
		if err := checkTableIn(ctx, tx, r, user, w, rep); err != nil {
			return err
		}
	}
	return nil
}

// checkPermissions names each grant a collector lacks: with the engine's
// authorization on, the REST API leaves out what the user may not read, and
// the collector would report too little (the collectors fail on it too).
func checkPermissions(ctx context.Context, e EngineTarget, w io.Writer, rep *Report) {
	missing, known, err := capability.MissingPermissions(ctx, e.Client, e.Config, nil)
	switch {
	case err != nil:
		fmt.Fprintf(w, "    ERROR checking the user's permissions: %v\n", err)
		rep.Errors++
		return
	case !known:
		fmt.Fprintf(w, "    WARNING the engine did not answer GET /authorization/check: with its authorization on, a missing grant reads as zeros\n")
		rep.Warnings++
		return
	case len(missing) == 0:
		fmt.Fprintf(w, "    permissions of %q: every grant the collectors need is held (or the engine's authorization is off)\n", e.Config.Username)
		return
	}
	for _, c := range slices.Sorted(maps.Keys(missing)) {
		fmt.Fprintf(w, "    ERROR collector %s: the user %q lacks %s, on every process definition (docs/production.md#permissions)\n", c, e.Config.Username, strings.Join(missing[c], "; "))
		rep.Errors++
	}
}

// checkTenants says which tenants the user sees (capability.TenantMembership):
// the engine hides the others, and their data, from it. Notes, not
// warnings: most engines have no tenants, and the exporter cannot see the
// tenants the user misses.
func checkTenants(ctx context.Context, e EngineTarget, w io.Writer, rep *Report) {
	tm, err := capability.TenantMembershipOf(ctx, e.Client, e.Config)
	user := e.Config.Username
	switch {
	case err != nil:
		fmt.Fprintf(w, "    ERROR listing the engine's tenants (GET /tenant): %v\n", err)
		rep.Errors++
	case !tm.Known:
		fmt.Fprintf(w, "    tenants: not checked (listing them needs READ on TENANT); with tenants and the engine's tenant check on, the user sees only the data of the tenants it is a member of\n")
	case len(tm.Listed) > len(tm.Member):
		fmt.Fprintf(w, "    tenants: the engine lists tenants %s to %q, a member of %s: its tenant check is off, the user sees every tenant's data\n",
			strings.Join(tm.Listed, ", "), user, orNone(tm.Member))
	default:
		fmt.Fprintf(w, "    tenants: %q is a member of %s; with the engine's tenant check on (the default) it sees only their data and data without a tenant, and the engine hides the other tenants from this list too: if the engine serves other tenants, make the user a member of each, or a Camunda administrator (docs/production.md#permissions)\n",
			user, orNone(tm.Member))
	}
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "no tenant"
	}
	return "tenant " + strings.Join(ids, ", ")
}
