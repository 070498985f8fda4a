package relaytest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// DebeziumProject is the Maven project of the Debezium relay, relative to the repository root.
const DebeziumProject = "test/relays/debezium"

// BuildDebezium returns the path of the Debezium relay's jar, building it with Maven when the
// cache has none for the current pom and sources (testkit.MavenBuild: <repo>/.cache/relays, or
// $RELAYTEST_CACHE_DIR; extra Maven arguments from $RELAYTEST_MVN_ARGS, e.g. -o).
func BuildDebezium(ctx context.Context) (string, error) {
	return BuildJar(ctx, "debezium-relay", DebeziumProject)
}

// BuildJar returns the path of the jar <name>.jar that the Maven project (relative to the
// repository root) packages, building it when the cache has none for the current pom and sources
// (testkit.MavenBuild): the relays' and the applications' builds share <repo>/.cache/relays, or
// $RELAYTEST_CACHE_DIR, and take extra Maven arguments from $RELAYTEST_MVN_ARGS (e.g. -o).
func BuildJar(ctx context.Context, name, project string) (string, error) {
	cache := os.Getenv("RELAYTEST_CACHE_DIR")
	if cache == "" {
		root, err := testkit.RepoRoot()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(root, ".cache", "relays")
	}
	return testkit.MavenBuild(ctx, testkit.MavenJar{
		Name:     name,
		Project:  project,
		Jar:      name + ".jar",
		CacheDir: cache,
		Args:     strings.Fields(os.Getenv("RELAYTEST_MVN_ARGS")),
	})
}

// DefaultDebeziumStartTimeout bounds how long StartDebezium waits for the slot to be active: the
// JVM and the connector take 5-10 s on two idle cores.
const DefaultDebeziumStartTimeout = 120 * time.Second

// DebeziumJVMArgs start the relay fast on small machines: C1 only, serial GC, a small heap.
var DebeziumJVMArgs = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"}

// DebeziumOptions configure StartDebezium. DSN and Slot are required.
type DebeziumOptions struct {
	// DSN is the database, postgres://user:password@host:port/db; the password goes to the relay
	// through its environment.
	DSN string
	// Slot is the logical replication slot (pgoutput); the connector creates it when missing, at
	// the server's current WAL position.
	Slot string
	// Publication is the publication pgoutput reads (default "dbz_publication"); the connector
	// creates it for Tables when missing (publication.autocreate.mode=filtered).
	Publication string
	// Tables is the connector's table.include.list (default DefaultTable).
	Tables []string
	// OffsetFlush is offset.flush.interval.ms: how long after its last offset commit the engine
	// commits again, when a batch of records arrives (default 100 ms here; Debezium's own default
	// is 60 s). Each commit writes the offset file and confirms the offset's LSN to the slot.
	OffsetFlush time.Duration
	// Heartbeat is heartbeat.interval.ms (default 0, off). Without heartbeats Debezium confirms to
	// the slot only the commit LSN of the transaction before the last one it published (the
	// offset of an event carries the previous commit); a heartbeat carries the last commit's LSN,
	// so the slot's confirmed_flush_lsn passes the last transaction within about one interval.
	Heartbeat time.Duration
	// StatusInterval is status.update.interval.ms, the replication connection's standby status
	// updates (default 0: Debezium's 10 s). Confirmations are sent at once on each offset commit.
	StatusInterval time.Duration
	// NoRouter turns the outbox event router SMT off: the relay then publishes raw change events
	// (KindChange, inserts and deletes).
	NoRouter bool
	// OffsetDir keeps the offset file (offsets.dat); a relay started again with the same dir
	// resumes from its offsets. Empty: a directory of the relay's own, removed by Close.
	OffsetDir string
	// Properties are further Debezium properties (e.g. "lsn.flush.mode": "connector_and_driver").
	Properties map[string]string
	// JVMArgs replace DebeziumJVMArgs when not nil.
	JVMArgs []string
	// StartTimeout defaults to DefaultDebeziumStartTimeout.
	StartTimeout time.Duration
}

// Debezium is a running Debezium relay.
type Debezium struct {
	*Relay
	// OffsetDir holds its offset file.
	OffsetDir string
}

// NewDebezium is StartDebezium for a test: it skips under -short, fails the test on error and
// closes the relay when the test ends.
func NewDebezium(t testing.TB, opts DebeziumOptions) *Debezium {
	t.Helper()
	return testkit.ForTest(t, "the Debezium relay (a JVM)", 10*time.Minute,
		func(ctx context.Context) (*Debezium, error) { return StartDebezium(ctx, opts) }, (*Debezium).Close)
}

// StartDebezium builds the relay (or takes it from the cache), runs it against the database and
// waits until the slot is active. ctx bounds the build and the wait, not the relay's life: Stop,
// Kill or Close it.
func StartDebezium(ctx context.Context, opts DebeziumOptions) (*Debezium, error) {
	if opts.Slot == "" {
		return nil, fmt.Errorf("relaytest: DebeziumOptions.Slot is required")
	}
	conn, err := parseURL(opts.DSN)
	if err != nil {
		return nil, err
	}
	jar, err := BuildDebezium(ctx)
	if err != nil {
		return nil, err
	}
	jvm := DebeziumJVMArgs
	if opts.JVMArgs != nil {
		jvm = opts.JVMArgs
	}
	java, tmp, args, err := testkit.JavaJar("relaytest-debezium", jar, jvm)
	if err != nil {
		return nil, err
	}
	offsetDir := opts.OffsetDir
	if offsetDir == "" {
		offsetDir = filepath.Join(tmp, "offsets")
	}
	args = append(args, debeziumArgs(conn, opts, offsetDir)...)
	cmd := exec.Command(java, args...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "RELAY_PASSWORD="+conn.Password)
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultDebeziumStartTimeout
	}
	r, err := start(ctx, "debezium", opts.DSN, opts.Slot, cmd, decodeJSONLines, syscall.SIGTERM, tmp, timeout)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Debezium{Relay: r, OffsetDir: offsetDir}, nil
}

// debeziumArgs are the relay's arguments for the options (the password is not among them).
func debeziumArgs(conn connParams, opts DebeziumOptions, offsetDir string) []string {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	flush := opts.OffsetFlush
	if flush <= 0 {
		flush = 100 * time.Millisecond
	}
	tables := opts.Tables
	if len(tables) == 0 {
		tables = []string{DefaultTable}
	}
	args := []string{
		"--host=" + conn.Host, "--port=" + conn.Port, "--user=" + conn.User, "--database=" + conn.Database,
		"--slot=" + opts.Slot,
		"--tables=" + strings.Join(tables, ","),
		"--offset-dir=" + offsetDir,
		"--offset-flush-ms=" + ms(flush),
		"--heartbeat-ms=" + ms(opts.Heartbeat),
	}
	if opts.Publication != "" {
		args = append(args, "--publication="+opts.Publication)
	}
	if opts.StatusInterval > 0 {
		args = append(args, "--status-ms="+ms(opts.StatusInterval))
	}
	if opts.NoRouter {
		args = append(args, "--router=false")
	}
	keys := make([]string, 0, len(opts.Properties))
	for k := range opts.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--debezium."+k+"="+opts.Properties[k])
	}
	return args
}

// decodeJSONLines reads the Debezium relay's stdout: one JSON record a line.
func decodeJSONLines(out io.Reader, emit func(Event), log io.Writer) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Kind == "" {
			fmt.Fprintf(log, "relaytest: stdout line not a record: %s\n", sc.Text())
			continue
		}
		emit(e)
	}
}
