// Command gen-indexes writes the exporter's index files (worker tables,
// engine database) from the collectors' requirements, so deploy/sql and the code cannot drift apart.
package main

import (
	"fmt"
	"os"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen-indexes TABLES.sql ENGINE.sql")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(sources.IndexSQL(sources.DefaultRequirements())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], []byte(engine.IndexSQL()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
