package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// MavenJar describes a Maven project of the repository that packages one executable jar, for
// MavenBuild: the test relays (test/relays/*) and applications the harnesses start.
type MavenJar struct {
	// Name names the build in errors and in the cache: <CacheDir>/<Name>-<hash>/<Jar>.
	Name string
	// Project is the project's directory relative to the repository root, in slash form
	// (e.g. "test/relays/debezium"); it holds pom.xml and src/.
	Project string
	// Jar is the file Maven writes under target/ (e.g. "debezium-relay.jar").
	Jar string
	// CacheDir holds the built jars (default <repo>/.cache/<Name>).
	CacheDir string
	// Args are extra Maven arguments (e.g. "-o"), after the harness's own.
	Args []string
}

// MavenBuild returns the path of the project's jar, building it with Maven when the cache has none
// for the current pom.xml and src/ (hashed: SHA-256 of paths and contents, first 16 hex digits).
// As camundatest.Build does for the engines: builds are serialised with a lock file (goroutines,
// `go test` processes, worktrees sharing a cache), Maven runs in a scratch copy of the project
// (mvn -q -B -Dstyle.color=never -DskipTests package) so it never touches the project's target/,
// and jars of older hashes are removed. Any change to the pom or a source rebuilds; nothing else
// does.
func MavenBuild(ctx context.Context, m MavenJar) (string, error) {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("testkit: building %s needs %q in PATH (Debian: apt-get install %s): %w",
				m.Name, tool, map[string]string{"mvn": "maven", "java": "openjdk-17-jdk-headless"}[tool], err)
		}
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	src := filepath.Join(root, filepath.FromSlash(m.Project))
	if _, err := os.Stat(filepath.Join(src, "pom.xml")); err != nil {
		return "", fmt.Errorf("testkit: %s: no Maven project at %s", m.Name, src)
	}
	hash, err := MavenSourceHash(src)
	if err != nil {
		return "", err
	}
	cache := m.CacheDir
	if cache == "" {
		cache = filepath.Join(root, ".cache", m.Name)
	}
	jar := filepath.Join(cache, m.Name+"-"+hash, m.Jar)
	if fileExists(jar) {
		return jar, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	unlock, err := LockFile(filepath.Join(cache, m.Name+".lock"))
	if err != nil {
		return "", fmt.Errorf("testkit: locking the %s build: %w", m.Name, err)
	}
	defer unlock()
	if fileExists(jar) { // built by someone else while we waited
		return jar, nil
	}
	work, err := os.MkdirTemp(cache, "build-"+m.Name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := CopyTree(src, work, "target"); err != nil {
		return "", fmt.Errorf("testkit: copying %s: %w", src, err)
	}
	built, err := MavenPackage(ctx, "mvn", m.Name, src, work, m.Jar, m.Args)
	if err != nil {
		return "", fmt.Errorf("testkit: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(built, jar); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(cache, m.Name+"-*"))
	for _, d := range old {
		// Another process may still run an old jar: on Linux its open file stays readable.
		if d != filepath.Dir(jar) && fileExists(filepath.Join(d, m.Jar)) {
			_ = os.RemoveAll(d)
		}
	}
	return jar, nil
}

// MavenPackage runs mvn -q -B -Dstyle.color=never -DskipTests <args> package in project, a
// scratch copy of src, and returns the path of the jar it wrote, project/target/<jar>. Its errors
// name the build (name), the command and src, with the tail of Maven's output; the caller adds
// its package's prefix.
func MavenPackage(ctx context.Context, mvn, name, src, project, jar string, args []string) (string, error) {
	args = append(append([]string{"-q", "-B", "-Dstyle.color=never", "-DskipTests"}, args...), "package")
	cmd := exec.CommandContext(ctx, mvn, args...)
	cmd.Dir = project
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s (mvn %s in a copy of %s) failed after %s: %w\n--- Maven output (tail) ---\n%s",
			name, strings.Join(args, " "), src, time.Since(start).Round(time.Second), err, Tail(out.String(), 60))
	}
	built := filepath.Join(project, "target", jar)
	if !fileExists(built) {
		return "", fmt.Errorf("Maven built no %s\n%s", built, Tail(out.String(), 40))
	}
	return built, nil
}

// MavenSourceHash hashes a Maven project's pom.xml and every file under its src/ (paths and
// contents): the cache key of MavenBuild.
func MavenSourceHash(dir string) (string, error) { return HashTrees(dir, "", "src") }

// HashTrees hashes head, then dir's pom.xml and every regular file under the trees (relative
// to dir, e.g. "src" or "../shared"; a missing tree is skipped), by path and contents: a cache
// key that changes with any of them and nothing else.
func HashTrees(dir, head string, trees ...string) (string, error) {
	files := []string{"pom.xml"}
	for _, tree := range trees {
		err := filepath.WalkDir(filepath.Join(dir, tree), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("testkit: hashing %s: %w", filepath.Join(dir, tree), err)
		}
	}
	sort.Strings(files)
	h := sha256.New()
	h.Write([]byte(head))
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return "", fmt.Errorf("testkit: hashing: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// CopyTree copies the regular files of src to dst, skipping top-level entries named in skip:
// the scratch copy a Maven build runs in.
func CopyTree(src, dst string, skip ...string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
