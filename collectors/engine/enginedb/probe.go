package enginedb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
)

// An engine read without its REST API (camunda[].database without
// camunda[].url: an embedded engine, or one whose REST API the exporter may
// not reach) is probed in its database: the probe is a read-only
// transaction that reads the database clock (the engine's clock of the
// collection, as the readings use it anyway), the newest schema version in
// ACT_GE_SCHEMA_LOG and the installation id's property in ACT_GE_PROPERTY.
//
// What the tables can and cannot say of the engine (measured on Camunda
// 7.19 to 7.24, Operaton 1.0.3 and CIB seven 2.0.0 on PostgreSQL):
//
//   - the version: ACT_GE_SCHEMA_LOG holds one row per schema the database
//     was created or upgraded with; its newest version is Camunda's release
//     for Camunda 7 ("7.20.0"), but the Camunda schema a fork carries for
//     the forks (Operaton 1.0.3 writes 7.24.0, CIB seven 2.0.0 7.23.0),
//     which says which columns there are, not the fork's release;
//   - the flavor: Operaton names its installation id
//     operaton.installation.id, Camunda 7 and CIB seven both
//     camunda.installation.id, and their tables are otherwise the same
//     (CIB seven 2.0.0's equal Camunda 7.23's and 7.24's). So Operaton is
//     told apart; Camunda and CIB seven are not, and the flavor is the one
//     camunda[].flavor names, else "unknown";
//   - the time zone the engine writes its local times in: no table says it
//     (zoneInFuture).

// Probed is what the probe of an engine read without its REST API found.
type Probed struct {
	// Now is the database clock.
	Now time.Time
	// Version is the newest version in ACT_GE_SCHEMA_LOG ("unknown" when
	// the table cannot be read).
	Version string
	Flavor  camunda.Flavor
}

// Installation id properties in ACT_GE_PROPERTY, by the distribution that
// writes them.
const (
	operatonInstallation = "operaton.installation.id"
	camundaInstallation  = "camunda.installation.id"
)

// Probe reads the database clock and what the tables say of the engine.
// Only the clock must answer (the database is the engine, for this mode);
// a schema log or property the role may not read leaves the version or
// flavor unknown, with a warning the first time.
func (r *Reader) Probe(ctx context.Context) (Probed, error) {
	p := Probed{Version: "unknown", Flavor: camunda.FlavorUnknown}
	var versions, props []string
	var canLog, canProps bool
	err := r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if p.Now, err = pgsource.Now(ctx, tx); err != nil {
			return err
		}
		if canLog, err = r.readable(ctx, tx, capability.SchemaLogTable); err != nil {
			return err
		}
		if canLog {
			if versions, err = collectRows(ctx, tx, r, "reading "+capability.SchemaLogTable, pgx.RowTo[string],
				`SELECT coalesce(version_, '') FROM `+r.prefix+capability.SchemaLogTable); err != nil {
				return err
			}
		}
		if canProps, err = r.readable(ctx, tx, "act_ge_property"); err != nil {
			return err
		}
		if canProps {
			props, err = collectRows(ctx, tx, r, "reading act_ge_property", pgx.RowTo[string],
				`SELECT name_ FROM `+r.prefix+`act_ge_property WHERE name_ IN ($1, $2)`, operatonInstallation, camundaInstallation)
		}
		return err
	})
	if err != nil {
		return Probed{}, err
	}
	if v := newestVersion(versions); v != "" {
		p.Version = v
	}
	p.Flavor = flavorOf(props, r.flavor)
	if (!canLog || !canProps) && !r.probeWarned {
		r.probeWarned = true
		r.logger.Warn("camunda: without camunda[].url the engine's version and flavor come from its database, which the role may not read: GRANT SELECT ON act_ge_schema_log, act_ge_property",
			"engine", r.engine, "key", r.key, "schema_log", canLog, "property", canProps)
	}
	return p, nil
}

// readable: the table exists and the role may read it.
func (r *Reader) readable(ctx context.Context, tx pgx.Tx, table string) (bool, error) {
	var ok *bool
	err := tx.QueryRow(ctx, `SELECT has_table_privilege(to_regclass($1), 'SELECT')`, r.prefix+table).Scan(&ok)
	return ok != nil && *ok, err
}

