// Package config loads and validates the exporter's YAML configuration.
//
// Every error names the key it is about and its line (for example
// `databases[0].tables.outbox.columns.created_at (line 12): must not be
// empty`), and every error of a file is reported at once, so a user can
// fix the file in one round without reading code. Secrets never live in the file
// itself: DSNs and passwords come from files or environment variables.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/blocks/yamlfile"
)

// Defaults used when a key is omitted.
const (
	DefaultCamundaURL       = "http://localhost:8080/engine-rest"
	DefaultMinInterval      = 30 * time.Second
	DefaultCollectTimeout   = 20 * time.Second
	DefaultRequestTimeout   = 10 * time.Second
	DefaultStatementTimeout = 5 * time.Second
	DefaultLockTimeout      = 1 * time.Second
	DefaultMaxConnections   = 2
	DefaultLateCommitWindow = 5 * time.Minute
	DefaultLabelValueLimit  = 100
	// DefaultLabelValueForgetAfter: a label value unseen this long frees
	// its place under label_value_limit (its series go away). A week, so
	// that a topic or event type of a weekly job keeps its series.
	DefaultLabelValueForgetAfter = 7 * 24 * time.Hour
	// DefaultMaxCatchUp bounds how far behind late_commit_window a table
	// counter reads after a gap without collections: at the defaults a
	// catch-up reads at most twice the rows of a regular collection.
	DefaultMaxCatchUp = 5 * time.Minute
	// DefaultMaxRememberedDuplicates bounds the idempotency records whose
	// duplicate_count the exporter remembers, per table.
	DefaultMaxRememberedDuplicates = 2_000_000
	DefaultWorkerIDLimit           = 20
	// DefaultFailureSignatureLimit is how many failure signatures each
	// topic or process definition key keeps as their own error label.
	DefaultFailureSignatureLimit = 10
	// History cleanup reading (camunda[].history_cleanup).
	DefaultHistoryCleanupInterval         = 10 * time.Minute
	DefaultHistoryCleanupStatementTimeout = 10 * time.Second
	DefaultStaleAfter                     = 15 * time.Minute
	DefaultMaxListedTasks                 = 10000
	// Engines: history log entries are written inside the engine's
	// transactions (a completion runs the process on to its next wait
	// state), which usually commit within seconds.
	DefaultEngineLateCommitWindow = time.Minute
	DefaultMaxHistoryEntries      = 20000
	DefaultRequestConcurrency     = 4
	DefaultEngineTimeZone         = "UTC"
	// HistoryLevelAuto detects the engine's history level (camunda[].history_level).
	HistoryLevelAuto = "auto"
	// FlavorAuto takes the flavor from the engine (camunda[].flavor).
	FlavorAuto = "auto"
)

// HistoryLevels are the values of camunda[].history_level besides auto: the
// engine's history levels, lowest first.
func HistoryLevels() []string { return []string{"none", "activity", "audit", "full"} }

// Flavors are the values of camunda[].flavor besides auto: the
// distributions of Camunda 7 the exporter knows (the flavor label).
func Flavors() []string { return []string{"camunda", "operaton", "cibseven"} }

// DefaultDurationBuckets span external work from a quick call (0.1 s) to a
// worker that holds a task for an hour, in seconds.
func DefaultDurationBuckets() []float64 {
	return []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
}

// Config is the whole file.
type Config struct {
	Camunda   []Camunda  `yaml:"camunda"`
	Databases []Database `yaml:"databases"`
	// Deliveries are the paths from a database's outbox to a database's
	// inbox that the exporter watches end to end (delivery.go).
	Deliveries []Delivery `yaml:"deliveries"`
	// Status configures the on-call status page.
	Status Status `yaml:"status"`
}

