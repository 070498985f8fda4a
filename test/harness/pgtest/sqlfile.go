package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// ExecFile runs a SQL file one statement at a time, skipping statements for
// which skip returns true (skip may be nil). Statements end with a semicolon
// at the end of a line; comment lines are dropped. One at a time because
// CREATE INDEX CONCURRENTLY refuses to run inside the implicit transaction
// of a multi-statement query.
func ExecFile(ctx context.Context, conn *pgx.Conn, path string, skip func(stmt string) bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, stmt := range SplitSQL(string(b)) {
		if skip != nil && skip(stmt) {
			continue
		}
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w\n%s", path, err, stmt)
		}
	}
	return nil
}

// SplitSQL splits a SQL script into statements (see ExecFile).
func SplitSQL(s string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			if st := strings.TrimSpace(cur.String()); st != "" {
				out = append(out, st)
			}
			cur.Reset()
		}
	}
	return out
}

// Connect opens a session on url for the test and closes it when the test
// ends.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs SQL on conn, failing the test with the statement on error.
func Exec(t testing.TB, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

// ExecRepoFiles runs SQL files of the repository (paths relative to its root,
// e.g. "deploy/sql/001_reference_schema.sql") with ExecFile, in order,
// failing the test on the first error.
func ExecRepoFiles(t testing.TB, conn *pgx.Conn, skip func(stmt string) bool, files ...string) {
	t.Helper()
	for _, f := range files {
		if err := ExecFile(context.Background(), conn, testkit.Path(t, f), skip); err != nil {
			t.Fatal(err)
		}
	}
}
