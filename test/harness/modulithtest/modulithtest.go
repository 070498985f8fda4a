// Package modulithtest runs a real Spring Modulith 2.0 application (test/relays/modulith: Spring
// Boot 4.0, the JDBC event publication registry) on a PostgreSQL database, for the tests of what
// the exporter reads from the registry's table event_publication.
//
// The application publishes an OrderPlaced event to two listeners: shipping's completes (its
// publication gets a completion_date and status COMPLETED), billing's throws (its publication
// stays incomplete with status FAILED). It does so once per startup order (Options.StartupOrders)
// and on each POST /orders (App.PlaceOrder), and runs until stopped. The registry creates its
// table at start-up (schema v2, spring.modulith.events.jdbc.schema-initialization.enabled).
//
//	dsn := pgtest.NewDatabase(t)
//	app := modulithtest.New(t, modulithtest.Options{DSN: dsn})
//	pubs, err := modulithtest.WaitPublications(ctx, dsn, time.Minute,
//		func(p []modulithtest.Publication) bool { return len(p) == 2 })
//	err = app.PlaceOrder(ctx, "order-2") // two more publications
//
// The jar is built once with Maven and cached (testkit.MavenBuild: <repo>/.cache/relays, or
// $RELAYTEST_CACHE_DIR; extra Maven arguments from $RELAYTEST_MVN_ARGS).
package modulithtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Project is the application's Maven project, relative to the repository root.
const Project = "test/relays/modulith"

// The listeners' ids as the registry records them (event_publication.listener_id).
const (
	// ListenerCompletes is shipping's listener: its publications complete.
	ListenerCompletes = "io.workflowexporter.modulith.shipping.Shipping.on(io.workflowexporter.modulith.orders.OrderPlaced)"
	// ListenerFails is billing's listener: it throws, its publications stay incomplete (FAILED).
	ListenerFails = "io.workflowexporter.modulith.billing.Billing.on(io.workflowexporter.modulith.orders.OrderPlaced)"
	// EventType is event_publication.event_type of the application's event.
	EventType = "io.workflowexporter.modulith.orders.OrderPlaced"
)

// Build returns the path of the application's jar, building it with Maven when the cache has none
// for the current pom and sources.
func Build(ctx context.Context) (string, error) {
	return relaytest.BuildJar(ctx, "modulith-app", Project)
}

// DefaultJVMArgs start the application fast on small machines: C1 only, serial GC, a small heap.
var DefaultJVMArgs = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"}

// DefaultStartTimeout bounds the wait for GET /health: 6-10 s on two idle cores.
const DefaultStartTimeout = 120 * time.Second

// Options configure Start. DSN is required.
type Options struct {
	// DSN is the database, postgres://user:password@host:port/db (the password goes through the
	// environment, SPRING_DATASOURCE_PASSWORD).
	DSN string
	// StartupOrders is how many orders the application places at start (default 1; negative:
	// none).
	StartupOrders int
	// ExtraArgs are appended to the Spring Boot command line, e.g.
	// "--spring.modulith.events.completion-mode=delete".
	ExtraArgs []string
	// JVMArgs replace DefaultJVMArgs when not nil.
	JVMArgs []string
	// StartTimeout defaults to DefaultStartTimeout.
	StartTimeout time.Duration
}

// App is the running application.
type App struct {
	*testkit.Server
	tmp string
}

// New is Start for a test: it skips under -short, fails the test on error and stops the
// application when the test ends.
func New(t testing.TB, opts Options) *App {
	t.Helper()
	return testkit.ForTest(t, "the Spring Modulith application (a JVM)", 10*time.Minute,
		func(ctx context.Context) (*App, error) { return Start(ctx, opts) }, func(a *App) { _ = a.Stop() })
}

