package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/vocab"
)

func TestDefaultsWithoutFile(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Camunda) != 1 || c.Camunda[0].URL != DefaultCamundaURL || len(c.Databases) != 0 {
		t.Fatalf("unexpected default config: %+v", c)
	}
	if time.Duration(c.Camunda[0].MinInterval) != DefaultMinInterval {
		t.Fatalf("min_interval default not applied")
	}
	if c.Camunda[0].HistoryLevel != HistoryLevelAuto {
		t.Fatalf("history_level default %q, want %q", c.Camunda[0].HistoryLevel, HistoryLevelAuto)
	}
}

// TestShortExampleParses parses the example of docs/design.md, "Configuration".
func TestShortExampleParses(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ORDERS_DATABASE_URL", "postgres://exporter@db/orders")
	doc := `
camunda:
  - name: main
    url: http://localhost:8080/engine-rest
    username: exporter
    password_file: ` + pw + `
    min_interval: 30s
    topics: [fulfillment.submit-command]
databases:
  - name: orders
    dsn_env: ORDERS_DATABASE_URL
    min_interval: 30s
    tables:
      idempotency: {table: workflow_idempotency_record}
      processed_jobs: {table: workflow_processed_job}
      inbox: {table: message_inbox}
      outbox: {table: event_outbox}
`
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if c.Camunda[0].Password != "s3cret" {
		t.Errorf("password not read from file (trailing newline must be trimmed)")
	}
	d := c.Databases[0]
	if d.ResolvedDSN != "postgres://exporter@db/orders" {
		t.Errorf("dsn_env not resolved")
	}
	if d.Tables.Inbox.Columns.Status != "processing_status" || d.Tables.Outbox.Columns.PublishedAt != "published_at" {
		t.Errorf("column defaults not applied: %+v", d.Tables)
	}
	if got := strings.Join(d.Tables.Idempotency.TerminalValues(), ","); got != "COMPLETED,FAILED_FINAL,RECONCILED" {
		t.Errorf("terminal values = %s", got)
	}
}

func TestOmittedTablesMeansAllFour(t *testing.T) {
	c, err := Parse([]byte("databases: [{name: a, dsn: 'postgres://x/y'}]"))
	if err != nil {
		t.Fatal(err)
	}
	tb := c.Databases[0].Tables
	if tb.Idempotency == nil || tb.ProcessedJobs == nil || tb.Inbox == nil || tb.Outbox == nil {
		t.Fatalf("omitted tables must select all four: %+v", tb)
	}
	c, err = Parse([]byte("databases: [{name: a, dsn: 'postgres://x/y', tables: {outbox: {table: my_outbox}}}]"))
	if err != nil {
		t.Fatal(err)
	}
	tb = c.Databases[0].Tables
	if tb.Idempotency != nil || tb.Inbox != nil || tb.Outbox.Table != "my_outbox" {
		t.Fatalf("listed tables must select only those: %+v", tb)
	}
}

