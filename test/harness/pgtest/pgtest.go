// Package pgtest gives tests a real, throwaway PostgreSQL database.
//
// Unless TEST_DATABASE_URL is set, the first test of a package starts a
// private server from Debian's server binaries, or those in PG_BINDIR (initdb
// into a temporary directory, a free port on 127.0.0.1, no fsync) and every
// test gets a fresh database on it, dropped when the test ends. With
// TEST_DATABASE_URL the databases are created on that server instead (the
// role needs CREATEDB).
//
// PG_BINDIR may point at any PostgreSQL installation's bin directory, such as
// the one scripts/install-deps.sh unpacks from the embedded PostgreSQL
// binaries on Maven Central to test a second major version (make
// test-pg-current). PGTEST_MAJOR, when set, is the major version the server
// must have: a test run meant for one version cannot silently use another.
//
// Under -short (the fast tier) every test that asks for a database or a
// server is skipped.
//
// Use it from TestMain so the server is stopped when the package's tests end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// EnvURL names the variable that points the tests at an existing server.
const EnvURL = "TEST_DATABASE_URL"

// EnvMajor names the variable that requires a major version of the server.
const EnvMajor = "PGTEST_MAJOR"

// installHint is printed when no server binaries are found.
const installHint = "install them with: apt-get install -y postgresql (or run scripts/install-deps.sh), or set " + EnvURL

// Server is a running PostgreSQL server owned by the test process.
type Server struct {
	// AdminURL connects as a superuser (or the TEST_DATABASE_URL role) to the
	// maintenance database.
	AdminURL string

	dataDir string
	bindir  string
	cred    *syscall.Credential
	owned   bool
	logFile string
	// opts are the server options of pg_ctl start, kept for Resume.
	opts string
}

// shared holds the one server per test process. It is package state on
// purpose: starting a server per test would cost seconds each, and Main
// stops it when the package's tests are done.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs the tests and stops the shared server afterwards.
func Main(m *testing.M) { testkit.Main(m, StopShared) }

// StopShared stops the shared server, if one was started. Main calls it;
// call it yourself when TestMain also has other harnesses to stop.
func StopShared() {
	if shared.srv != nil {
		shared.srv.Stop()
	}
}

// SharedServer returns the process-wide server, starting it on first use.
// It skips the test under -short (the fast tier starts no PostgreSQL), also
// with TEST_DATABASE_URL: the fast tier needs no server at all.
func SharedServer(t testing.TB) *Server {
	t.Helper()
	testkit.SkipIfShort(t, "PostgreSQL")
	shared.once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			shared.srv = &Server{AdminURL: u}
		} else {
			shared.srv, shared.err = Start()
		}
		if shared.err == nil {
			shared.err = checkMajor(shared.srv.AdminURL)
		}
	})
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.srv
}

// NewDatabase creates a fresh, empty database for the test on the shared
// server and returns its URL. The database is dropped when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return SharedServer(t).NewDatabase(t)
}

// NewDatabase creates a fresh, empty database for the test on this server
// (a test's own, from NewServer, to test across two servers) and returns
// its URL. The database is dropped when the test ends.
func (srv *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "t_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.AdminURL)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", redact(srv.AdminURL), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, srv.AdminURL)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return WithDatabase(srv.AdminURL, name)
}