// flavorOf is the flavor the installation id's property names, else the
// configured one ("" or "auto": none), else unknown.
func flavorOf(props []string, configured string) camunda.Flavor {
	for _, p := range props {
		if p == operatonInstallation {
			return camunda.FlavorOperaton
		}
	}
	if configured != "" && configured != "auto" {
		return camunda.Flavor(configured)
	}
	return camunda.FlavorUnknown
}

// newestVersion is the highest of dotted versions ("7.20.0", "7.21.0"),
// compared number by number; "" for none.
func newestVersion(vs []string) string {
	best := ""
	for _, v := range vs {
		if v != "" && (best == "" || versionLess(best, v)) {
			best = v
		}
	}
	return best
}

func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errA := strconv.Atoi(as[i])
		y, errB := strconv.Atoi(bs[i])
		if errA != nil || errB != nil {
			if as[i] != bs[i] {
				return as[i] < bs[i]
			}
			continue
		}
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// zoneTolerance is how far the engine's newest timestamp may lie past the
// database clock before time_zone is called wrong: clocks of two machines
// and a commit in flight, not an hour.
const zoneTolerance = time.Minute

// zoneInFuture checks time_zone without the REST API: the newest
// deployment and the newest activity instance, read as local times of
// time_zone, must not lie in the database clock's future. A zone set east
// of the engine's (UTC for an engine in Europe/Berlin) puts the engine's
// recent timestamps hours ahead, which this finds as soon as the engine
// deployed or ran something within that offset; a zone set west of it
// (Europe/Berlin for an engine in UTC) puts them in the past, which no
// table tells from old work: only camunda[].url lets the exporter compare
// with the engine's own rendering of a time.
func (r *Reader) zoneInFuture(ctx context.Context) error {
	var deploy, activity *time.Time
	var now time.Time
	err := r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT max(deploy_time_) FROM `+r.prefix+`act_re_deployment),
			(SELECT max(start_time_) FROM `+r.prefix+`act_hi_actinst), now()`).Scan(&deploy, &activity, &now)
	})
	if err != nil {
		return fmt.Errorf("%s: checking time_zone: %w", r.key, err)
	}
	for _, c := range []struct {
		what string
		at   *time.Time
	}{{"deployment", deploy}, {"activity instance", activity}} {
		if c.at == nil {
			continue
		}
		got := r.instant(*c.at)
		if ahead := got.Sub(now); ahead > zoneTolerance {
			return fmt.Errorf("%s.time_zone: the engine's newest %s is stamped %s, which read in %q lies %s after the database's clock (%s): the engine writes local times of another zone; set time_zone to the engine JVM's time zone (its user.timezone)",
				r.key, c.what, c.at.Format("2006-01-02 15:04:05.999"), r.zone, ahead.Round(time.Minute), now.In(r.loc).Format(time.RFC3339))
		}
	}
	return nil
}

// ProcessXML reads a process definition's BPMN XML from the engine's
// tables (its deployment's resource in ACT_GE_BYTEARRAY), for an engine read
// without its REST API below history level full (the activity stream's
// process models, models.go in collectors/engine); exists is false when the
// engine no longer has it. ACT_GE_BYTEARRAY also holds serialized
// variables: the role needs SELECT on it only in this case
// (deploy/sql/camunda/002_exporter_role.sql).
func (r *Reader) ProcessXML(ctx context.Context, id string) (doc []byte, exists bool, err error) {
	err = r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT b.bytes_ FROM `+r.prefix+`act_re_procdef d
			JOIN `+r.prefix+capability.ByteArrayTable+` b ON b.deployment_id_ = d.deployment_id_ AND b.name_ = d.resource_name_
			WHERE d.id_ = $1`, id).Scan(&doc)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("%s: reading the process model of definition %s from %s (without camunda[].url, below history level full: GRANT SELECT ON %s to the exporter's role): %w",
			r.key, id, capability.ByteArrayTable, capability.ByteArrayTable, err)
	}
	return doc, true, nil
}