func TestStatusMapping(t *testing.T) {
	c, err := Parse([]byte(`
databases:
  - name: a
    dsn: postgres://x/y
    tables:
      idempotency:
        statuses: {COMPLETED: [DONE, OK], STARTED: [RUNNING]}
`))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Databases[0].Tables.Idempotency.Statuses
	for value, want := range map[string]string{"DONE": "COMPLETED", "OK": "COMPLETED", "RUNNING": "STARTED", "UNKNOWN_OUTCOME": "UNKNOWN_OUTCOME", "STARTED": vocab.Unmapped, "weird": vocab.Unmapped} {
		if got := m.Canonical(value); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", value, got, want)
		}
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"unknown key", "databases: [{name: a, dsn: x, tabels: {}}]", []string{"databases[0].tabels (line 1): unknown key; did you mean databases[0].tables?"}},
		{"no dsn", "databases: [{name: a}]", []string{"databases[0] (line 1): one of dsn, dsn_file or dsn_env is required"}},
		{"two dsns", "databases: [{name: a, dsn: x, dsn_env: Y}]", []string{"databases[0] (line 1): set only one of dsn, dsn_file or dsn_env"}},
		{"missing env", "databases: [{name: a, dsn_env: WFX_SURELY_UNSET}]", []string{"environment variable WFX_SURELY_UNSET is not set"}},
		{"missing file", "databases: [{name: a, dsn_file: /nonexistent/dsn}]", []string{"cannot read file /nonexistent/dsn"}},
		{"a scalar document", "0", []string{"the document (line 1): must be a mapping (key: value lines or {key: value}), not \"0\""}},
		{"a mapping for a list", "databases: {name: a, dsn: x}", []string{"databases (line 1): must be a list (- item lines or [a, b]), not a mapping"}},
		{"text for a number", "databases: [{name: a, dsn: x, max_connections: two}]", []string{"databases[0].max_connections (line 1): must be a whole number, not \"two\""}},
		{"a list for a value", "databases: [{name: [a], dsn: x}]", []string{"databases[0].name (line 1): must be a single value, not a list"}},
		{"text for true or false", "camunda: [{name: m, url: 'http://x', tls: {insecure_skip_verify: maybe}}]", []string{"camunda[0].tls.insecure_skip_verify (line 1): must be true or false, not \"maybe\""}},
		{"device as a secret file", "databases: [{name: a, dsn_file: /dev/zero}]", []string{"databases[0] (line 1): dsn: cannot read file /dev/zero: a device, not a regular file"}},
		{"directory as a secret file", "camunda: [{name: m, url: 'http://x', username: u, password_file: /}]", []string{"camunda[0] (line 1): password: cannot read file /: a directory, not a regular file"}},
		{"bad name", "databases: [{name: 'a b', dsn: x}]", []string{"databases[0].name (line 1): must be set"}},
		{"duplicate name", "databases: [{name: a, dsn: x}, {name: a, dsn: x}]", []string{`databases[1].name (line 1): "a" is already used by databases[0]`}},
		{"duplicate engine name", "{camunda: [{name: m, url: 'http://x'}, {name: m, url: 'http://y'}], databases: [{name: m, dsn: x}]}", []string{`camunda[1].name (line 1): "m" is already used by camunda[0]`}},
		{"empty column", "databases: [{name: a, dsn: x, tables: {outbox: {columns: {created_at: ''}}}}]", nil},
		{"bad column", "databases: [{name: a, dsn: x, tables: {outbox: {columns: {created_at: 'created at'}}}}]", []string{`databases[0].tables.outbox.columns.created_at (line 1): "created at" is not a column name`}},
		{"bad table", "databases: [{name: a, dsn: x, tables: {inbox: {table: 'a.b.c'}}}]", []string{`databases[0].tables.inbox.table (line 1): "a.b.c" is not a table name`}},
		{"unknown status", "databases: [{name: a, dsn: x, tables: {inbox: {statuses: {DONE: [X]}}}}]", []string{"databases[0].tables.inbox.statuses.DONE (line 1): is not a status of this table"}},
		{"value mapped twice", "databases: [{name: a, dsn: x, tables: {inbox: {statuses: {PROCESSED: [X], FAILED_FINAL: [X]}}}}]", []string{`value "X" is already mapped to`}},
		{"bad duration", "databases: [{name: a, dsn: x, min_interval: soon}]", []string{"soon"}},
		{"statement outlives collection", "databases: [{name: a, dsn: x, timeout: 5s, statement_timeout: 10s}]", []string{"databases[0].statement_timeout (line 1): (10s) must not exceed timeout (5s)"}},
		{"pool too big", "databases: [{name: a, dsn: x, max_connections: 50}]", []string{"databases[0].max_connections (line 1): must be between 1 and 10"}},
		{"inline password rejected", "camunda: [{name: m, url: 'http://x', username: u, password: p}]", []string{"camunda[0].password (line 1): unknown key; did you mean camunda[0].password_env?"}},
		{"username without password", "camunda: [{name: m, url: 'http://x', username: u}]", []string{"camunda[0] (line 1): with username set exactly one of password_file or password_env is required"}},
		{"bad url", "camunda: [{name: m, url: 'localhost:8080'}]", []string{`camunda[0].url (line 1): must start with http:// or https://`}},
		{"negative max_results_limit", "camunda: [{name: m, url: 'http://x', max_results_limit: -1}]", []string{"camunda[0].max_results_limit (line 1): must not be negative"}},
		{"duration buckets not increasing", "camunda: [{name: m, url: 'http://x', duration_buckets: [1, 10, 5]}]", []string{"camunda[0].duration_buckets (line 1): must be positive and strictly increasing, got [1 10 5]"}},
		{"no duration bucket", "camunda: [{name: m, url: 'http://x', duration_buckets: []}]", []string{"camunda[0].duration_buckets (line 1): must list at least one upper bound in seconds"}},
		{"unknown history level", "camunda: [{name: m, url: 'http://x', history_level: activities}]", []string{`camunda[0].history_level (line 1): must be auto or one of none, activity, audit, full, got "activities"`}},
		{"buckets", "databases: [{name: a, dsn: x, tables: {outbox: {publish_delay_buckets: [5, 1]}}}]", []string{"databases[0].tables.outbox.publish_delay_buckets (line 1): must be positive and strictly increasing"}},
	}
	for _, tc := range cases {
		// nil want: accepted (empty column strings fall back to the default name).
		t.Run(tc.name, func(t *testing.T) { parseExpect(t, tc.doc, tc.want) })
	}
}

