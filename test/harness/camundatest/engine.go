package camundatest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// DefaultStartTimeout bounds how long Start waits for GET /engine-rest/version to answer 200.
// A cold start takes 10-20 s on two idle cores; the margin covers a loaded CI machine.
const DefaultStartTimeout = 180 * time.Second

// Options configure Start. The zero value (plus a Flavor) starts an engine without authentication.
type Options struct {
	Flavor Flavor
	// Username and Password, when Username is set, turn on HTTP basic auth on /engine-rest/* and
	// create that user as the engine's admin user.
	Username, Password string
	// TimeZone is the JVM's user.timezone (dates in responses use its offset). Empty: the machine's.
	TimeZone string
	// StartTimeout defaults to DefaultStartTimeout.
	StartTimeout time.Duration
	// ExtraArgs are appended to the Spring Boot command line, e.g. "--logging.level.root=INFO";
	// for FlavorCIBSeven to the test driver's: "--job-executor=false", "--clock-offset-ms=N".
	ExtraArgs []string
	// HistoryLevel, when set (none, activity, audit, full), is the engine's history level (the
	// flavor's <PropertyPrefix>.history-level, cibseven's --history-level; the test engines default
	// to full). The engine records its level in its database at the first start and refuses another
	// one later, so each level needs a database of its own (PostgresURL, or the default H2 in memory).
	HistoryLevel string
	// PostgresURL, when set (postgres://user:password@host:port/db), runs the engine on that
	// PostgreSQL database instead of H2 in memory; the engine creates its tables there.
	// FlavorCIBSeven (Flavor.NeedsPostgres) requires it.
	PostgresURL string
	// JVMArgs, when not nil, replace DefaultJVMArgs (the JIT, GC and heap flags), e.g.
	// []string{"-Xmx1g"} for a benchmark that wants the JVM's default, production-like JIT and GC.
	// The harness's own -Djava.io.tmpdir and -Duser.timezone are added either way.
	JVMArgs []string
}

// DefaultJVMArgs start the engine fast on small machines: C1 only, serial GC, bounded heap. The
// engine's work in tests is tiny, so peak throughput does not matter; benchmarks replace them
// through Options.JVMArgs.
var DefaultJVMArgs = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m"}

// postgresArgs turns a postgres:// URL into the Spring Boot datasource arguments.
func postgresArgs(raw string) ([]string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return nil, errors.New("camundatest: PostgresURL must look like postgres://user:password@host:port/db")
	}
	args := []string{
		"--spring.datasource.url=jdbc:postgresql://" + u.Host + u.Path,
		"--spring.datasource.driver-class-name=org.postgresql.Driver",
	}
	if u.User != nil {
		args = append(args, "--spring.datasource.username="+u.User.Username())
		if pw, ok := u.User.Password(); ok {
			args = append(args, "--spring.datasource.password="+pw)
		}
	}
	return args, nil
}

// appArgs are the arguments after -jar <jar>: Spring Boot properties for the REST flavors, the test
// driver's own for FlavorCIBSeven (--port, --address, --jdbc-url, --jdbc-username, --jdbc-password,
// --history-level, plus what ExtraArgs add: --job-executor=false, --clock-offset-ms=N).
func appArgs(opts Options, port int) ([]string, error) {
	if opts.Flavor == FlavorCIBSeven {
		if opts.PostgresURL == "" {
			return nil, errors.New("camundatest: the cibseven engine runs on PostgreSQL only: set Options.PostgresURL (e.g. from pgtest.NewDatabase)")
		}
		if opts.Username != "" {
			return nil, errors.New("camundatest: the cibseven test driver has no authentication: leave Options.Username empty")
		}
		jdbc, err := postgresArgs(opts.PostgresURL)
		if err != nil {
			return nil, err
		}
		args := []string{"--port=" + strconv.Itoa(port), "--address=127.0.0.1"}
		for _, a := range jdbc { // the same values, under the driver's names
			a = strings.Replace(a, "--spring.datasource.", "--jdbc-", 1)
			if !strings.HasPrefix(a, "--jdbc-driver-class-name=") {
				args = append(args, a)
			}
		}
		if opts.HistoryLevel != "" {
			args = append(args, "--history-level="+opts.HistoryLevel)
		}
		return append(args, opts.ExtraArgs...), nil
	}
	args := []string{"--server.port=" + strconv.Itoa(port), "--server.address=127.0.0.1"}
	if opts.Username != "" {
		args = append(args,
			"--test-engine.basic-auth=true",
			"--test-engine.admin-user="+opts.Username,
			"--test-engine.admin-password="+opts.Password,
		)
	}
	if opts.PostgresURL != "" {
		pg, err := postgresArgs(opts.PostgresURL)
		if err != nil {
			return nil, err
		}
		args = append(args, pg...)
	}
	if opts.HistoryLevel != "" {
		args = append(args, "--"+opts.Flavor.PropertyPrefix()+".history-level="+opts.HistoryLevel)
	}
	return append(args, opts.ExtraArgs...), nil
}