// Camunda is one engine, polled over its REST API.
type Camunda struct {
	Name string `yaml:"name"`
	// URL is the engine's REST API. It may be left out when Database is
	// set: the engine is then read from its database alone (an embedded
	// engine without REST API), probed there too.
	URL          string `yaml:"url"`
	Engine       string `yaml:"engine"` // named engine; empty means the default engine
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
	PasswordEnv  string `yaml:"password_env"`

	MinInterval    model.Duration `yaml:"min_interval"`
	Timeout        model.Duration `yaml:"timeout"`         // one whole collection
	RequestTimeout model.Duration `yaml:"request_timeout"` // one REST request

	TLS TLS `yaml:"tls"`

	// Topics are always reported, even when they hold no task.
	Topics []string `yaml:"topics"`
	// WorkerIDLimit bounds the worker_id label per topic; the rest fold into "other".
	WorkerIDLimit int `yaml:"worker_id_limit"`
	// LabelValueLimit bounds every other label drawn from data (topic, activity, ...).
	LabelValueLimit int `yaml:"label_value_limit"`
	// LabelValueForgetAfter frees the place of a label value no
	// collection has seen for that long (0: never); its series go away.
	LabelValueForgetAfter *model.Duration `yaml:"label_value_forget_after"`
	// MaxListedTasks bounds how many locked tasks one collection lists to
	// watch lock expiry and redelivery; counts are exact regardless.
	MaxListedTasks int `yaml:"max_listed_tasks"`
	// MaxResultsLimit is the engine's queryMaxResultsLimit, if it sets one
	// (enforced for authenticated users): list pages stay within it instead
	// of being refused with HTTP 400. 0: the engine sets none.
	MaxResultsLimit int `yaml:"max_results_limit"`
	// RequestConcurrency bounds the REST requests of one collection in
	// flight at a time.
	RequestConcurrency int `yaml:"request_concurrency"`
	// LateCommitWindow is how long after its timestamp a history log entry
	// may still commit: each collection re-reads that much of the history
	// log and counts each entry once.
	LateCommitWindow model.Duration `yaml:"late_commit_window"`
	// MaxHistoryEntries bounds the history log entries one collection
	// reads; beyond it the interval's failures and completions are
	// undercounted (and counted in a self-metric).
	MaxHistoryEntries int `yaml:"max_history_entries"`
	// DurationBuckets are the upper bounds, in seconds, of the histogram
	// of external task durations (creation to successful completion).
	DurationBuckets []float64 `yaml:"duration_buckets"`
	// HistoryLevel is the engine's history level (none, activity, audit,
	// full), or auto (the default) to detect it: it decides which series
	// the engine's history can feed (docs/camunda-states.md).
	HistoryLevel string `yaml:"history_level"`
	// FailureSignatures groups failures by their error message's
	// signature (camunda_external_task_failures_by_error_total,
	// camunda_job_failures_by_error_total, the status page's failure
	// groups). Error messages may carry personal data: false keeps only
	// the counts. Default true.
	FailureSignatures *bool `yaml:"failure_signatures"`
	// FailureSignatureLimit is how many signatures each topic or process
	// definition key keeps; later ones count under error="other".
	FailureSignatureLimit int `yaml:"failure_signature_limit"`

	// TenantLabel breaks the per-topic external-task series down by
	// tenant: a tenant label before topic ("" for tasks without a tenant),
	// the (tenant, topic) pairs bounded by label_value_limit. Off by
	// default: most engines serve one tenant or none.
	TenantLabel bool `yaml:"tenant_label"`

	// HistoryCleanup configures the camunda_history collector: history
	// growth and the history cleanup.
	HistoryCleanup HistoryCleanup `yaml:"history_cleanup"`

	// Database, when set, reads the engine's own tables (PostgreSQL)
	// instead of asking the REST API for external tasks, history, incidents
	// and jobs: a few queries per collection whatever the number of topics.
	// With URL the REST API still gives the version, flavor and clock, and
	// checks time_zone; without it the database does (less can be checked:
	// docs/camunda-states.md).
	Database *EngineDatabase `yaml:"database"`

	// Flavor names the distribution (camunda, operaton, cibseven) of an
	// engine read without URL, whose tables cannot tell Camunda 7 from CIB
	// seven (Operaton's can): the flavor label says it. auto (the
	// default): what the tables tell, else unknown. With URL the REST API
	// names it and the key is refused.
	Flavor string `yaml:"flavor"`

	// Status says what the status page may show of this engine's tasks.
	Status SourceStatus `yaml:"status"`

	// Password is resolved from PasswordFile or PasswordEnv by Load. It is
	// never read from the file itself.
	Password string `yaml:"-"`
}

