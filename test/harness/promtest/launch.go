package promtest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// LaunchPrometheus starts Prometheus outside a test (make demo): config is
// the path of a prometheus.yml, dir a directory it owns (data goes there).
// Stop it with Server.Stop.
func LaunchPrometheus(config, dir string, flags ...string) (*Server, error) {
	return launchIn("prometheus", PrometheusBinary(), dir, append([]string{"--config.file=" + config,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.enable-lifecycle"}, flags...))
}

// LaunchAlertmanager starts Alertmanager outside a test, clustering off.
func LaunchAlertmanager(config, dir string, flags ...string) (*Server, error) {
	return launchIn("alertmanager", AlertmanagerBinary(), dir, append([]string{"--config.file=" + config,
		"--storage.path=" + filepath.Join(dir, "data"), "--cluster.listen-address="}, flags...))
}

// launchIn starts bin in dir on a free port with args.
func launchIn(name, bin, dir string, args []string) (*Server, error) {
	if _, err := exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("%s not found (apt-get install %s)", bin, debianPackage(bin))
	}
	port, err := testkit.FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s, err := spawn(name, bin, dir, addr, append(args, "--web.listen-address="+addr))
	if err != nil {
		return nil, err
	}
	s.Flavor = Debian()
	return s, nil
}

// readyTimeout bounds the wait for /-/ready.
const readyTimeout = 60 * time.Second

// spawn starts the binary in dir (testkit.StartServer: its own process
// group, killed by the kernel if the caller dies) and waits for /-/ready.
func spawn(name, bin, dir, addr string, args []string) (*Server, error) {
	s, err := testkit.StartServer(context.Background(), testkit.ServerOptions{Name: name, Path: bin, Args: args, Addr: addr,
		Dir: dir, Ready: "/-/ready", ReadyTimeout: readyTimeout})
	if err != nil {
		return nil, err
	}
	return &Server{Server: s, Dir: dir}, nil
}