// Engine is a running test engine. Stop it when done (Shared engines are stopped by Main).
type Engine struct {
	// BaseURL is the REST root, http://127.0.0.1:PORT/engine-rest (no trailing slash).
	BaseURL string
	Flavor  Flavor
	// Version is what GET /version returned, e.g. "7.24.0", "7.19.0", "1.0.3" (Operaton) or
	// "2.0.0" (CIB seven).
	Version string
	Port    int
	// PID of the JVM (leader of its own process group).
	PID int
	// Username and Password are set when basic auth is on.
	Username, Password string
	// StartupTime is how long the JVM took from exec to the first 200 from /version.
	StartupTime time.Duration
	// LogPath is the file holding the JVM's stdout and stderr (removed by Stop).
	LogPath string

	cmd      *exec.Cmd
	tmpDir   string
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Client returns a REST client for this engine, with its credentials if auth is on.
func (e *Engine) Client() *engineclient.Client {
	return &engineclient.Client{BaseURL: e.BaseURL, Username: e.Username, Password: e.Password}
}

// LogTail returns up to the last n bytes of the engine's output.
func (e *Engine) LogTail(n int) string {
	b, err := os.ReadFile(e.LogPath)
	if err != nil {
		return fmt.Sprintf("(engine log unavailable: %v)", err)
	}
	return tail(b, n)
}

// Exited reports whether the JVM has exited.
func (e *Engine) Exited() bool { return testkit.Closed(e.exited) }

// Stop kills the JVM's process group, waits for it to exit and removes its temporary files.
// It is safe to call more than once and from several goroutines.
func (e *Engine) Stop() {
	e.stopOnce.Do(func() {
		if e.cmd != nil && e.cmd.Process != nil {
			_ = testkit.KillGroup(e.cmd.Process)
			select {
			case <-e.exited:
			case <-time.After(30 * time.Second):
			}
		}
		if e.tmpDir != "" {
			_ = os.RemoveAll(e.tmpDir)
		}
	})
}

// Start builds (or takes from the cache) the flavor's jar, runs it on a free 127.0.0.1 port and
// waits until GET /engine-rest/version answers 200. ctx bounds the build and the wait, not the
// engine's life: call Stop. On failure the error carries the tail of the engine's output and
// nothing is left running.
func Start(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Flavor == "" {
		opts.Flavor = FlavorCamunda
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if _, err := appArgs(opts, 0); err != nil { // before a build: options this flavor cannot take
		return nil, err
	}
	jar, err := Build(ctx, opts.Flavor)
	if err != nil {
		return nil, err
	}
	java, err := requireTool("java", "Java 17")
	if err != nil {
		return nil, err
	}
	// A free port can be taken by someone else between probing and the JVM binding it: retry then.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		e, err := startOnce(ctx, java, jar, opts)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if !errors.Is(err, errPortInUse) {
			break
		}
	}
	return nil, lastErr
}

var errPortInUse = errors.New("port already in use")

const pidFile = "jvm.pid"