func TestSecretFromEnvNeverInError(t *testing.T) {
	t.Setenv("WFX_PW", "topsecret")
	_, err := Parse([]byte("camunda: [{name: m, url: 'ftp://x', username: u, password_env: WFX_PW}]"))
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error %v must exist and must not contain the secret", err)
	}
}

func TestCorrelationDefaultsAndErrors(t *testing.T) {
	c, err := Parse([]byte(`
camunda: [{name: main, url: 'http://x'}]
databases: [{name: a, dsn: x}]
`))
	if err != nil {
		t.Fatal(err)
	}
	it := c.Databases[0].Tables.Idempotency
	if it.Camunda.Disabled || it.Camunda.Engine != "main" || it.Camunda.Reference != ReferenceExternalTaskID {
		t.Fatalf("with one engine the join defaults to it by external task id: %+v", it.Camunda)
	}
	c, err = Parse([]byte(`databases: [{name: a, dsn: x}]`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Databases[0].Tables.Idempotency.Camunda.Disabled || !c.Databases[0].Tables.ProcessedJobs.Camunda.Disabled {
		t.Fatalf("with no engine the join is off")
	}
	cases := []struct{ doc, want string }{
		{`camunda: [{name: a, url: 'http://x'}, {name: b, url: 'http://y'}]
databases: [{name: d, dsn: x}]`, "databases[0].tables.idempotency.camunda.engine (line 2): must name one of the 2 configured engines"},
		{`camunda: [{name: a, url: 'http://x'}]
databases: [{name: d, dsn: x, tables: {idempotency: {camunda: {engine: nope}}}}]`, `databases[0].tables.idempotency.camunda.engine (line 2): no camunda engine is named "nope"`},
		{`camunda: [{name: a, url: 'http://x'}]
databases: [{name: d, dsn: x, tables: {idempotency: {camunda: {reference: process_instance_activity}}}}]`, "databases[0].tables.idempotency.columns.activity_id (line 2): must name the activity column"},
		{`camunda: [{name: a, url: 'http://x'}]
databases: [{name: d, dsn: x, tables: {processed_jobs: {camunda: {reference: task}}}}]`, `databases[0].tables.processed_jobs.camunda.reference (line 2): must be external_task_id or process_instance_activity, got "task"`},
	}
	for _, tc := range cases {
		if _, err := Parse([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v does not contain %q", err, tc.want)
		}
	}
}

func TestOneDocumentOnly(t *testing.T) {
	const doc = "databases: [{name: a, dsn: 'postgres://x/y'}]\n"
	cases := []struct {
		name, doc, want string // want "": accepted
	}{
		{"one document", doc, ""},
		{"leading marker", "---\n" + doc, ""},
		{"end marker", doc + "...\n", ""},
		{"empty second document", doc + "---\n", ""},
		{"second document of comments", doc + "---\n# camunda: []\n", ""},
		{"second document", doc + "---\ncamunda: [{name: m, url: 'http://x'}]\n", "holds more than one YAML document (another starts at line 2)"},
		{"second document after marker", "---\n" + doc + "---\ndatabases: [{name: b, dsn: 'postgres://x/z'}]\n", "holds more than one YAML document (another starts at line 3)"},
		{"broken second document", doc + "---\nfoo: [\n", "holds more than one YAML document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v does not contain %q", err, tc.want)
			}
		})
	}
}

