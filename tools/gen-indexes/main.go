// Command gen-indexes writes the exporter's index files (worker tables,
// engine database) from the collectors' requirements, so deploy/sql and the code cannot drift apart.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gen-indexes TABLES.sql ENGINE.sql PRESETS-DIR")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(sources.IndexSQL(sources.DefaultRequirements())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], []byte(capability.IndexSQL()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// One file per library preset; files of presets that no longer exist
	// are removed, so the directory holds exactly the generated ones.
	names, reqs := sources.PresetRequirements()
	if err := os.MkdirAll(os.Args[3], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	old, _ := filepath.Glob(filepath.Join(os.Args[3], "*.sql"))
	keep := map[string]bool{}
	for _, n := range names {
		path := filepath.Join(os.Args[3], n+".sql")
		keep[path] = true
		if err := os.WriteFile(path, []byte(sources.PresetIndexSQL(n, reqs[n])), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for _, p := range old {
		if !keep[p] {
			_ = os.Remove(p)
		}
	}
}
