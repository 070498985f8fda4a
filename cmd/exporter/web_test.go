package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// webPassword and its bcrypt hash (cost 10), as --web.config.file holds it.
const (
	webUser         = "prometheus"
	webPassword     = "Web-Basic-Auth-Pw-7c1e"
	webPasswordHash = "$2a$10$4LAU08pTXOhHYcxcXFZKlu/f1ooMmSGY4HGDBiI919UM6WXQwBNZ."
)

// protectedPaths are the endpoints behind TLS and basic auth; a new
// endpoint is one more line here.
var protectedPaths = []string{
	"/metrics",
	"/",
	"/status",
	"/status.json",
	"/-/healthy",
	"/-/ready",
}

// TestWebConfigTLSAndBasicAuth: with --web.config.file every endpoint is
// served over TLS only, and answers 401 without a password or with a wrong
// one, 200 with the right one; neither the password nor its hash shows up
// in a log line or a page.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	bin := exportertest.Build(t)
	certs := testkit.NewCertificates(t)
	dir := t.TempDir()
	webCfg := filepath.Join(dir, "web.yml")
	must(t, os.WriteFile(webCfg, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: '%s'\n",
		certs.CertFile, certs.KeyFile, webUser, webPasswordHash)), 0o600))
	const doc = "camunda: [{name: nowhere, url: 'http://127.0.0.1:1/engine-rest'}]\n"
	cfg := filepath.Join(dir, "config.yml")
	must(t, os.WriteFile(cfg, []byte(doc), 0o600))
	if out, err := exec.Command(bin, "--config.file", cfg, "--web.config.file", webCfg, "--config.check").CombinedOutput(); err != nil {
		t.Fatalf("--config.check refuses the web config: %v\n%s", err, out)
	}
	// NoWait: the readiness probe speaks plain HTTP; this one needs TLS and
	// the password, so the test waits below.
	x := exportertest.Start(t, exportertest.Options{Binary: bin, Config: doc, NoWait: true,
		Flags: []string{"--web.config.file", webCfg, "--log.level", "debug"}})
	logs, addr := x.Log, x.Addr

	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool}}}
	base := "https://" + addr
	var pages strings.Builder
	do := func(path, user, password string) (int, string) {
		code, body := testkit.Get(client, base+path, user, password)
		pages.WriteString(body)
		return code, body
	}
	deadline := time.Now().Add(20 * time.Second)
	for code, _ := do("/-/healthy", webUser, webPassword); code != http.StatusOK; code, _ = do("/-/healthy", webUser, webPassword) {
		if time.Now().After(deadline) {
			t.Fatalf("the exporter does not serve over TLS with basic auth:\n%s", logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, path := range protectedPaths {
		for _, c := range []struct {
			who, user, password string
			want                int
		}{
			{"no password", "", "", http.StatusUnauthorized},
			{"a wrong password", webUser, webPassword + "x", http.StatusUnauthorized},
			{"the right user with an empty password", webUser, "", http.StatusUnauthorized},
			{"another user with the password", "root", webPassword, http.StatusUnauthorized},
			{"the right password", webUser, webPassword, http.StatusOK},
		} {
			if code, body := do(path, c.user, c.password); code != c.want {
				t.Errorf("GET %s with %s: %d, want %d\n%.300s", path, c.who, code, c.want, body)
			}
		}
	}
	if code, body := do("/metrics", webUser, webPassword); code != http.StatusOK || !strings.Contains(body, `camunda_up{engine="nowhere"} 0`) {
		t.Errorf("metrics over TLS: %d\n%.500s", code, body)
	}
	// Plain HTTP to the TLS port gets nothing of the exporter.
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "camunda_up") {
			t.Errorf("plain HTTP served: %d\n%.300s", resp.StatusCode, b)
		}
	}
	if err := x.Stop(); err != nil {
		t.Errorf("stopping the exporter: %v", err)
	}
	all := logs.String() + pages.String()
	if !strings.Contains(logs.String(), "TLS is enabled") {
		t.Errorf("the log does not say TLS is on:\n%s", logs)
	}
	for _, secret := range []string{webPassword, webPasswordHash} {
		if strings.Contains(all, secret) {
			t.Errorf("%q appears in a log line or a page", secret)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