func TestDurationErrorsNameKeyAndLine(t *testing.T) {
	const head = "camunda: [{name: m, url: 'http://x'}]\ndatabases:\n  - name: a\n    dsn: postgres://x/y\n"
	cases := []struct {
		name, doc string
		want      []string // nil: accepted
	}{
		{"bare number", head + "    min_interval: 30\n",
			[]string{`databases[0].min_interval (line 5): "30" is not a duration; give a unit, e.g. 30s`}},
		{"quoted number", head + "    late_commit_window: '300'\n",
			[]string{`databases[0].late_commit_window (line 5): "300" is not a duration; give a unit, e.g. 300s`}},
		{"word", "camunda:\n  - name: m\n    url: http://x\n    request_timeout: soon\n",
			[]string{`camunda[0].request_timeout (line 4): "soon" is not a duration; write it like 30s, 5m or 1h30m`}},
		{"fraction", head + "    tables:\n      idempotency:\n        stale_after: 1.5h\n",
			[]string{`databases[0].tables.idempotency.stale_after (line 7): "1.5h" is not a duration`}},
		{"negative", head + "    tables:\n      processed_jobs: {camunda: {grace: -5s}}\n",
			[]string{`databases[0].tables.processed_jobs.camunda.grace (line 6): "-5s" is not a duration`}},
		{"empty string", "camunda: [{name: m, url: 'http://x', timeout: ''}]\n",
			[]string{`camunda[0].timeout (line 1): "" is not a duration`}},
		{"list", "camunda:\n  - name: m\n    url: http://x\n    timeout: [30s]\n",
			[]string{`camunda[0].timeout (line 4): must be a duration such as 30s`}},
		{"second engine, two errors", "camunda:\n  - {name: m, url: 'http://x'}\n  - name: n\n    url: http://y\n    min_interval: 10\n    timeout: 1 minute\n",
			[]string{`camunda[1].min_interval (line 5): "10" is not a duration`, `camunda[1].timeout (line 6): "1 minute" is not a duration`}},
		{"through an anchor", "camunda:\n  - name: m\n    url: http://x\n    timeout: &t 20\n    request_timeout: *t\n",
			[]string{`camunda[0].timeout (line 4): "20" is not a duration`, `camunda[0].request_timeout (line 5): "20" is not a duration`}},
		{"valid ones", head + "    min_interval: 1m30s\n    timeout: 0\n    lock_timeout:\n    tables: {idempotency: {stale_after: 1d, camunda: {grace: 500ms}}}\n", nil},
		{"unknown key still named", head + "    min_intervall: 30s\n", []string{"databases[0].min_intervall (line 5): unknown key; did you mean databases[0].min_interval?"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { parseExpect(t, tc.doc, tc.want) })
	}
}

func TestEmptyTableEntryIsRefused(t *testing.T) {
	const head = "databases:\n  - name: a\n    dsn: postgres://x/y\n"
	cases := []struct {
		name, doc string
		want      []string // nil: accepted
	}{
		{"flow style", head + "    tables: {idempotency: , inbox: , outbox: {table: event_outbox}}\n", []string{
			"databases[0].tables.idempotency (line 4): has no value; write {} for the defaults",
			"databases[0].tables.inbox (line 4): has no value; write {} for the defaults",
		}},
		{"block style", head + "    tables:\n      idempotency:\n      outbox: {}\n", []string{
			"databases[0].tables.idempotency (line 5): has no value; write {} for the defaults",
		}},
		{"explicit null", head + "    tables:\n      processed_jobs: null\n      inbox: ~\n", []string{
			"databases[0].tables.processed_jobs (line 5): has no value",
			"databases[0].tables.inbox (line 6): has no value",
		}},
		{"tables without value", head + "    tables:\n", []string{
			"databases[0].tables (line 4): has no value; omit the key to watch all four tables with their default names",
		}},
		{"empty mappings take the defaults", head + "    tables: {idempotency: {}, outbox: {}}\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := parseExpect(t, tc.doc, tc.want)
			if c == nil {
				return
			}
			tb := c.Databases[0].Tables
			if tb.Idempotency == nil || tb.Idempotency.Table != "workflow_idempotency_record" || tb.Outbox == nil || tb.Inbox != nil || tb.ProcessedJobs != nil {
				t.Fatalf("want idempotency and outbox with their defaults, only: %+v", tb)
			}
		})
	}
}