// removeOrphanedTempDirs removes the temp dirs of engines whose JVM is gone without Stop (the test
// process was killed; the kernel then killed the JVM via Pdeathsig). Dirs without a pid file
// belong to engines still starting and are left alone.
func removeOrphanedTempDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "camundatest-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, pidFile))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && !testkit.ProcessAlive(pid) {
			_ = os.RemoveAll(d)
		}
	}
}

func startOnce(ctx context.Context, java, jar string, opts Options) (*Engine, error) {
	port, err := testkit.FreePort()
	if err != nil {
		return nil, fmt.Errorf("camundatest: finding a free port: %w", err)
	}
	removeOrphanedTempDirs()
	tmp, err := os.MkdirTemp("", "camundatest-"+string(opts.Flavor)+"-")
	if err != nil {
		return nil, fmt.Errorf("camundatest: %w", err)
	}
	logPath := filepath.Join(tmp, "engine.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("camundatest: %w", err)
	}
	defer logFile.Close()

	jvm := DefaultJVMArgs
	if opts.JVMArgs != nil {
		jvm = opts.JVMArgs
	}
	args := append(append([]string{}, jvm...), "-Djava.io.tmpdir="+tmp)
	if opts.TimeZone != "" {
		args = append(args, "-Duser.timezone="+opts.TimeZone)
	}
	app, err := appArgs(opts, port)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	args = append(append(args, "-jar", jar), app...)

	cmd := exec.Command(java, args...)
	cmd.Dir = tmp
	cmd.Stdout, cmd.Stderr = logFile, logFile
	testkit.OwnProcessGroup(cmd)
	e := &Engine{
		BaseURL:  fmt.Sprintf("http://127.0.0.1:%d/engine-rest", port),
		Flavor:   opts.Flavor,
		Port:     port,
		Username: opts.Username,
		Password: opts.Password,
		LogPath:  logPath,
		cmd:      cmd,
		tmpDir:   tmp,
		exited:   make(chan struct{}),
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("camundatest: starting %s: %w", java, err)
	}
	e.PID = cmd.Process.Pid
	_ = os.WriteFile(filepath.Join(tmp, pidFile), []byte(strconv.Itoa(e.PID)), 0o644)
	go func() {
		e.waitErr = cmd.Wait()
		close(e.exited)
	}()

	fail := func(format string, a ...any) (*Engine, error) {
		msg := fmt.Sprintf(format, a...)
		logTail := e.LogTail(8000)
		e.Stop()
		err := fmt.Errorf("camundatest: %s engine (java -jar %s, port %d): %s\n--- engine output (tail) ---\n%s",
			opts.Flavor, jar, port, msg, logTail)
		if strings.Contains(logTail, "already in use") {
			return nil, fmt.Errorf("%w: %w", errPortInUse, err)
		}
		return nil, err
	}

	deadline := time.Now().Add(opts.StartTimeout)
	client := &http.Client{Timeout: 5 * time.Second}
	var lastProbe string
	for {
		select {
		case <-e.exited:
			return fail("JVM exited before answering (%v)", e.waitErr)
		case <-ctx.Done():
			return fail("start cancelled: %v", ctx.Err())
		default:
		}
		if time.Now().After(deadline) {
			return fail("GET /version did not answer 200 within %s (last: %s)", opts.StartTimeout, lastProbe)
		}
		v, probe := probeVersion(ctx, client, e)
		if v != "" {
			e.Version = v
			e.StartupTime = time.Since(started)
			return e, nil
		}
		lastProbe = probe
		time.Sleep(250 * time.Millisecond)
	}
}

func probeVersion(ctx context.Context, client *http.Client, e *Engine) (version, problem string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.BaseURL+"/version", nil)
	if err != nil {
		return "", err.Error()
	}
	if e.Username != "" {
		req.SetBasicAuth(e.Username, e.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Sprintf("HTTP %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Version == "" {
		return "", fmt.Sprintf("HTTP 200 with unexpected body %q", body)
	}
	return v.Version, ""
}
