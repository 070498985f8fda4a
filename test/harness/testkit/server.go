package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// ServerOptions configure StartServer.
type ServerOptions struct {
	// Name names the process in errors (e.g. "exporter", "prometheus").
	Name string
	// Path is the binary; Args its arguments, which make it listen on Addr.
	Path string
	Args []string
	// Addr is the host:port the arguments make the process listen on.
	Addr string
	// Env is added to the test process's environment (NAME=value).
	Env []string
	// Dir is the working directory (empty: the caller's).
	Dir string
	// Ready is a path that answers 200 once the process serves, e.g.
	// "/-/ready"; empty: StartServer returns once the process runs.
	Ready string
	// ReadyTimeout bounds the wait for Ready (default 60 s).
	ReadyTimeout time.Duration
	// Output, when set, also receives everything the process writes.
	Output io.Writer
}

// Server is a child process that serves HTTP (the exporter, Prometheus,
// Alertmanager, a benchmark's baseline), in its own process group and
// killed by the kernel if the test process dies.
type Server struct {
	Name string
	// Addr is host:port; URL is "http://" + Addr.
	Addr, URL string
	// Log is everything the process wrote (stdout and stderr).
	Log *LogBuffer

	cmd    *exec.Cmd
	done   chan struct{}
	exited atomic.Bool
	err    error
}

// StartServer starts the process and waits until o.Ready answers 200 (ctx
// and o.ReadyTimeout bound the wait). On failure nothing is left running
// and the error carries the end of the process's output.
func StartServer(ctx context.Context, o ServerOptions) (*Server, error) {
	s := &Server{Name: o.Name, Addr: o.Addr, URL: "http://" + o.Addr, Log: &LogBuffer{}, done: make(chan struct{})}
	cmd := exec.Command(o.Path, o.Args...)
	cmd.Dir = o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	var out io.Writer = s.Log
	if o.Output != nil {
		out = io.MultiWriter(s.Log, o.Output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	OwnProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", o.Name, o.Path, err)
	}
	s.cmd = cmd
	go func() {
		s.err = cmd.Wait()
		s.exited.Store(true)
		close(s.done)
	}()
	if o.Ready == "" {
		return s, nil
	}
	timeout := o.ReadyTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	if err := s.waitReady(ctx, o.Ready, timeout); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("%s not ready on %s: %w\n%s", o.Name, o.Addr, err, Tail(s.Log.String(), 20))
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("exited: %v", s.err) //nolint:errorlint // nil for a clean exit, which must print as such
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopGrace is how long Stop waits after SIGTERM before it kills.
const stopGrace = 10 * time.Second

// ErrKilled is what Stop returns when the process did not exit within
// stopGrace of SIGTERM and was killed.
var ErrKilled = errors.New("did not exit within 10s of SIGTERM: killed")

// Stop sends SIGTERM, waits up to 10 s, then kills. It returns nil when the
// process exited 0, ErrKilled when it had to be killed, or its exit error.
// Safe to call more than once; later calls return the first exit's result.
func (s *Server) Stop() error {
	select {
	case <-s.done:
		return s.err
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.err
	case <-time.After(stopGrace):
		_ = KillGroup(s.cmd.Process)
		<-s.done
		return ErrKilled
	}
}

// Signal sends sig to the process (SIGHUP to reload, SIGTERM to time a
// shutdown).
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Done is closed when the process has exited; Err then says how.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is the process's exit error once Done is closed (nil for exit 0).
func (s *Server) Err() error { <-s.done; return s.err }

// Exited reports whether the process has ended.
func (s *Server) Exited() bool { return s.exited.Load() }

// PID is the process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Get sends GET url with c, with basic auth when user is set, and returns
// the status and body, or -1 and the error when there was no answer.
func Get(c *http.Client, url, user, password string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return -1, err.Error()
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		return -1, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1, err.Error()
	}
	return resp.StatusCode, string(b)
}

// ListenAddr returns preferred (host:port) when it is free, else a free
// port on 127.0.0.1: for the tools a person runs (make demo, make run),
// which print their fixed ports unless something else holds them.
func ListenAddr(preferred string) (string, error) {
	if l, err := net.Listen("tcp", preferred); err == nil {
		addr := l.Addr().String()
		l.Close()
		return addr, nil
	}
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", port), nil
}