func TestFileWithoutSourcesIsRefused(t *testing.T) {
	const want = "configures no source: list at least one engine under camunda: or one database under databases:"
	cases := []struct {
		name, doc string
		ok        bool
	}{
		{"empty file", "", false},
		{"only comments", "# camunda: [{name: main, url: 'http://x'}]\n", false},
		{"empty mapping", "{}\n", false},
		{"empty lists", "camunda: []\ndatabases: []\n", false},
		{"keys without values", "camunda:\ndatabases:\n", false},
		{"one engine", "camunda: [{name: main, url: 'http://x'}]\n", true},
		{"one database", "databases: [{name: a, dsn: 'postgres://x/y'}]\n", true},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, fmt.Sprintf("c%d.yml", i))
			if err := os.WriteFile(f, []byte(tc.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(f)
			switch {
			case tc.ok && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case !tc.ok && (err == nil || !strings.Contains(err.Error(), "config file "+f+": "+want)):
				t.Fatalf("error %v does not contain %q", err, want)
			}
		})
	}
	// Without a file the documented default stays: one engine.
	if c, err := Load(""); err != nil || len(c.Camunda) != 1 {
		t.Fatalf("Load(\"\") = %+v, %v; want the default engine", c, err)
	}
}

// parseExpect parses doc and checks the outcome: with want nil it must be
// accepted (the config is returned); otherwise refused with an error that
// contains every string of want (nil is returned).
func parseExpect(t *testing.T, doc string, want []string) *Config {
	t.Helper()
	c, err := Parse([]byte(doc))
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return c
	}
	if err == nil {
		t.Fatalf("accepted; want an error containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	return nil
}

func TestStatusSection(t *testing.T) {
	c, err := Parse([]byte(`
camunda: [{name: main, url: http://localhost:8080/engine-rest, status: {identifiers: false}}]
databases:
  - name: orders
    dsn: postgres://x/y
    tables:
      idempotency: {status: {identifiers: false}}
      processed_jobs: {status: {identifiers: true}}
      inbox: {}
      outbox: {status: {}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tb := c.Databases[0].Tables
	if c.Status.MaxItems != DefaultStatusMaxItems || c.Status.RunbookBaseURL != "" {
		t.Errorf("status defaults: %+v", c.Status)
	}
	if c.Camunda[0].Status.ShowIdentifiers() || tb.Idempotency.Status.ShowIdentifiers() ||
		!tb.ProcessedJobs.Status.ShowIdentifiers() || !tb.Inbox.Status.ShowIdentifiers() || !tb.Outbox.Status.ShowIdentifiers() {
		t.Errorf("identifiers: engine %v, tables %+v", c.Camunda[0].Status, tb)
	}
	c, err = Parse([]byte("databases: [{name: a, dsn: 'postgres://x/y'}]\nstatus: {max_items: 7, runbook_base_url: 'https://wiki.example/rb'}\n"))
	if err != nil || c.Status.MaxItems != 7 || c.Status.RunbookBaseURL != "https://wiki.example/rb" {
		t.Fatalf("%v %+v", err, c)
	}
	db := "databases: [{name: a, dsn: 'postgres://x/y'}]\n"
	for doc, want := range map[string]string{
		db + "status: {max_items: 0}\n":                      "", // 0 is the default
		db + "status: {max_items: 1001}\n":                   "status.max_items (line 2): must be between 1 and 1000, got 1001",
		db + "status: {max_items: -1}\n":                     "status.max_items (line 2): must be between 1 and 1000, got -1",
		db + "status: {runbook_base_url: 'wiki/runbooks'}\n": `status.runbook_base_url (line 2): must be an http:// or https:// URL, got "wiki/runbooks"`,
		db + "status: {max_item: 5}\n":                       "status.max_item (line 2): unknown key; did you mean status.max_items?",
		"databases: [{name: b, dsn: 'postgres://x/y', tables: {inbox: {status: {identifier: false}}}}]\n": "databases[0].tables.inbox.status.identifier (line 1): unknown key; did you mean databases[0].tables.inbox.status.identifiers?",
	} {
		_, err := Parse([]byte(doc))
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", doc, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want %q", doc, err, want)
		}
	}
}