// Start builds the application (or takes it from the cache), runs it on a free 127.0.0.1 port
// against the database and waits until GET /health answers.
func Start(ctx context.Context, opts Options) (*App, error) {
	u, err := url.Parse(opts.DSN)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" || len(u.Path) < 2 {
		return nil, errors.New("modulithtest: Options.DSN must look like postgres://user:password@host:port/db")
	}
	jar, err := Build(ctx)
	if err != nil {
		return nil, err
	}
	port, err := testkit.FreePort()
	if err != nil {
		return nil, err
	}
	jvm := DefaultJVMArgs
	if opts.JVMArgs != nil {
		jvm = opts.JVMArgs
	}
	java, tmp, args, err := testkit.JavaJar("modulithtest", jar, jvm)
	if err != nil {
		return nil, err
	}
	orders := opts.StartupOrders
	if orders == 0 {
		orders = 1
	} else if orders < 0 {
		orders = 0
	}
	args = append(args,
		"--server.port="+strconv.Itoa(port),
		"--server.address=127.0.0.1",
		"--spring.datasource.url=jdbc:postgresql://"+u.Host+u.Path,
		"--modulith-app.startup-orders="+strconv.Itoa(orders),
	)
	env := []string{}
	if u.User != nil {
		args = append(args, "--spring.datasource.username="+u.User.Username())
		if pw, ok := u.User.Password(); ok {
			env = append(env, "SPRING_DATASOURCE_PASSWORD="+pw)
		}
	}
	args = append(args, opts.ExtraArgs...)
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	s, err := testkit.StartServer(ctx, testkit.ServerOptions{
		Name: "modulith-app", Path: java, Args: args, Addr: fmt.Sprintf("127.0.0.1:%d", port), Env: env, Dir: tmp,
		Ready: "/health", ReadyTimeout: timeout,
	})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("modulithtest: %w", err)
	}
	return &App{Server: s, tmp: tmp}, nil
}

// Stop sends SIGTERM and waits (testkit.Server.Stop: killed after 10 s). It returns nil when the
// JVM exited after running its shutdown hooks, which it reports with status 143 (128 + SIGTERM).
// It removes the application's temporary directory.
func (a *App) Stop() error {
	err := a.Server.Stop()
	_ = os.RemoveAll(a.tmp)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 143 {
		return nil
	}
	return err
}

// PlaceOrder asks the application to place an order (POST /orders?id=ID): it publishes one
// OrderPlaced event to both listeners.
func (a *App) PlaceOrder(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL+"/orders?id="+url.QueryEscape(id), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("modulithtest: POST /orders: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("modulithtest: POST /orders: %s: %s", resp.Status, body)
	}
	return nil
}

// Publication is a row of event_publication.
type Publication struct {
	ID, ListenerID, EventType, SerializedEvent string
	PublicationDate                            time.Time
	CompletionDate                             *time.Time
	// Status is COMPLETED, FAILED, PROCESSING, PUBLISHED or RESUBMITTED (schema v2).
	Status               string
	CompletionAttempts   int
	LastResubmissionDate *time.Time
}

// Completed reports whether the publication has a completion date.
func (p Publication) Completed() bool { return p.CompletionDate != nil }

// Publications reads event_publication, oldest first (schema v2, or v1
// without the v2 columns: Status "", CompletionAttempts 0).
func Publications(ctx context.Context, dsn string) ([]Publication, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	// The v2 columns through the row's JSON, so a table of schema v1
	// (use-legacy-structure) reads too, with them empty.
	rows, err := c.Query(ctx, `SELECT id::text, listener_id, event_type, serialized_event, publication_date, completion_date,
	       coalesce(to_jsonb(p)->>'status', ''), coalesce((to_jsonb(p)->>'completion_attempts')::int, 0),
	       (to_jsonb(p)->>'last_resubmission_date')::timestamptz
	  FROM event_publication p ORDER BY publication_date, listener_id`)
	if err != nil {
		return nil, fmt.Errorf("modulithtest: reading event_publication: %w", err)
	}
	var out []Publication
	for rows.Next() {
		var p Publication
		if err := rows.Scan(&p.ID, &p.ListenerID, &p.EventType, &p.SerializedEvent, &p.PublicationDate, &p.CompletionDate,
			&p.Status, &p.CompletionAttempts, &p.LastResubmissionDate); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// WaitPublications polls event_publication every 100 ms until cond holds for its rows (the
// table may not exist yet: the application creates it at start-up).
func WaitPublications(ctx context.Context, dsn string, timeout time.Duration, cond func([]Publication) bool) ([]Publication, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []Publication
	var lastErr error
	for {
		p, err := Publications(ctx, dsn)
		if err == nil {
			last = p
			if cond(p) {
				return p, nil
			}
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("modulithtest: event_publication: condition not met within %s (last error: %v, rows: %+v)", timeout, lastErr, last) //nolint:errorlint // lastErr is nil when the rows were read and did not satisfy cond
		case <-time.After(100 * time.Millisecond):
		}
	}
}
