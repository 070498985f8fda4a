package main

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
)

// The demo's fast windows are a valid alerts config: no consequence waits
// less than the root cause that inhibits it, or the demo would not start.
func TestFastAlertsConfigIsValid(t *testing.T) {
	if _, err := rules.Parse([]byte(fastAlerts)); err != nil {
		t.Fatal(err)
	}
}