// HistoryCleanup configures the camunda_history collector. Its reading
// (the cleanable process instance report, the engine's largest tables)
// costs more as the history grows, so it has its own interval.
type HistoryCleanup struct {
	// Enabled: false turns the collector off. Default true.
	Enabled *bool `yaml:"enabled"`
	// Interval: the collector reads at most once per interval and serves
	// its last reading in between. Default 10m.
	Interval model.Duration `yaml:"interval"`
	// StatementTimeout bounds the cleanable count's query in
	// engine-database mode (below the collection's timeout). Default 10s.
	StatementTimeout model.Duration `yaml:"statement_timeout"`
}

// On reports whether the camunda_history collector runs.
func (h HistoryCleanup) On() bool { return h.Enabled == nil || *h.Enabled }

// EngineDatabase is the database of a Camunda engine, read directly.
type EngineDatabase struct {
	Connection `yaml:",inline"`
	// Schema holds the engine's tables; empty: the role's search_path.
	Schema string `yaml:"schema"`
	// TimeZone is the engine JVM's time zone (its user.timezone): the engine
	// writes its timestamps as local times of that zone into columns without
	// a zone. Checked against the engine at the first collection.
	TimeZone string `yaml:"time_zone"`
}

// Connection is how the exporter reaches a PostgreSQL database, a worker
// database or an engine's: the DSN (given inline, in a file or in an
// environment variable) and the limits of its sessions.
type Connection struct {
	DSN              string         `yaml:"dsn"`
	DSNFile          string         `yaml:"dsn_file"`
	DSNEnv           string         `yaml:"dsn_env"`
	StatementTimeout model.Duration `yaml:"statement_timeout"`
	LockTimeout      model.Duration `yaml:"lock_timeout"`
	MaxConnections   int            `yaml:"max_connections"`

	// ResolvedDSN is filled by Load from DSN, DSNFile or DSNEnv.
	ResolvedDSN string `yaml:"-"`
}

// TLS configures the HTTPS client of a Camunda engine.
type TLS struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Database is one PostgreSQL database holding worker tables.
type Database struct {
	Name       string `yaml:"name"`
	Connection `yaml:",inline"`

	MinInterval model.Duration `yaml:"min_interval"`
	Timeout     model.Duration `yaml:"timeout"`
	// LateCommitWindow must exceed the longest transaction that writes the
	// tables: counters re-read this much history to catch rows whose
	// timestamp was taken before they committed.
	LateCommitWindow model.Duration `yaml:"late_commit_window"`
	LabelValueLimit  int            `yaml:"label_value_limit"`
	// LabelValueForgetAfter frees the place of a label value no
	// collection has seen for that long (0: never); its series go away.
	LabelValueForgetAfter *model.Duration `yaml:"label_value_forget_after"`
	// MaxCatchUp bounds how far behind late_commit_window the counters
	// read after a gap without collections; the older part of a longer
	// gap is skipped and counted (0: no bound, the whole gap is read).
	MaxCatchUp *model.Duration `yaml:"max_catch_up"`

	// Tables omitted: all four with their default (reference schema) names.
	// Present: only those listed.
	Tables *Tables `yaml:"tables"`
}

// Tables selects and maps the worker tables of one database.
type Tables struct {
	Idempotency   *IdempotencyTable  `yaml:"idempotency"`
	ProcessedJobs *ProcessedJobTable `yaml:"processed_jobs"`
	Inbox         *InboxTable        `yaml:"inbox"`
	Outbox        *OutboxTable       `yaml:"outbox"`
}

