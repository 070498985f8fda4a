// Command localrun is `make run`: it starts a throwaway PostgreSQL from the
// Debian server binaries, loads the reference schema, the exporter's indexes
// and sample rows, starts a Camunda 7.24 engine (when Java and Maven are
// there), keeps a small simulated workload of workers, outbox publisher and
// inbox going so the numbers move, and runs the exporter binary against all
// of it until Ctrl-C. Everything is removed on exit.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

func main() {
	bin := flag.String("exporter", "bin/workflow-exporter", "exporter binary to run")
	addr := flag.String("listen", "127.0.0.1:7840", "address for the exporter (a free port is used if this one is taken)")
	withCamunda := flag.Bool("camunda", true, "also start a Camunda engine with simulated workers (needs Java 17 and Maven)")
	flag.Parse()
	if err := run(*bin, *addr, *withCamunda); err != nil {
		fmt.Fprintln(os.Stderr, "localrun:", err)
		os.Exit(1)
	}
}

func run(bin, addr string, withCamunda bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))

	srv, err := pgtest.Start()
	if err != nil {
		return err
	}
	defer srv.Stop()
	admin, err := pgx.Connect(ctx, srv.AdminURL)
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE orders"); err != nil {
		return err
	}
	admin.Close(ctx)
	dsn := pgtest.WithDatabase(srv.AdminURL, "orders")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, f := range []string{"deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql", "test/localrun/sample.sql"} {
		if err := pgtest.ExecFile(ctx, conn, f, nil); err != nil {
			return err
		}
	}

	dir, err := os.MkdirTemp("", "localrun-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := "databases:\n  - name: orders\n    dsn_env: LOCALRUN_DSN\n    min_interval: 5s\n"
	var engine *camundatest.Engine
	if withCamunda {
		engine, err = startCamunda(ctx, logger)
		if err != nil {
			fmt.Fprintf(os.Stderr, "  Camunda engine not started (%v); continuing with the database side only.\n", err)
		} else {
			defer engine.Stop()
			cfg += fmt.Sprintf("camunda:\n  - name: main\n    url: %s\n    min_interval: 5s\n    topics: [%s]\n", engine.BaseURL, demoTopic)
		}
	}
	cfgFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
	} else if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		addr = l.Addr().String()
		l.Close()
	}
	cmd := exec.CommandContext(ctx, bin, "--config.file", cfgFile, "--web.listen-address", addr)
	cmd.Env = append(os.Environ(), "LOCALRUN_DSN="+dsn)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s (run `make build` first): %w", bin, err)
	}
	camundaURL := "(not started)"
	if engine != nil {
		camundaURL = engine.BaseURL
		// The workers get their own connection: pgx connections are not
		// shared between goroutines.
		wconn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer wconn.Close(context.Background())
		go simulateWorkers(ctx, engine, wconn, logger)
	}
	fmt.Printf("\n  PostgreSQL: %s\n  Camunda REST: %s\n  Exporter config: %s\n  Metrics: http://%s/metrics\n  Press Ctrl-C to stop and remove everything.\n\n", dsn, camundaURL, cfgFile, addr)

	go simulate(ctx, conn, logger)
	err = cmd.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// simulate keeps a small workload going: events are created and published,
// records complete, messages arrive and finish.
func simulate(ctx context.Context, conn *pgx.Conn, logger *slog.Logger) {
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		stmts := []string{
			fmt.Sprintf(`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status)
				VALUES (gen_random_uuid(), 'Order', 'order-%d', 'OrderFulfillmentSubmitted', 'sim-%d', '{}', 'PENDING')`, 2000+n, n),
			`UPDATE event_outbox SET status = 'PUBLISHED', published_at = now()
				WHERE published_at IS NULL AND status = 'PENDING' AND created_at < now() - interval '4 seconds' AND random() < 0.8`,
			fmt.Sprintf(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status)
				VALUES ('ORDER_FULFILLMENT_SUBMISSION', 'order-%d:attempt-1', 'order-%d', 'sim-task-%d', 'STARTED')`, 2000+n, 2000+n, n),
			`UPDATE workflow_idempotency_record SET status = 'COMPLETED', updated_at = now(), completed_at = now()
				WHERE status = 'STARTED' AND job_reference LIKE 'sim-%' AND updated_at < now() - interval '5 seconds'`,
			fmt.Sprintf(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status)
				VALUES ('kafka', 'sim-%d', 'OrderValidated', 'order-%d', 'RECEIVED')`, n, 2000+n),
			`UPDATE message_inbox SET processing_status = 'PROCESSED', processed_at = now()
				WHERE processing_status = 'RECEIVED' AND message_id LIKE 'sim-%' AND received_at < now() - interval '3 seconds'`,
		}
		if rand.IntN(4) == 0 {
			stmts = append(stmts, fmt.Sprintf(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status)
				VALUES ('main', 'sim-task-%d', 'pi-sim', 'submitFulfillment', 'sim-worker', 'COMPLETED')`, n))
		}
		for _, s := range stmts {
			if _, err := conn.Exec(ctx, s); err != nil && ctx.Err() == nil {
				logger.Warn("simulated workload", "err", err)
			}
		}
	}
}
