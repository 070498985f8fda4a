package promtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// GenerateRules writes the bundle's alert rules generated from an alerts
// config document (the format of alerts/config.yml; keys left out keep the
// shipped defaults) and returns their content. End-to-end tests use it to
// shorten windows and for: durations, e.g.
//
//	outbox: {stalled_window: 2m, stalled_for: 0s}
//
// repoRoot is the repository root (where alerts/ and tools/ are). The
// generator lives in the separate module tools/alertrouting and is run with
// `go run`, so the go command must be on PATH.
func GenerateRules(t testing.TB, repoRoot, config string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alerts-config.yml")
	out := filepath.Join(dir, "workflow-alerts.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-mod=mod", "./cmd/genalerts", "-config", cfg, "-out", out)
	cmd.Dir = filepath.Join(root, "tools", "alertrouting")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate rules: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
