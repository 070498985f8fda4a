package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// GoBuild returns the path of a binary of a main package of this module
// (pkg as go build takes it, e.g. "./cmd/exporter"), built without the race
// detector, as a user builds it.
//
// Binaries are cached in <repo>/.cache/gobuild, keyed by the build IDs of
// the package and of everything it imports, as `go list -export` reports
// them: the go command derives those from the sources, embedded files,
// flags and toolchain, so any change that changes the binary changes the
// key, and an unchanged tree reuses the binary. So the tests of a `go test
// ./...` run, one process per package, and its later runs link a binary
// once per change, not once per test (a link is seconds; the key costs
// the go command's look at its cache). A lock file serialises concurrent
// builds of one key.
func GoBuild(t testing.TB, pkg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := goBuild(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func goBuild(ctx context.Context, pkg string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	list := exec.CommandContext(ctx, "go", "list", "-deps", "-export", "-f", "{{.ImportPath}} {{.BuildID}}", pkg)
	list.Dir = root
	var stderr bytes.Buffer
	list.Stderr = &stderr
	ids, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("testkit: go list %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	sum := sha256.Sum256(ids)
	name := path.Base(strings.TrimSuffix(pkg, "/"))
	cache := filepath.Join(root, ".cache", "gobuild")
	dir := filepath.Join(cache, name+"-"+hex.EncodeToString(sum[:])[:16])
	bin := filepath.Join(dir, name)
	if fileExists(bin) {
		touch(dir)
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	unlock, err := LockFile(filepath.Join(cache, name+".lock"))
	if err != nil {
		return "", fmt.Errorf("testkit: locking the build of %s: %w", pkg, err)
	}
	defer unlock()
	if fileExists(bin) { // built by another process while this one waited
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := bin + ".tmp"
	build := exec.CommandContext(ctx, "go", "build", "-o", tmp, pkg)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testkit: go build %s: %w\n%s", pkg, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	pruneBuilds(cache, name, dir)
	return bin, nil
}

// staleAfter is how long a cached binary nobody asked for is kept: long
// enough that a test process of the same run still holding an older key's
// path (a run that began before an edit) finds it.
const staleAfter = time.Hour

// pruneBuilds removes the binaries of pkg's older keys unused for
// staleAfter.
func pruneBuilds(cache, name, keep string) {
	old, _ := filepath.Glob(filepath.Join(cache, name+"-*"))
	for _, d := range old {
		if st, err := os.Stat(d); err == nil && st.IsDir() && d != keep && time.Since(st.ModTime()) > staleAfter {
			_ = os.RemoveAll(d)
		}
	}
}

func touch(p string) {
	now := time.Now()
	_ = os.Chtimes(p, now, now)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
