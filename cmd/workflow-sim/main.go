// Command workflow-sim runs a workload of idempotent external-task workers
// against a real Camunda engine and real PostgreSQL worker tables, healthy
// by default, and injects the failure windows of at-least-once workers by
// name, so the exporter's metrics and alerts can be seen doing their job.
// `make demo` runs it with everything else; see package sim for what each
// part does.
//
//	workflow-sim run [--engine URL] --database orders=DSN --lane orders [--lane billing@other] [--deliver orders=other] [--relay-lane cdc@other] ...
//	workflow-sim faults
//	workflow-sim inject FAULT TARGET [--sim URL]
//	workflow-sim clear FAULT TARGET [--sim URL]
//	workflow-sim status [--sim URL]
//	workflow-sim webhook [--listen ADDR]
//
// webhook is a receiver for Alertmanager's webhook notifications that prints
// each alert (the compose stack's notifications service; make demo prints
// the same way).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/workflow-exporter/workflow-exporter/sim"
	"github.com/workflow-exporter/workflow-exporter/sim/notify"
)

// DefaultControl is the control endpoint's default address.
const DefaultControl = "127.0.0.1:7841"

func main() {
	app := kingpin.New("workflow-sim", "A workload of idempotent Camunda external-task workers with injectable faults.\n\nFaults (target in parentheses):\n"+sim.FaultHelp())
	app.HelpFlag.Short('h')

	run := app.Command("run", "Run the workload until interrupted.")
	engineURL := run.Flag("engine", "Camunda REST root the workers use; without it each lane's workers take their commands from the lane's own feed and the faults that act through the engine are refused.").String()
	engineName := run.Flag("engine-name", "The engine label of the exporter's config (written to processed-job rows).").Default("main").String()
	dbs := run.Flag("database", "A worker database, NAME=DSN (repeatable). The simulator writes its four worker tables only.").StringMap()
	dbEnvs := run.Flag("database-env", "A worker database whose DSN is in an environment variable, NAME=VAR (repeatable).").StringMap()
	lanes := run.Flag("lane", "A lane, NAME or NAME@DATABASE (repeatable; default: one lane \"orders\" on the only database).").Strings()
	deliver := run.Flag("deliver", "LANE=DATABASE: the lane's published outbox events are delivered to the inbox of DATABASE (message id: the event id), a delivery as the exporter's deliveries[] watch it (repeatable; messages-lost acts on it).").StringMap()
	relayLanes := run.Flag("relay-lane", "A relay lane, NAME or NAME@DATABASE (repeatable): its outbox is drained by change data capture, pg_recvlogical on the lane's replication slot sim_NAME (the server needs wal_level=logical; the slot is dropped at exit), its events in its own Debezium-shaped table sim_NAME_outbox.").Strings()
	recvLogical := run.Flag("pg-recvlogical", "The pg_recvlogical of the relay lanes (default: from PATH or /usr/lib/postgresql/*/bin).").String()
	listen := run.Flag("listen", "Control endpoint address (127.0.0.1 only).").Default(DefaultControl).String()
	engineProxy := run.Flag("engine-proxy", "Serve a proxy to the engine for the exporter at this address (engine-down, engine-500 act on it).").String()
	dbProxies := run.Flag("database-proxy", "Serve a TCP proxy to a database for the exporter, NAME=ADDR (repeatable; database-down acts on it).").StringMap()
	interval := run.Flag("interval", "How often each lane starts a process and delivers a message.").Default("2s").Duration()
	workers := run.Flag("workers", "Workers per lane.").Default("2").Int()
	lock := run.Flag("lock", "Lock duration of the workers' fetchAndLock.").Default("20s").Duration()
	initial := run.Flag("fault", "A fault to inject at start, FAULT@TARGET or FAULT@TARGET+DELAY (repeatable).").Strings()

	app.Command("faults", "List the faults.")
	sim1 := app.Flag("sim", "Control endpoint of a running simulator.").Default("http://" + DefaultControl).String()
	inject := app.Command("inject", "Inject a fault into a running simulator.")
	injectFault := inject.Arg("fault", "Fault name (see `workflow-sim faults`).").Required().String()
	injectTarget := inject.Arg("target", "Lane, or database for database-down; none for the engine faults.").String()
	clear := app.Command("clear", "Clear a fault of a running simulator.")
	clearFault := clear.Arg("fault", "Fault name.").Required().String()
	clearTarget := clear.Arg("target", "Lane or database.").String()
	app.Command("status", "Print a running simulator's status.")
	webhook := app.Command("webhook", "Receive Alertmanager's webhook notifications and print each alert, until interrupted.")
	webhookListen := webhook.Flag("listen", "Address to listen on; deploy/alertmanager.yml sends to 127.0.0.1:5001 (/pager, /ticket).").Default("127.0.0.1:5001").String()

	cmd := kingpin.MustParse(app.Parse(os.Args[1:]))
	var err error
	switch cmd {
	case run.FullCommand():
		err = runSim(runFlags{engineURL: *engineURL, engineName: *engineName, dbs: *dbs, dbEnvs: *dbEnvs, lanes: *lanes, deliver: *deliver, relayLanes: *relayLanes, recvLogical: *recvLogical,
			listen: *listen, engineProxy: *engineProxy, dbProxies: *dbProxies, interval: *interval, workers: *workers, lock: *lock, initial: *initial})
	case "faults":
		fmt.Print(sim.FaultHelp())
	case inject.FullCommand():
		err = control(*sim1, http.MethodPost, *injectFault, *injectTarget)
	case clear.FullCommand():
		err = control(*sim1, http.MethodDelete, *clearFault, *clearTarget)
	case "status":
		err = status(*sim1)
	case webhook.FullCommand():
		err = printNotifications(*webhookListen)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "workflow-sim:", err)
		os.Exit(1)
	}
}

