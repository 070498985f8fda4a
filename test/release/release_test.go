// Package release tests the release artifacts: make release (static binaries
// for every platform, stamped, packed, with checksums), the Dockerfile's
// build, which must stamp the same way, and the CHANGELOG's entry for the
// VERSION file.
package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const root = "../.."

// stamps are the values every test build is stamped with.
var stamps = map[string]string{
	"VERSION":    "9.8.7-test",
	"REVISION":   "0123456789abcdef0123456789abcdef01234567",
	"BRANCH":     "release-test",
	"BUILD_USER": "tester@buildhost",
	"BUILD_DATE": "20260102-03:04:05",
}

func stampEnv() []string {
	env := os.Environ()
	for k, v := range stamps {
		env = append(env, k+"="+v)
	}
	return env
}

// checkVersionOutput runs bin --version and checks that it shows every stamp.
func checkVersionOutput(t *testing.T, bin string) {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	for _, want := range []string{
		"workflow-exporter, version " + stamps["VERSION"] + " (branch: " + stamps["BRANCH"] + ", revision: " + stamps["REVISION"] + ")",
		"build user:       " + stamps["BUILD_USER"],
		"build date:       " + stamps["BUILD_DATE"],
		"go version:       go",
		"platform:         " + runtime.GOOS + "/" + runtime.GOARCH,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version lacks %q:\n%s", want, out)
		}
	}
}

// TestMakeRelease runs make release and checks every artifact: the three
// platforms, each archive's files, static linking, the checksums, and the
// stamps of the binary this machine can run.
func TestMakeRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds three binaries")
	}
	dist := t.TempDir()
	cmd := exec.Command("make", "release", "DIST="+dist)
	cmd.Dir = root
	cmd.Env = stampEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	sums := readSums(t, filepath.Join(dist, "sha256sums.txt"))
	platforms := []string{"linux/amd64", "linux/arm64", "darwin/arm64"}
	var want []string
	for _, p := range platforms {
		want = append(want, "workflow-exporter-"+stamps["VERSION"]+"."+strings.Replace(p, "/", "-", 1)+".tar.gz")
	}
	var got []string
	for name := range sums {
		got = append(got, name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("sha256sums.txt lists %v, want %v", got, want)
	}
	for i, p := range platforms {
		name := "workflow-exporter-" + stamps["VERSION"] + "." + strings.Replace(p, "/", "-", 1)
		archive := filepath.Join(dist, name+".tar.gz")
		b, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != sums[name+".tar.gz"] {
			t.Errorf("%s: checksum does not match sha256sums.txt", name)
		}
		dir := filepath.Join(t.TempDir(), string(rune('a'+i)))
		files := untar(t, archive, dir)
		for _, f := range []string{"workflow-exporter", "LICENSE", "CHANGELOG.md"} {
			if !slices.Contains(files, name+"/"+f) {
				t.Errorf("%s lacks %s/%s (has %v)", archive, name, f, files)
			}
		}
		bin := filepath.Join(dir, name, "workflow-exporter")
		goos, goarch, _ := strings.Cut(p, "/")
		checkBinary(t, bin, goos, goarch)
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			checkVersionOutput(t, bin)
		}
	}
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("sha256sums.txt: line %q is not in sha256sum's format", sc.Text())
		}
		sums[m[2]] = m[1]
	}
	return sums
}

func untar(t *testing.T, archive, dir string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(h.Name, "/"))
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: %s owned by %d:%d, want 0:0", archive, h.Name, h.Uid, h.Gid)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
	return names
}

