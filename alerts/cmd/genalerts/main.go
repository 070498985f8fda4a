// Command genalerts writes the Prometheus alerting rules of the workflow
// exporter from a config file. `go generate ./...` (make generate) runs it
// from alerts/rules on alerts/config.yml; from the repository root, the
// defaults are the shipped files:
//
//	go run ./alerts/cmd/genalerts -config alerts/config.yml -out alerts/workflow-alerts.yml
//
// With -check it writes nothing and exits 1 when -out differs from what the
// config generates.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
)

func main() {
	configPath := flag.String("config", "alerts/config.yml", "alerts config file (thresholds, job selector)")
	out := flag.String("out", "alerts/workflow-alerts.yml", "rule file to write")
	check := flag.Bool("check", false, "only compare -out with the generated rules; exit 1 on drift")
	flag.Parse()

	cfg, err := rules.Load(*configPath)
	if err != nil {
		fail(err)
	}
	b, err := rules.Render(cfg)
	if err != nil {
		fail(err)
	}
	if *check {
		old, err := os.ReadFile(*out)
		if err != nil {
			fail(err)
		}
		if !bytes.Equal(old, b) {
			fail(fmt.Errorf("%s is out of date with %s: run make generate", *out, *configPath))
		}
		return
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genalerts:", err)
	os.Exit(1)
}
