// Package compose checks deploy/compose/docker-compose.yml without Docker:
// loaded with compose-go (github.com/compose-spec/compose-go, the Compose
// Specification's reference library, which docker compose itself uses), it
// must pass the specification's JSON schema and compose-go's consistency
// checks (every service a depends_on or network_mode names exists), run
// the services the demo needs, mount files that exist, and run the
// Prometheus and Alertmanager releases the tests run as the current
// flavor. Docker is not needed, and the containers are not started: the
// tests run the same components as local processes.
package compose

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"golang.org/x/mod/modfile"
)

const (
	root        = "../.."
	composeDir  = root + "/deploy/compose"
	composeFile = composeDir + "/docker-compose.yml"
)

// load loads a compose file as docker compose does (interpolation, path
// resolution, schema validation, consistency checks), with an empty
// environment.
func load(t *testing.T, dir, file string) (*types.Project, error) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  abs,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(abs, filepath.Base(file)), Content: b}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) { o.SetProjectName("workflow-exporter", true) })
}

// TestComposeFileIsValid: the compose file passes the schema and the
// consistency checks, runs every part of the demo, and every file it
// mounts or builds from exists (Docker would mount a missing file as an
// empty directory, and the service would fail on start).
func TestComposeFileIsValid(t *testing.T) {
	p, err := load(t, composeDir, composeFile)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alertmanager", "camunda", "exporter", "grafana", "notifications", "postgres", "prometheus", "simulator"}
	if got := p.ServiceNames(); !slices.Equal(sorted(got), want) {
		t.Errorf("services %v, want %v", got, want)
	}
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("service %s mounts %s, which does not exist", name, v.Source)
			}
		}
		if s.Build != nil {
			if _, err := os.Stat(filepath.Join(s.Build.Context, "Dockerfile")); err != nil {
				t.Errorf("service %s builds from %s: %v", name, s.Build.Context, err)
			}
			if s.Build.Target != "" && !dockerfileHasStage(t, filepath.Join(s.Build.Context, "Dockerfile"), s.Build.Target) {
				t.Errorf("service %s builds the target %s, which the Dockerfile does not have", name, s.Build.Target)
			}
		}
	}
	// Alertmanager's webhooks (deploy/alertmanager.yml) go to
	// 127.0.0.1:5001, the printing receiver's address in Alertmanager's
	// network namespace.
	n := p.Services["notifications"]
	if n.NetworkMode != "service:alertmanager" || !slices.Contains(n.Command, "--listen=127.0.0.1:5001") {
		t.Errorf("notifications: network_mode %q, command %v", n.NetworkMode, n.Command)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// dockerfileHasStage reports whether the Dockerfile names a stage target
// (FROM ... AS target).
func dockerfileHasStage(t *testing.T, path, target string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`(?mi)^FROM\s+\S+\s+AS\s+` + regexp.QuoteMeta(target) + `\s*$`).Match(b)
}

// TestComposeSchemaCatchesMistakes: the loader refuses a misspelt key, a
// value of the wrong type, and a dependency on a service that is not
// there, so the valid file above is valid for a reason.
func TestComposeSchemaCatchesMistakes(t *testing.T) {
	for name, doc := range map[string]string{
		"misspelt key":    "services:\n  a:\n    imagee: x\n",
		"wrong type":      "services:\n  a:\n    image: x\n    ports: 8080\n",
		"missing service": "services:\n  a:\n    image: x\n    depends_on: [b]\n",
		"network of none": "services:\n  a:\n    image: x\n    network_mode: service:b\n",
		"bad condition":   "services:\n  a:\n    image: x\n    depends_on: {b: {condition: service_ready}}\n  b:\n    image: x\n",
	} {
		dir := t.TempDir()
		f := filepath.Join(dir, "compose.yml")
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := load(t, dir, f); err == nil {
			t.Errorf("%s: accepted\n%s", name, doc)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestComposeRunsTheTestedReleases: the compose stack's Prometheus and
// Alertmanager images are the releases the tests run as the current flavor
// (scripts/install-deps.sh): Prometheus the version checks/go.mod requires
// (module v0.316.0 is release 3.16.0), Alertmanager the script's pin.
func TestComposeRunsTheTestedReleases(t *testing.T) {
	p, err := load(t, composeDir, composeFile)
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "checks", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("checks/go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	promModule := ""
	for _, r := range mf.Require {
		if r.Mod.Path == "github.com/prometheus/prometheus" {
			promModule = r.Mod.Version
		}
	}
	m := regexp.MustCompile(`^v0\.(\d+)(\d\d)\.(\d+)$`).FindStringSubmatch(promModule)
	if m == nil {
		t.Fatalf("checks/go.mod requires Prometheus %q, not of the form v0.MMmm.p", promModule)
	}
	wantProm := "prom/prometheus:v" + m[1] + "." + strings.TrimPrefix(m[2], "0") + "." + m[3]
	script, err := os.ReadFile(filepath.Join(root, "scripts", "install-deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	am := regexp.MustCompile(`(?m)^ALERTMANAGER_CURRENT_VERSION=(v\S+)$`).FindSubmatch(script)
	if am == nil {
		t.Fatal("scripts/install-deps.sh pins no ALERTMANAGER_CURRENT_VERSION")
	}
	for service, want := range map[string]string{"prometheus": wantProm, "alertmanager": "prom/alertmanager:" + string(am[1])} {
		if got := p.Services[service].Image; got != want {
			t.Errorf("compose runs %s %s; the tests run %s", service, got, want)
		}
	}
}
