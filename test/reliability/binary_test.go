package reliability

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var exporterBinary struct {
	once sync.Once
	path string
}

// exporterBin builds the exporter binary once for the package's tests.
func exporterBin(t testing.TB) string {
	t.Helper()
	exporterBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "reliability-bin-")
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "workflow-exporter")
		build := exec.Command("go", "build", "-o", bin, "./cmd/exporter")
		build.Dir = testkit.Path(t, ".")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		exporterBinary.path = bin
	})
	if exporterBinary.path == "" {
		t.Fatal("the exporter binary was not built")
	}
	return exporterBinary.path
}

// exporterProcess is the binary running with a config file.
type exporterProcess struct {
	url  string
	cmd  *exec.Cmd
	logs *testkit.LogBuffer
}

// startExporter runs the binary with the config document and extra
// environment (NAME=value), waits until it serves, and stops it when the
// test ends.
func startExporter(t testing.TB, doc string, env ...string) *exporterProcess {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeAddr(t)
	x := &exporterProcess{url: "http://" + addr, logs: &testkit.LogBuffer{}}
	x.cmd = exec.Command(exporterBin(t), "--config.file", cfg, "--web.listen-address", addr)
	x.cmd.Env = append(os.Environ(), env...)
	x.cmd.Stdout, x.cmd.Stderr = x.logs, x.logs
	if err := x.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = x.cmd.Process.Kill()
		_ = x.cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := http.Get(x.url + "/-/healthy"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return x
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter did not serve within 20s:\n%s", x.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// get fetches a path, failing the test on anything but 200.
func (x *exporterProcess) get(t testing.TB, path string) string {
	t.Helper()
	resp, err := http.Get(x.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}