// Load reads, defaults, validates and resolves the secrets of a config file.
// An empty path gives the default configuration: one Camunda engine at
// DefaultCamundaURL and no database.
func Load(path string) (*Config, error) {
	if path == "" {
		c := &Config{Camunda: []Camunda{{Name: "default", URL: DefaultCamundaURL}}}
		if err := c.finish(); err != nil {
			return nil, err
		}
		return c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes, defaults, validates and resolves a config document. A
// document must configure at least one Camunda engine or database. Every
// error names its key and line (blocks/yamlfile), all of them at once.
func Parse(b []byte) (*Config, error) {
	c := &Config{}
	doc, err := yamlfile.Decode(b, c, yamlfile.Options{EmptySection: map[reflect.Type]string{
		// The decoder would read "tables:" as left out: all four tables.
		reflect.TypeOf(Tables{}): "omit the key to watch all four tables with their default names, or list the tables under it",
		// A relay without its slot would watch nothing.
		reflect.TypeOf(OutboxRelay{}): "name the logical replication slot the relay reads, relay: {slot: NAME} (or remove the key)",
	}})
	if err != nil {
		return nil, err
	}
	// A file that watches nothing would serve only the exporter's own
	// metrics, up=1, and no source alert could ever fire.
	if len(c.Camunda) == 0 && len(c.Databases) == 0 {
		return nil, fmt.Errorf("configures no source: list at least one engine under camunda: or one database under databases: (without a config file the exporter watches one engine at %s)", DefaultCamundaURL)
	}
	if err := c.finishIn(doc); err != nil {
		return nil, err
	}
	return c, nil
}

// finish gives a configuration built without a file its defaults,
// validates it and resolves its secrets; its errors name their keys.
func (c *Config) finish() error { return c.finishIn(nil) }

// finishIn is finish for the configuration decoded from doc: every error
// also names its line.
func (c *Config) finishIn(doc *yamlfile.Document) error {
	errs := doc.Errors()
	add := errs.Add
	c.Status.applyDefaults()
	c.Status.validate(add)
	// Names are the engine and database labels: each used once per list.
	each := func(list string, n int, at func(int) source) {
		names := map[string]string{}
		for i := range n {
			s, key := at(i), fmt.Sprintf("%s[%d]", list, i)
			s.applyDefaults()
			s.validate(key, add)
			if prev, dup := names[s.label()]; dup && s.label() != "" {
				add(key+".name", "%q is already used by %s", s.label(), prev)
			}
			names[s.label()] = key
			s.resolveSecrets(key, add)
		}
	}
	each("camunda", len(c.Camunda), func(i int) source { return &c.Camunda[i] })
	each("databases", len(c.Databases), func(i int) source { return &c.Databases[i] })
	c.resolveCorrelations(add)
	c.resolveDeliveries(add)
	c.deriveOutboxConsumers()
	return errs.Err()
}

// source is a configured engine or database: finish gives each its
// defaults, validates it, checks its name is unique among its kind and
// reads its secrets.
type source interface {
	applyDefaults()
	validate(key string, add func(string, string, ...any))
	label() string
	resolveSecrets(key string, add func(string, string, ...any))
}

func (e *Camunda) label() string  { return e.Name }
func (d *Database) label() string { return d.Name }

// resolveSecrets reads the password (with a username) and the engine
// database's DSN.
func (e *Camunda) resolveSecrets(key string, add func(string, string, ...any)) {
	if e.Username != "" {
		pw, err := secret(e.PasswordFile, e.PasswordEnv)
		if err != nil {
			add(key, "password: %v", err)
		}
		e.Password = pw
	}
	if d := e.Database; d != nil {
		d.resolve(key+".database", add)
	}
}

func (d *Database) resolveSecrets(key string, add func(string, string, ...any)) { d.resolve(key, add) }

// resolve sets ResolvedDSN from the DSN given inline, in a file or in an
// environment variable; exactly one of them must be set.
func (c *Connection) resolve(key string, add func(string, string, ...any)) {
	switch set := countSet(c.DSN, c.DSNFile, c.DSNEnv); {
	case set == 0:
		add(key, "one of dsn, dsn_file or dsn_env is required")
	case set > 1:
		add(key, "set only one of dsn, dsn_file or dsn_env")
	case c.DSN != "":
		c.ResolvedDSN = c.DSN
	default:
		v, err := secret(c.DSNFile, c.DSNEnv)
		if err != nil {
			add(key, "dsn: %v", err)
		}
		c.ResolvedDSN = v
	}
}

func (c *Connection) applyDefaults() {
	orDefault(&c.StatementTimeout, model.Duration(DefaultStatementTimeout))
	orDefault(&c.LockTimeout, model.Duration(DefaultLockTimeout))
	orDefault(&c.MaxConnections, DefaultMaxConnections)
}

// validate checks the session limits against the collection's timeout;
// needs says how many connections the exporter uses, for the message.
func (c *Connection) validate(key string, timeout model.Duration, needs string, add func(string, string, ...any)) {
	positive(add, key+".statement_timeout", time.Duration(c.StatementTimeout))
	positive(add, key+".lock_timeout", time.Duration(c.LockTimeout))
	if c.StatementTimeout > timeout {
		add(key+".statement_timeout", "(%s) must not exceed timeout (%s), or a slow query outlives its collection", c.StatementTimeout, timeout)
	}
	if c.MaxConnections < 1 || c.MaxConnections > 10 {
		add(key+".max_connections", "must be between 1 and 10, got %d (the exporter needs %s)", c.MaxConnections, needs)
	}
}

// resolveCorrelations checks that every join names a configured engine and
// fills in the default: the only configured engine. With no engine at all,
// joins are off.
func (c *Config) resolveCorrelations(add func(string, string, ...any)) {
	engines := map[string]bool{}
	for _, e := range c.Camunda {
		engines[e.Name] = true
	}
	for i := range c.Databases {
		t := c.Databases[i].Tables
		if t == nil {
			continue
		}
		key := fmt.Sprintf("databases[%d].tables", i)
		if it := t.Idempotency; it != nil && !it.Camunda.Disabled {
			switch {
			case it.Camunda.Engine != "":
				if !engines[it.Camunda.Engine] {
					add(key+".idempotency.camunda.engine", "no camunda engine is named %q", it.Camunda.Engine)
				}
			case len(c.Camunda) == 1:
				it.Camunda.Engine = c.Camunda[0].Name
			case len(c.Camunda) > 1:
				add(key+".idempotency.camunda.engine", "must name one of the %d configured engines (or set camunda.disabled: true)", len(c.Camunda))
			default:
				it.Camunda.Disabled = true
			}
		}
		if pt := t.ProcessedJobs; pt != nil && !pt.Camunda.Disabled {
			switch {
			case pt.Camunda.Engine != "" && !engines[pt.Camunda.Engine]:
				add(key+".processed_jobs.camunda.engine", "no camunda engine is named %q", pt.Camunda.Engine)
			case len(c.Camunda) == 0:
				pt.Camunda.Disabled = true
			}
		}
	}
}

// orDefault sets *v to def when it is the zero value: the key was not
// configured.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

func (e *Camunda) applyDefaults() {
	orDefault(&e.MinInterval, model.Duration(DefaultMinInterval))
	orDefault(&e.Timeout, model.Duration(DefaultCollectTimeout))
	orDefault(&e.RequestTimeout, model.Duration(DefaultRequestTimeout))
	orDefault(&e.WorkerIDLimit, DefaultWorkerIDLimit)
	orDefault(&e.LabelValueLimit, DefaultLabelValueLimit)
	durationOr(&e.LabelValueForgetAfter, DefaultLabelValueForgetAfter)
	orDefault(&e.MaxListedTasks, DefaultMaxListedTasks)
	orDefault(&e.RequestConcurrency, DefaultRequestConcurrency)
	orDefault(&e.LateCommitWindow, model.Duration(DefaultEngineLateCommitWindow))
	orDefault(&e.MaxHistoryEntries, DefaultMaxHistoryEntries)
	orDefault(&e.FailureSignatureLimit, DefaultFailureSignatureLimit)
	orDefault(&e.HistoryCleanup.Interval, model.Duration(DefaultHistoryCleanupInterval))
	orDefault(&e.HistoryCleanup.StatementTimeout, model.Duration(DefaultHistoryCleanupStatementTimeout))
	if e.FailureSignatures == nil {
		on := true
		e.FailureSignatures = &on
	}
	if e.DurationBuckets == nil {
		e.DurationBuckets = DefaultDurationBuckets()
	}
	orDefault(&e.HistoryLevel, HistoryLevelAuto)
	orDefault(&e.Flavor, FlavorAuto)
	if d := e.Database; d != nil {
		orDefault(&d.TimeZone, DefaultEngineTimeZone)
		d.Connection.applyDefaults()
	}
}

func (e *Camunda) validate(key string, add func(string, string, ...any)) {
	if !nameRE.MatchString(e.Name) {
		add(key+".name", "must be set to a short name (letters, digits, _ . : -); it becomes the engine label")
	}
	switch {
	case e.URL == "" && e.Database == nil:
		add(key+".url", "must not be empty (for example %s), unless %s.database reads the engine's tables", DefaultCamundaURL, key)
	case e.URL == "":
		// The engine is read from its database alone: what only the
		// REST API uses has no meaning.
		for k, set := range map[string]bool{"username": e.Username != "", "engine": e.Engine != "",
			"tls": e.TLS != (TLS{}), "password_file": e.PasswordFile != "", "password_env": e.PasswordEnv != ""} {
			if set {
				add(key+"."+k, "is for the REST API, and %s.url is not set (the engine is read from %s.database alone)", key, key)
			}
		}
	case !strings.HasPrefix(e.URL, "http://") && !strings.HasPrefix(e.URL, "https://"):
		add(key+".url", "must start with http:// or https://, got %q", e.URL)
	}
	switch {
	case e.Flavor != FlavorAuto && !slices.Contains(Flavors(), e.Flavor):
		add(key+".flavor", "must be %s or one of %s, got %q", FlavorAuto, strings.Join(Flavors(), ", "), e.Flavor)
	case e.Flavor != FlavorAuto && e.URL != "":
		add(key+".flavor", "names the flavor of an engine read without url; with %s.url the REST API names it: remove the key", key)
	}
	if e.Username == "" && (e.PasswordFile != "" || e.PasswordEnv != "") {
		add(key+".username", "must be set when a password is configured")
	}
	if e.Username != "" && countSet(e.PasswordFile, e.PasswordEnv) != 1 {
		add(key, "with username set exactly one of password_file or password_env is required (passwords never live in this file)")
	}
	if (e.TLS.CertFile == "") != (e.TLS.KeyFile == "") {
		add(key+".tls", "cert_file and key_file go together")
	}
	positive(add, key+".timeout", time.Duration(e.Timeout))
	positive(add, key+".request_timeout", time.Duration(e.RequestTimeout))
	positive(add, key+".min_interval", time.Duration(e.MinInterval))
	atLeastOne(add, key+".worker_id_limit", e.WorkerIDLimit)
	atLeastOne(add, key+".label_value_limit", e.LabelValueLimit)
	notNegative(add, key+".label_value_forget_after", e.LabelValueForgetAfter)
	positive(add, key+".history_cleanup.interval", time.Duration(e.HistoryCleanup.Interval))
	positive(add, key+".history_cleanup.statement_timeout", time.Duration(e.HistoryCleanup.StatementTimeout))
	if e.HistoryCleanup.StatementTimeout >= e.Timeout {
		add(key+".history_cleanup.statement_timeout", "must be shorter than %s.timeout (%s), which bounds the whole collection", key, e.Timeout)
	}
	if e.FailureSignatureLimit < 1 || e.FailureSignatureLimit > 100 {
		add(key+".failure_signature_limit", "must be between 1 and 100 (each is a series per topic or process definition key), got %d", e.FailureSignatureLimit)
	}
	atLeastOne(add, key+".max_listed_tasks", e.MaxListedTasks)
	if e.MaxResultsLimit < 0 {
		add(key+".max_results_limit", "must not be negative (0 means the engine sets no limit)")
	}
	between(add, key+".request_concurrency", e.RequestConcurrency, 1, 16)
	positive(add, key+".late_commit_window", time.Duration(e.LateCommitWindow))
	atLeastOne(add, key+".max_history_entries", e.MaxHistoryEntries)
	buckets(add, key+".duration_buckets", e.DurationBuckets, true)
	if e.HistoryLevel != HistoryLevelAuto && !slices.Contains(HistoryLevels(), e.HistoryLevel) {
		add(key+".history_level", "must be %s or one of %s, got %q", HistoryLevelAuto, strings.Join(HistoryLevels(), ", "), e.HistoryLevel)
	}
	if d := e.Database; d != nil {
		dk := key + ".database"
		if _, err := time.LoadLocation(d.TimeZone); err != nil {
			add(dk+".time_zone", "%q is not a time zone name (for example UTC or Europe/Berlin): %v", d.TimeZone, err)
		}
		if d.Schema != "" && !identRE.MatchString(d.Schema) {
			add(dk+".schema", "%q is not a plain schema name (letters, digits, _)", d.Schema)
		}
		d.Connection.validate(dk, e.Timeout, "1-2", add)
	}
	noneEmpty(add, key+".topics", e.Topics)
}

func (d *Database) applyDefaults() {
	orDefault(&d.MinInterval, model.Duration(DefaultMinInterval))
	orDefault(&d.Timeout, model.Duration(DefaultCollectTimeout))
	d.Connection.applyDefaults()
	orDefault(&d.LateCommitWindow, model.Duration(DefaultLateCommitWindow))
	orDefault(&d.LabelValueLimit, DefaultLabelValueLimit)
	durationOr(&d.LabelValueForgetAfter, DefaultLabelValueForgetAfter)
	durationOr(&d.MaxCatchUp, DefaultMaxCatchUp)
	if d.Tables == nil {
		d.Tables = &Tables{
			Idempotency:   &IdempotencyTable{},
			ProcessedJobs: &ProcessedJobTable{},
			Inbox:         &InboxTable{},
			Outbox:        &OutboxTable{},
		}
	}
	if t := d.Tables.Idempotency; t != nil {
		t.applyDefaults()
	}
	if t := d.Tables.ProcessedJobs; t != nil {
		t.applyDefaults()
	}
	if t := d.Tables.Inbox; t != nil {
		t.applyDefaults()
	}
	if t := d.Tables.Outbox; t != nil {
		t.applyDefaults()
	}
}

func (d *Database) validate(key string, add func(string, string, ...any)) {
	if !nameRE.MatchString(d.Name) {
		add(key+".name", "must be set to a short name (letters, digits, _ . : -); it becomes the database label")
	}
	positive(add, key+".min_interval", time.Duration(d.MinInterval))
	positive(add, key+".timeout", time.Duration(d.Timeout))
	d.Connection.validate(key, d.Timeout, "2-4", add)
	positive(add, key+".late_commit_window", time.Duration(d.LateCommitWindow))
	atLeastOne(add, key+".label_value_limit", d.LabelValueLimit)
	notNegative(add, key+".label_value_forget_after", d.LabelValueForgetAfter)
	notNegative(add, key+".max_catch_up", d.MaxCatchUp)
	t := d.Tables
	if t.Idempotency == nil && t.ProcessedJobs == nil && t.Inbox == nil && t.Outbox == nil {
		add(key+".tables", "lists no table; omit the key to watch all four with default names")
	}
	if t.Idempotency != nil {
		t.Idempotency.validate(key+".tables.idempotency", add)
	}
	if t.ProcessedJobs != nil {
		t.ProcessedJobs.validate(key+".tables.processed_jobs", add)
	}
	if t.Inbox != nil {
		t.Inbox.validate(key+".tables.inbox", add)
	}
	if t.Outbox != nil {
		t.Outbox.validate(key+".tables.outbox", add)
	}
}

// durationOr sets *v to def when the key was not configured; a configured
// 0 stays (it switches the bound off).
func durationOr(v **model.Duration, def time.Duration) {
	if *v == nil {
		d := model.Duration(def)
		*v = &d
	}
}

// notNegative refuses a negative duration (model.Duration parses "-1s").
func notNegative(add func(string, string, ...any), key string, d *model.Duration) {
	if d != nil && *d < 0 {
		add(key, "must not be negative (0 switches it off)")
	}
}

// Dur returns a duration key that durationOr defaulted (0 when unset).
func Dur(d *model.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return time.Duration(*d)
}

func positive(add func(string, string, ...any), key string, d time.Duration) {
	if d <= 0 {
		add(key, "must be a positive duration such as 30s")
	}
}

// atLeastOne refuses a count (a limit, a size) below 1.
func atLeastOne(add func(string, string, ...any), key string, n int) {
	if n < 1 {
		add(key, "must be at least 1")
	}
}

// between refuses a count outside lo..hi, naming the value given.
func between(add func(string, string, ...any), key string, n, lo, hi int) {
	if n < lo || n > hi {
		add(key, "must be between %d and %d, got %d", lo, hi, n)
	}
}

// noneEmpty refuses an empty entry of a list of values, by its index
// (key[i]).
func noneEmpty(add func(string, string, ...any), key string, values []string) {
	for i, v := range values {
		if v == "" {
			add(fmt.Sprintf("%s[%d]", key, i), "must not be empty")
		}
	}
}

// buckets checks a histogram's upper bounds, in seconds: positive, strictly
// increasing, and at least one where the key must list any.
func buckets(add func(string, string, ...any), key string, bs []float64, required bool) {
	if required && len(bs) == 0 {
		add(key, "must list at least one upper bound in seconds")
	}
	for i, b := range bs {
		if b <= 0 || (i > 0 && b <= bs[i-1]) {
			add(key, "must be positive and strictly increasing, got %v", bs)
			return
		}
	}
}

func countSet(vals ...string) int {
	n := 0
	for _, v := range vals {
		if v != "" {
			n++
		}
	}
	return n
}

// maxSecretFile bounds a secret file: a DSN or a password is far smaller.
const maxSecretFile = 64 << 10

// secret reads a value from a file or an environment variable, whichever is
// set. Surrounding white space (a trailing newline in a mounted secret) is
// dropped. The file must be a regular file (a symbolic link to one, as
// Kubernetes mounts secrets, is fine) of at most 64 KiB: a pipe or a device
// would block start-up and every reload, or never end.
func secret(file, env string) (string, error) {
	switch {
	case file != "":
		b, err := readSecretFile(file)
		if err != nil {
			return "", fmt.Errorf("cannot read file %s: %w", file, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("file %s is empty", file)
		}
		return v, nil
	case env != "":
		v, ok := os.LookupEnv(env)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("environment variable %s is not set or empty", env)
		}
		return strings.TrimSpace(v), nil
	}
	return "", errors.New("no file or environment variable configured")
}

func readSecretFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if m := st.Mode(); !m.IsRegular() {
		what := "not a regular file"
		switch {
		case m.IsDir():
			what = "a directory"
		case m&os.ModeNamedPipe != 0:
			what = "a named pipe"
		case m&os.ModeDevice != 0:
			what = "a device"
		case m&os.ModeSocket != 0:
			what = "a socket"
		}
		return nil, fmt.Errorf("%s, not a regular file", what)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("larger than %d KiB; a DSN or password file holds one line", maxSecretFile>>10)
	}
	return b, nil
}