type runFlags struct {
	engineURL, engineName, listen, engineProxy, recvLogical string
	dbs, dbEnvs, dbProxies, deliver                         map[string]string
	lanes, relayLanes, initial                              []string
	interval, lock                                          time.Duration
	workers                                                 int
}

func runSim(f runFlags) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		return fmt.Errorf("--listen %q: the control endpoint binds to 127.0.0.1 only", f.listen)
	}
	databases := map[string]string{}
	for name, dsn := range f.dbs {
		databases[name] = dsn
	}
	for name, env := range f.dbEnvs {
		v := os.Getenv(env)
		if v == "" {
			return fmt.Errorf("--database-env %s=%s: the environment variable is not set", name, env)
		}
		databases[name] = v
	}
	if len(databases) == 0 {
		return errors.New("no database: give --database NAME=DSN or --database-env NAME=VAR")
	}
	var names []string
	for n := range databases {
		names = append(names, n)
	}
	sort.Strings(names)
	var lanes []sim.Lane
	for _, spec := range append(append([]string{}, f.lanes...), f.relayLanes...) {
		flag := "--lane"
		relay := len(lanes) >= len(f.lanes)
		if relay {
			flag = "--relay-lane"
		}
		name, db, found := strings.Cut(spec, "@")
		if !found {
			if len(names) > 1 {
				return fmt.Errorf("%s %s: name its database (NAME@DATABASE), there are %d", flag, spec, len(names))
			}
			db = names[0]
		}
		lanes = append(lanes, sim.Lane{Name: name, Database: db, Relay: relay})
	}
	if len(lanes) == 0 {
		lanes = []sim.Lane{{Name: "orders", Database: names[0]}}
	}
	for lane, consumer := range f.deliver {
		i := slices.IndexFunc(lanes, func(l sim.Lane) bool { return l.Name == lane })
		if i < 0 {
			return fmt.Errorf("--deliver %s=%s: no lane %s", lane, consumer, lane)
		}
		lanes[i].Consumer = consumer
	}
	s, err := sim.New(ctx, sim.Config{EngineURL: f.engineURL, EngineName: f.engineName, Databases: databases, Lanes: lanes,
		Interval: f.interval, Workers: f.workers, LockDuration: f.lock, EngineProxy: f.engineProxy, DatabaseProxies: f.dbProxies,
		RecvLogical: f.recvLogical, Logger: logger})
	if err != nil {
		return err
	}
	defer s.Close()
	l, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("control endpoint: %w", err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	logger.Info("control endpoint", "url", "http://"+l.Addr().String(), "engine_proxy", s.EngineProxyAddr())
	for _, spec := range f.initial {
		fault, rest, _ := strings.Cut(spec, "@")
		target, delay, _ := strings.Cut(rest, "+")
		d := time.Duration(0)
		if delay != "" {
			if d, err = time.ParseDuration(delay); err != nil {
				return fmt.Errorf("--fault %s: %q is not a duration", spec, delay)
			}
		}
		if _, err := sim.LookupFault(fault); err != nil {
			return fmt.Errorf("--fault %s: %w", spec, err)
		}
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			if err := s.Inject(ctx, fault, target); err != nil {
				logger.Error("scheduled fault not injected", "fault", fault, "target", target, "err", err)
			}
		}()
	}
	return s.Run(ctx)
}

func control(base, method, fault, target string) error {
	if _, err := sim.LookupFault(fault); err != nil {
		return err
	}
	u := strings.TrimRight(base, "/") + "/faults/" + url.PathEscape(fault)
	if target != "" {
		u += "?target=" + url.QueryEscape(target)
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("no simulator at %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s", strings.TrimSpace(string(b)))
	}
	return nil
}

// printNotifications serves notify.Printer on listen until SIGINT or
// SIGTERM.
func printNotifications(listen string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: &notify.Printer{W: os.Stdout}, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	fmt.Fprintf(os.Stderr, "printing Alertmanager's notifications sent to http://%s/<receiver>\n", l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func status(base string) error {
	resp, err := http.Get(strings.TrimRight(base, "/") + "/")
	if err != nil {
		return fmt.Errorf("no simulator at %s: %w", base, err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(os.Stdout, resp.Body)
	return err
}
