package relaytest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// shared is the one wal_level=logical server of a test process, for
// packages with many short relay tests (a server start costs seconds).
// Package state on purpose, as pgtest's shared server; StopShared stops
// it.
var shared struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

// SharedLogicalDatabase creates a fresh database for the test on a
// wal_level=logical server shared by the test process (started on first
// use with LogicalSettings, stopped by StopShared), and drops it, with its
// inactive slots, when the test ends. Slots belong to the server: name them
// per test, and stop the test's relays before it ends (the New* helpers
// do). It skips the test under -short.
func SharedLogicalDatabase(t testing.TB) string {
	t.Helper()
	testkit.SkipIfShort(t, "PostgreSQL")
	shared.once.Do(func() { shared.srv, shared.err = pgtest.StartWith(LogicalSettings) })
	if shared.err != nil {
		t.Fatalf("relaytest: %v", shared.err)
	}
	name := "relay_" + randomHex(4)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := execSQL(ctx, shared.srv.AdminURL, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("relaytest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := execSQL(ctx, shared.srv.AdminURL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("relaytest: drop database %s: %v", name, err)
		}
	})
	return pgtest.WithDatabase(shared.srv.AdminURL, name)
}

// StopShared stops the shared logical server, if one was started: call it
// from TestMain (testkit.Main(m, pgtest.StopShared, relaytest.StopShared)).
func StopShared() {
	if shared.srv != nil {
		shared.srv.Stop()
	}
}
