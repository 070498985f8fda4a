package exportertest

import (
	"strings"
	"testing"
	"time"
)

// TestStartReloadStop: the exporter starts with the config and flags
// given, reads a rewritten config on Reload, and exits 0 on Stop.
func TestStartReloadStop(t *testing.T) {
	const first = "camunda: [{name: first, url: 'http://127.0.0.1:1/engine-rest'}]\n"
	const second = "camunda: [{name: second, url: 'http://127.0.0.1:1/engine-rest'}]\n"
	x := Start(t, Options{Config: first, Flags: []string{"--web.telemetry-path=/custom"}})
	if body := x.Get(t, "/custom"); !strings.Contains(body, `camunda_up{engine="first"} 0`) {
		t.Fatalf("/custom lacks the first config's engine:\n%s", body)
	}
	x.WriteConfig(t, second)
	if err := x.Reload(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(x.Get(t, "/custom"), `camunda_up{engine="second"} 0`) {
		if time.Now().After(deadline) {
			t.Fatalf("the reload did not take the second config:\n%s", x.Log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := x.Stop(); err != nil {
		t.Fatalf("Stop: %v\n%s", err, x.Log)
	}
	if err := x.Stop(); err != nil || !x.Exited() {
		t.Fatalf("a second Stop: %v, exited %v", err, x.Exited())
	}
}
