package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
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
