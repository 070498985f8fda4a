package pgtest

import (
	"context"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestNewDatabaseIsIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatal("two tests got the same database")
	}
	conn := Connect(t, a)
	Exec(t, conn, "CREATE TABLE x (id int)")
	connB := Connect(t, b)
	var n int
	if err := connB.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("table created in database a is visible in b")
	}
	var host string
	if err := conn.QueryRow(ctx, "SELECT inet_server_addr()::text").Scan(&host); err != nil {
		t.Fatal(err)
	}
	if host != "127.0.0.1/32" && host != "::1/128" {
		t.Fatalf("server listens on %s, want loopback", host)
	}
}

// TestServerVersion logs the server's version (make test-pg-current runs the
// table collector tests on a second major) and, with PGTEST_MAJOR set,
// checks that the shared server is that major.
func TestServerVersion(t *testing.T) {
	srv := SharedServer(t)
	v, err := ServerVersionNum(srv.AdminURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %d.%d", v/10000, v%10000)
	if v/10000 < 15 {
		t.Errorf("PostgreSQL %d: the exporter supports 15 and later", v/10000)
	}
	t.Setenv(EnvMajor, "99")
	if err := checkMajor(srv.AdminURL); err == nil {
		t.Error("PGTEST_MAJOR=99 accepted a server that is not PostgreSQL 99")
	}
}
