package relaytest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Output plugins pg_recvlogical can stream with.
const (
	// PluginPgoutput is PostgreSQL's logical replication plugin, the one Debezium uses: it needs
	// a publication (pg_recvlogical -o proto_version=1 -o publication_names=NAME) and writes the
	// binary logical replication protocol, which the harness decodes.
	PluginPgoutput = "pgoutput"
	// PluginTestDecoding is the contrib example plugin: text lines, every table of the database,
	// no publication.
	PluginTestDecoding = "test_decoding"
)

// DefaultRecvLogicalStartTimeout bounds how long StartRecvLogical waits for the slot to be active.
const DefaultRecvLogicalStartTimeout = 30 * time.Second

// RecvLogicalOptions configure StartRecvLogical. DSN and Slot are required.
type RecvLogicalOptions struct {
	// DSN is the database, postgres://user:password@host:port/db (the password goes through
	// PGPASSWORD).
	DSN  string
	Slot string
	// Plugin is PluginPgoutput (default) or PluginTestDecoding.
	Plugin string
	// Publication is the publication pgoutput reads (required with pgoutput).
	Publication string
	// Table is the outbox table whose inserts are the relay's events (default DefaultTable);
	// deletes and other tables' changes are not published.
	Table string
	// CreateSlot runs pg_recvlogical --create-slot --if-not-exists with the plugin first.
	CreateSlot bool
	// FsyncInterval is --fsync-interval, in whole seconds: how often pg_recvlogical fsyncs its
	// output and moves the flush position it reports to what it has written. 0 (the harness's
	// default) moves it at once on every loop and never fsyncs (the output is a pipe here);
	// pg_recvlogical's own default is 10 s.
	FsyncInterval time.Duration
	// StatusInterval is --status-interval, in whole seconds: how often it sends a standby status
	// update (write and flush positions) to the server, which sets the slot's confirmed_flush_lsn
	// from the flush position. Default here 1 s; pg_recvlogical's own default is 10 s. It also
	// answers at once when the server asks for a reply.
	StatusInterval time.Duration
	// StartTimeout defaults to DefaultRecvLogicalStartTimeout.
	StartTimeout time.Duration
}

// RecvLogical is a running pg_recvlogical.
type RecvLogical struct {
	*Relay
	// Args are pg_recvlogical's arguments.
	Args []string
}

// RecvLogicalBinary returns the path of pg_recvlogical: beside the server binaries pgtest uses
// (PG_BINDIR, Debian's newest /usr/lib/postgresql/*/bin), else from PATH.
func RecvLogicalBinary() (string, error) {
	if dir, err := pgtest.FindBinDir(); err == nil {
		p := filepath.Join(dir, "pg_recvlogical")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("pg_recvlogical")
	if err != nil {
		return "", fmt.Errorf("relaytest: pg_recvlogical not found beside the server binaries or in PATH (apt-get install postgresql-client): %w", err)
	}
	return p, nil
}

// NewRecvLogical is StartRecvLogical for a test: it skips under -short, fails the test on error
// and closes the relay when the test ends.
func NewRecvLogical(t testing.TB, opts RecvLogicalOptions) *RecvLogical {
	t.Helper()
	return testkit.ForTest(t, "pg_recvlogical", 2*time.Minute,
		func(ctx context.Context) (*RecvLogical, error) { return StartRecvLogical(ctx, opts) }, (*RecvLogical).Close)
}

// StartRecvLogical runs pg_recvlogical --start on the slot (creating it first with CreateSlot),
// writing to stdout, which the harness decodes into events, and waits until the slot is active.
func StartRecvLogical(ctx context.Context, opts RecvLogicalOptions) (*RecvLogical, error) {
	if opts.Slot == "" {
		return nil, fmt.Errorf("relaytest: RecvLogicalOptions.Slot is required")
	}
	if opts.Plugin == "" {
		opts.Plugin = PluginPgoutput
	}
	if opts.Table == "" {
		opts.Table = DefaultTable
	}
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = time.Second
	}
	var dec decoder
	switch opts.Plugin {
	case PluginPgoutput:
		if opts.Publication == "" {
			return nil, fmt.Errorf("relaytest: pg_recvlogical with pgoutput needs RecvLogicalOptions.Publication")
		}
		dec = decodePgoutput(opts.Table)
	case PluginTestDecoding:
		dec = decodeTestDecoding(opts.Table)
	default:
		return nil, fmt.Errorf("relaytest: pg_recvlogical: unknown plugin %q (want %s or %s)", opts.Plugin, PluginPgoutput, PluginTestDecoding)
	}
	conn, err := parseURL(opts.DSN)
	if err != nil {
		return nil, err
	}
	bin, err := RecvLogicalBinary()
	if err != nil {
		return nil, err
	}
	conninfo := fmt.Sprintf("host=%s port=%s user=%s dbname=%s", conn.Host, conn.Port, conn.User, conn.Database)
	env := append(os.Environ(), "PGPASSWORD="+conn.Password, "PGAPPNAME=relaytest-pg_recvlogical")
	if opts.CreateSlot {
		cmd := exec.CommandContext(ctx, bin, "-d", conninfo, "-S", opts.Slot, "-P", opts.Plugin, "--create-slot", "--if-not-exists")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("relaytest: pg_recvlogical --create-slot: %w\n%s", err, out)
		}
	}
	secs := func(d time.Duration) string { return strconv.Itoa(int(d.Round(time.Second) / time.Second)) }
	args := []string{"-d", conninfo, "-S", opts.Slot, "--start", "-f", "-",
		"-F", secs(opts.FsyncInterval), "-s", secs(opts.StatusInterval), "-v"}
	if opts.Plugin == PluginPgoutput {
		args = append(args, "-o", "proto_version=1", "-o", "publication_names="+opts.Publication)
	} else {
		args = append(args, "-o", "include-xids=1")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultRecvLogicalStartTimeout
	}
	r, err := start(ctx, "pg_recvlogical", opts.DSN, opts.Slot, cmd, dec, syscall.SIGINT, "", timeout)
	if err != nil {
		return nil, err
	}
	return &RecvLogical{Relay: r, Args: args}, nil
}
