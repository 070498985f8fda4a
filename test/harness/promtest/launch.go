package promtest

import (
	"fmt"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
)

// LaunchPrometheus starts Prometheus outside a test (make demo): config is
// the path of a prometheus.yml, dir a directory it owns (data goes there).
// Stop it with Server.Stop.
func LaunchPrometheus(config, dir string, flags ...string) (*Server, error) {
	s, err := newServer("prometheus", dir)
	if err != nil {
		return nil, err
	}
	return s, spawn(s, PrometheusBinary(), append([]string{
		"--config.file=" + config,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + s.Addr,
		"--web.enable-lifecycle",
	}, flags...))
}

// LaunchAlertmanager starts Alertmanager outside a test, clustering off.
func LaunchAlertmanager(config, dir string, flags ...string) (*Server, error) {
	s, err := newServer("alertmanager", dir)
	if err != nil {
		return nil, err
	}
	return s, spawn(s, AlertmanagerBinary(), append([]string{
		"--config.file=" + config,
		"--storage.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + s.Addr,
		"--cluster.listen-address=",
	}, flags...))
}

func newServer(name, dir string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	return &Server{Name: name, Addr: addr, URL: "http://" + addr, Dir: dir, log: &testkit.LogBuffer{}, done: make(chan struct{})}, nil
}

// spawn starts the binary in its own process group (a signal to the
// caller's group does not reach it first, and Stop signals exactly this
// child; the kernel kills it if the caller dies) and waits for /-/ready.
func spawn(s *Server, bin string, args []string) error {
	if _, err := exec.LookPath(bin); err != nil {
		return fmt.Errorf("%s not found (apt-get install prometheus prometheus-alertmanager)", bin)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.Name, err)
	}
	s.cmd = cmd
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(readyTimeout); err != nil {
		s.Stop()
		return fmt.Errorf("%s not ready: %w\n%s", s.Name, err, tail(s.Log(), 20))
	}
	return nil
}