// checkBinary checks the executable format, the architecture, and for Linux
// that it is statically linked (no interpreter, no shared libraries).
func checkBinary(t *testing.T, path, goos, goarch string) {
	t.Helper()
	switch goos {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			t.Fatalf("%s: not an ELF file: %v", path, err)
		}
		defer f.Close()
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want {
			t.Errorf("%s: machine %v, want %v", path, f.Machine, want)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s: has a %v program header: not statically linked", path, p.Type)
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("%s: needs shared libraries %v", path, libs)
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			t.Fatalf("%s: not a Mach-O file: %v", path, err)
		}
		defer f.Close()
		if goarch == "arm64" && f.Cpu != macho.CpuArm64 {
			t.Errorf("%s: cpu %v, want arm64", path, f.Cpu)
		}
		// A Go binary built without cgo links only the system library.
		libs, _ := f.ImportedLibraries()
		for _, l := range libs {
			if !strings.HasPrefix(l, "/usr/lib/libSystem") && !strings.HasPrefix(l, "/System/Library/Frameworks/") && !strings.HasPrefix(l, "/usr/lib/libresolv") {
				t.Errorf("%s: links %s", path, l)
			}
		}
	default:
		t.Fatalf("no check for %s", goos)
	}
}

// dockerfile is what the tests read from the Dockerfile: the ARGs of the
// build stage and the RUN line that builds the exporter.
type dockerfile struct {
	buildArgs []string
	buildRun  string
	user      string
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var d dockerfile
	stage := 0
	// Continuation lines are joined first.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "FROM":
			stage++
		case "ARG":
			if stage == 1 {
				name, _, _ := strings.Cut(f[1], "=")
				d.buildArgs = append(d.buildArgs, name)
			}
		case "RUN":
			if stage == 1 && strings.Contains(line, "scripts/release.sh build") {
				d.buildRun = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "RUN"))
			}
		case "USER":
			d.user = f[1]
		}
	}
	return d
}

// TestDockerfileStampsLikeRelease runs the Dockerfile's build command here
// (there is no Docker engine in the test environment) with its build
// arguments set, and checks the binary's --version; and that make image
// passes every stamp as a build argument.
func TestDockerfileStampsLikeRelease(t *testing.T) {
	d := readDockerfile(t)
	for name := range stamps {
		if !slices.Contains(d.buildArgs, name) {
			t.Errorf("the Dockerfile's build stage has no ARG %s", name)
		}
	}
	if d.buildRun == "" {
		t.Fatal("the Dockerfile's build stage does not build with scripts/release.sh build")
	}
	makeN, err := exec.Command("make", "-s", "-C", root, "-n", "image").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n image: %v\n%s", err, makeN)
	}
	for name := range stamps {
		if !strings.Contains(string(makeN), "--build-arg "+name+"=") {
			t.Errorf("make image does not pass --build-arg %s:\n%s", name, makeN)
		}
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Fields(string(ignore)) {
		for _, needed := range []string{"scripts", "scripts/release.sh", "VERSION", "cmd"} {
			if strings.Trim(l, "/") == needed {
				t.Errorf(".dockerignore leaves out %s, which the image build needs", needed)
			}
		}
	}
	if testing.Short() {
		return
	}
	out := t.TempDir()
	run := strings.ReplaceAll(d.buildRun, "/out/", out+"/")
	cmd := exec.Command("bash", "-c", run)
	cmd.Dir = root
	cmd.Env = stampEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's RUN %s: %v\n%s", run, err, b)
	}
	bin := filepath.Join(out, "workflow-exporter")
	checkBinary(t, bin, "linux", runtime.GOARCH)
	checkVersionOutput(t, bin)
}

// TestChangelogHasTheVersion: the VERSION that make release stamps has its
// section at the top of CHANGELOG.md.
func TestChangelogHasTheVersion(t *testing.T) {
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(v))
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		t.Fatalf("VERSION %q is not a semantic version", version)
	}
	c, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`(?m)^## (\S+) / `).FindStringSubmatch(string(c))
	if first == nil || first[1] != version {
		t.Fatalf("the first section of CHANGELOG.md is %v, want ## %s / <date or unreleased>", first, version)
	}
	lic, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lic), "Apache License\n                           Version 2.0, January 2004") {
		t.Error("LICENSE is not the Apache License 2.0")
	}
}
