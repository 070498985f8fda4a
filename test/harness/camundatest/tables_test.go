package camundatest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// TestEngineTablesOnPostgres starts every flavor of Flavors() (any of KnownFlavors, cibseven
// included) on a fresh PostgreSQL database and checks what engine-database mode depends on: the
// schema version rows, whether ACT_RU_EXT_TASK has CREATE_TIME_, and that a waiting task's
// activity instance in ACT_HI_ACTINST (joined by ACT_INST_ID_) started when the task was created,
// the waiting age of engines without CREATE_TIME_.
func TestEngineTablesOnPostgres(t *testing.T) {
	for _, flavor := range camundatest.Flavors() {
		t.Run(string(flavor), func(t *testing.T) {
			t.Parallel()
			exp, ok := expectations[flavor]
			if !ok {
				t.Fatalf("no expectations for flavor %s", flavor)
			}
			dbURL := pgtest.NewDatabase(t)
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			e, err := camundatest.Start(ctx, camundatest.Options{Flavor: flavor, PostgresURL: dbURL, TimeZone: "UTC"})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Stop()
			t.Logf("%s %s on PostgreSQL started in %s", flavor, e.Version, e.StartupTime.Round(100*time.Millisecond))
			if e.Version != exp.version {
				t.Errorf("GET /version = %s, want %s", e.Version, exp.version)
			}
			c := e.Client()
			key := camundatest.UniqueName(t.Name())
			if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, key+".t1")}); err != nil {
				t.Fatal(err)
			}
			before := time.Now()
			pi, err := c.StartProcess(ctx, key, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			after := time.Now()

			conn, err := pgx.Connect(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			property, schemaLog, column := engineSchema(ctx, t, conn)
			if property != "fox" || schemaLog != exp.schemaVersion {
				t.Errorf("schema.version %q, schema log %q; want fox and %s", property, schemaLog, exp.schemaVersion)
			}
			if column != exp.createTimeColumn {
				t.Errorf("ACT_RU_EXT_TASK has CREATE_TIME_: %v, want %v", column, exp.createTimeColumn)
			}

			// The engine writes local times of its JVM's zone (UTC here) into columns without a zone.
			var started time.Time
			var ended *time.Time
			if err := conn.QueryRow(ctx, `SELECT a.start_time_, a.end_time_ FROM act_ru_ext_task t
				JOIN act_hi_actinst a ON a.id_ = t.act_inst_id_ WHERE t.proc_inst_id_ = $1`, pi.ID).Scan(&started, &ended); err != nil {
				t.Fatalf("the waiting task's activity instance: %v", err)
			}
			within(t, "ACT_HI_ACTINST.START_TIME_ of the waiting task", started, before, after)
			if ended != nil {
				t.Errorf("the waiting task's activity instance ended at %s", ended)
			}
			if column {
				var created time.Time
				if err := conn.QueryRow(ctx, `SELECT create_time_ FROM act_ru_ext_task WHERE proc_inst_id_ = $1`, pi.ID).Scan(&created); err != nil {
					t.Fatal(err)
				}
				if d := created.Sub(started); d < -time.Second || d > time.Second {
					t.Errorf("CREATE_TIME_ %s and the activity instance's START_TIME_ %s differ by %s", created, started, d)
				}
			}
		})
	}
}

// engineSchema reads what an engine wrote of its schema to its database:
// ACT_GE_PROPERTY's schema.version, the newest ACT_GE_SCHEMA_LOG version
// (both logged), and whether ACT_RU_EXT_TASK has CREATE_TIME_ (7.21+).
func engineSchema(ctx context.Context, t *testing.T, conn *pgx.Conn) (property, schemaLog string, createTime bool) {
	t.Helper()
	if err := conn.QueryRow(ctx, `SELECT value_ FROM act_ge_property WHERE name_ = 'schema.version'`).Scan(&property); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT version_ FROM act_ge_schema_log ORDER BY timestamp_ DESC LIMIT 1`).Scan(&schemaLog); err != nil {
		t.Fatal(err)
	}
	t.Logf("ACT_GE_PROPERTY schema.version = %q, ACT_GE_SCHEMA_LOG version = %q", property, schemaLog)
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_name = 'act_ru_ext_task' AND column_name = 'create_time_')`).Scan(&createTime); err != nil {
		t.Fatal(err)
	}
	return property, schemaLog, createTime
}
