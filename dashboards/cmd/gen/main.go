// Command gen writes the generated dashboard files: dashboards/json/<uid>.json
// and deploy/kubernetes/grafana-dashboards-configmap.yaml. It runs from
// `go generate ./...` in the dashboards directory, or with -root from
// anywhere.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/workflow-exporter/workflow-exporter/dashboards"
)

func main() {
	root := flag.String("root", "..", "repository root (go generate runs in dashboards/)")
	flag.Parse()
	if err := dashboards.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