// TestEveryValidationErrorWithItsLine: validation reports every error at
// once, each with its key and line, in the order of the file; a key the
// file leaves out is placed at the section it would go in.
func TestEveryValidationErrorWithItsLine(t *testing.T) {
	doc := `camunda:
  - name: main
    url: localhost:8080
databases:
  - name: orders
    dsn: postgres://x/y
    max_connections: 50
    tables:
      outbox:
        table: a.b.c
      idempotency:
        camunda: {reference: process_instance_activity}
status: {max_items: 1001}
`
	_, err := Parse([]byte(doc))
	want := `camunda[0].url (line 3): must start with http:// or https://, got "localhost:8080"
databases[0].max_connections (line 7): must be between 1 and 10, got 50 (the exporter needs 2-4)
databases[0].tables.outbox.table (line 10): "a.b.c" is not a table name (letters, digits, _; optionally schema.table)
databases[0].tables.idempotency.columns.activity_id (line 11): must name the activity column when camunda.reference is process_instance_activity (the reference table has none)
status.max_items (line 13): must be between 1 and 1000, got 1001`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
}

// TestPresets: a preset is one line; the table defaults to the library's
// own and can be overridden; the keys the preset replaces are refused by
// name, as are unknown presets and a preset without a default table left
// unnamed.
func TestPresets(t *testing.T) {
	c, err := Parse([]byte(`databases:
  - name: a
    dsn: x
    tables:
      outbox: {preset: spring-modulith}
      inbox: {preset: wolverine, table: app.wolverine_incoming_envelopes, retrying_after_attempts: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	o, in := c.Databases[0].Tables.Outbox, c.Databases[0].Tables.Inbox
	if o.Table != "event_publication" || o.Columns.EventID != "" || o.FailedStatuses != nil || o.RetryingAfterAttempts != 3 {
		t.Errorf("outbox with preset: %+v", o)
	}
	if in.Table != "app.wolverine_incoming_envelopes" || in.Statuses != nil || in.RetryingAfterAttempts != 5 {
		t.Errorf("inbox with preset: %+v", in)
	}
	for _, tc := range []struct{ name, tables, want string }{
		{"unknown outbox preset", "outbox: {preset: kafka-connect}", `databases[0].tables.outbox.preset (line 1): unknown outbox preset "kafka-connect"; known: eventuate-tram, gruelbox, masstransit, namastack, nservicebus, spring-modulith, wolverine`},
		{"library without an inbox", "inbox: {preset: namastack}", `databases[0].tables.inbox.preset (line 1): unknown inbox preset "namastack" (namastack keeps no consumer-side table); known: eventuate-tram, masstransit, wolverine`},
		{"columns beside a preset", "outbox: {preset: namastack, columns: {created_at: made}}", "databases[0].tables.outbox.columns.created_at (line 1): is not used with preset namastack, which maps the library's columns; remove it, or the preset"},
		{"attempts beside a preset", "inbox: {preset: masstransit, columns: {attempts: n}}", "databases[0].tables.inbox.columns.attempts (line 1): is not used with preset masstransit"},
		{"statuses beside a preset", "inbox: {preset: masstransit, statuses: {PROCESSED: [DONE]}}", "databases[0].tables.inbox.statuses (line 1): is not used with preset masstransit, which maps the library's states"},
		{"failed statuses beside a preset", "outbox: {preset: gruelbox, failed_statuses: [X]}", "databases[0].tables.outbox.failed_statuses (line 1): is not used with preset gruelbox"},
		{"no default table", "outbox: {preset: nservicebus}", "databases[0].tables.outbox.table (line 1): preset nservicebus has no default table (the library names it after the application): name it"},
		{"retrying threshold", "outbox: {retrying_after_attempts: -1}", "databases[0].tables.outbox.retrying_after_attempts (line 1): must be at least 1, got -1"},
		{"empty attempts column", "inbox: {columns: {attempts: ''}}", "databases[0].tables.inbox.columns.attempts (line 1): must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parseExpect(t, "databases: [{name: a, dsn: x, tables: {"+tc.tables+"}}]", []string{tc.want})
		})
	}
	parseExpect(t, "databases: [{name: a, dsn: x, tables: {outbox: {preset: nservicebus, table: Sales_OutboxData}}}]", nil)
}

// A relay makes the outbox's columns optional: they are read only where
// columns: names some; the slot is required and must be a slot name.
func TestOutboxRelay(t *testing.T) {
	const head = "databases: [{name: a, dsn: x, tables: {outbox: "
	cases := []struct {
		name, outbox string
		want         []string // nil: accepted
		readsColumns bool
	}{
		{"no relay", "{}}}]", nil, true},
		{"relay alone", "{table: public.outbox, relay: {slot: outbox_relay}}}}]", nil, false},
		{"relay and a publication", "{relay: {slot: dbz, publication: dbz_publication}}}}]", nil, false},
		{"relay beside status columns", "{relay: {slot: s}, columns: {status: state}}}}]", nil, true},
		{"slot missing", "{relay: {publication: p}}}}]", []string{`databases[0].tables.outbox.relay.slot (line 1): "" is not a replication slot name`}, false},
		{"slot not a slot name", "{relay: {slot: Outbox-Relay}}}}]", []string{`databases[0].tables.outbox.relay.slot (line 1): "Outbox-Relay" is not a replication slot name`}, false},
		{"publication not a name", "{relay: {slot: s, publication: 'a b'}}}}]", []string{`databases[0].tables.outbox.relay.publication (line 1): "a b" is not a publication name`}, false},
		{"relay without value", "{relay: }}}]", []string{"databases[0].tables.outbox.relay (line 1): has no value; name the logical replication slot the relay reads"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := parseExpect(t, head+tc.outbox, tc.want)
			if c == nil {
				return
			}
			if got := c.Databases[0].Tables.Outbox.ReadsColumns(); got != tc.readsColumns {
				t.Errorf("ReadsColumns() = %v, want %v", got, tc.readsColumns)
			}
		})
	}
}

// TestOutboxConsumersFromDeliveries: an outbox's consumers are the inboxes
// its deliveries take its events to, one per source system the delivery
// names ("" for a delivery that names none), each once.
func TestOutboxConsumersFromDeliveries(t *testing.T) {
	c, err := Parse([]byte(`
databases:
  - {name: orders, dsn: x, tables: {outbox: {}}}
  - {name: shipping, dsn: y, tables: {inbox: {}}}
  - {name: billing, dsn: z, tables: {inbox: {}, outbox: {}}}
deliveries:
  - {name: a, from: {database: orders}, to: {database: shipping, source_systems: [orders, orders-v2]}}
  - {name: b, from: {database: orders, event_types: [OrderPaid]}, to: {database: billing}}
  - {name: c, from: {database: orders}, to: {database: shipping, source_systems: [orders]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []OutboxConsumer{{Database: "shipping", SourceSystem: "orders"}, {Database: "shipping", SourceSystem: "orders-v2"}, {Database: "billing"}}
	if got := c.Databases[0].Tables.Outbox.Consumers; !slices.Equal(got, want) {
		t.Errorf("orders' consumers %+v, want %+v", got, want)
	}
	if got := c.Databases[2].Tables.Outbox.Consumers; len(got) != 0 {
		t.Errorf("billing's outbox has no delivery, consumers %+v", got)
	}
	// consumers is no key of its own: the deliveries say it once.
	if _, err := Parse([]byte(`databases: [{name: d, dsn: x, tables: {outbox: {consumers: []}}}]`)); err == nil || !strings.Contains(err.Error(), "consumers") {
		t.Errorf("tables.outbox.consumers accepted: %v", err)
	}
}