// ServerVersionNum returns the server's server_version_num, e.g. 180007.
func ServerVersionNum(adminURL string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version_num").Scan(&v); err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// checkMajor fails when PGTEST_MAJOR is set and the server is another major.
func checkMajor(adminURL string) error {
	want := os.Getenv(EnvMajor)
	if want == "" {
		return nil
	}
	v, err := ServerVersionNum(adminURL)
	if err != nil {
		return fmt.Errorf("%s=%s: reading the server version: %w", EnvMajor, want, err)
	}
	if strconv.Itoa(v/10000) != want {
		return fmt.Errorf("%s=%s, but the server is PostgreSQL %d.%d (set PG_BINDIR to a PostgreSQL %s installation)", EnvMajor, want, v/10000, v%10000, want)
	}
	return nil
}

// WithDatabase returns the URL with its database replaced.
func WithDatabase(rawURL, db string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	u.Path = "/" + db
	return u.String()
}

// NewServer starts a server of the test's own, one it may stop (Halt,
// Resume) without disturbing other tests, with extra settings as StartWith
// takes them; it is removed when the test ends. It skips the test under
// -short.
func NewServer(t testing.TB, settings ...string) *Server {
	t.Helper()
	testkit.SkipIfShort(t, "PostgreSQL")
	s, err := StartWith(settings)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Start initialises and starts a new server in a temporary directory, for
// tools that run outside a test (make demo, make run); tests use NewServer
// or SharedServer.
func Start() (*Server, error) { return StartWith(nil) }

// StartWith is Start with extra server settings (name=value, as after
// postgres -c), for example "shared_preload_libraries=pg_stat_statements".
// Like the shared server, a server of another major than PGTEST_MAJOR is
// an error.
func StartWith(settings []string) (*Server, error) {
	bindir, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dataDir: filepath.Join(dir, "data"), bindir: bindir, owned: true, logFile: filepath.Join(dir, "server.log")}
	// PostgreSQL refuses to run as root; CI and the Debian setup run tests
	// as root, so the server runs as the postgres system user there.
	if os.Geteuid() == 0 {
		cred, err := postgresUser()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.cred = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		// An installation outside the system directories (PG_BINDIR into
		// the repository's .cache, say) may sit below a directory the
		// postgres user cannot enter: run a copy in the server's own
		// directory.
		if !strings.HasPrefix(bindir, "/usr/") {
			inst := filepath.Join(dir, "installation")
			if out, err := exec.Command("cp", "-a", filepath.Dir(bindir), inst).CombinedOutput(); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("copying the PostgreSQL installation of %s: %w\n%s", bindir, err, out)
			}
			s.bindir = filepath.Join(inst, filepath.Base(bindir))
		}
	}
	if out, err := s.run("initdb", "-D", s.dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := testkit.FreePort()
		if err != nil {
			return nil, err
		}
		opts := strings.Join([]string{
			"-p " + strconv.Itoa(port),
			"-c listen_addresses=127.0.0.1",
			"-c unix_socket_directories=" + dir,
			"-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
			"-c max_connections=100",
		}, " ")
		for _, kv := range settings {
			opts += " -c " + kv
		}
		out, err := s.run("pg_ctl", "-D", s.dataDir, "-l", s.logFile, "-o", opts, "-w", "-t", "60", "start")
		if err == nil {
			s.AdminURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			s.opts = opts
			if err := checkMajor(s.AdminURL); err != nil {
				s.Stop()
				return nil, err
			}
			return s, nil
		}
		log, _ := os.ReadFile(s.logFile)
		lastErr = fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, tail(string(log), 2000))
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// Stop stops a server started by Start and removes its files. It does
// nothing for a TEST_DATABASE_URL server.
func (s *Server) Stop() {
	if !s.owned {
		return
	}
	_, _ = s.run("pg_ctl", "-D", s.dataDir, "-m", "immediate", "-w", "stop")
	os.RemoveAll(filepath.Dir(s.dataDir))
}

// Halt stops a server started by Start as an administrator would (pg_ctl
// stop -m fast: sessions are terminated, running statements end with an
// error) and keeps its data, so Resume can start it again on the same port.
func (s *Server) Halt() error { return s.stop("Halt", "fast") }

// stop runs pg_ctl stop in mode for op (Halt, Crash) on a server of the
// test's own.
func (s *Server) stop(op, mode string) error {
	if !s.owned {
		return errors.New("pgtest: " + op + " needs a server started by Start, not " + EnvURL)
	}
	if out, err := s.run("pg_ctl", "-D", s.dataDir, "-m", mode, "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop -m %s: %w\n%s", mode, err, out)
	}
	return nil
}

// Crash stops a server started by Start at once (pg_ctl stop -m
// immediate: every backend exits without cleaning up, as after kill -9 of
// the postmaster) and keeps its data; Resume starts it again, with crash
// recovery. Unlike Halt it never lets a statement waiting for a lock run:
// under a fast stop the lock holder's session may end, releasing its
// locks, a moment before the waiter is told to end, and a short statement
// then completes normally. A test that needs the stop to strike a waiting
// statement uses Crash.
//
// The server runs with synchronous_commit off, so Crash checkpoints first:
// what was committed before the crash survives it, as on a server that
// syncs its commits.
func (s *Server) Crash() error {
	if !s.owned {
		return s.stop("Crash", "immediate") // its error
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.AdminURL)
	if err != nil {
		return fmt.Errorf("pgtest: Crash: connect: %w", err)
	}
	_, err = conn.Exec(ctx, "CHECKPOINT")
	_ = conn.Close(ctx)
	if err != nil {
		return fmt.Errorf("pgtest: Crash: CHECKPOINT: %w", err)
	}
	return s.stop("Crash", "immediate")
}

// Resume starts a server stopped by Halt or Crash again, on the same port.
func (s *Server) Resume() error {
	if !s.owned {
		return errors.New("pgtest: Resume needs a server started by Start, not " + EnvURL)
	}
	if out, err := s.run("pg_ctl", "-D", s.dataDir, "-l", s.logFile, "-o", s.opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(s.logFile)
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, tail(string(log), 2000))
	}
	return nil
}

func (s *Server) run(tool string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bindir, tool), args...)
	cmd.Dir = filepath.Dir(s.dataDir)
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd.CombinedOutput()
}

// FindBinDir locates the directory of initdb and pg_ctl: PG_BINDIR, Debian's
// /usr/lib/postgresql/<newest>/bin, or PATH.
func FindBinDir() (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	if len(matches) > 0 {
		return filepath.Dir(matches[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found; " + installHint)
}

func versionOf(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres system user to own the test server (created by the Debian postgresql package): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
