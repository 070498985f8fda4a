package testkit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMavenSourceHash: the cache key follows pom.xml and src/, and nothing else (target/ holds
// Maven's own output).
func TestMavenSourceHash(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hash := func() string {
		t.Helper()
		h, err := MavenSourceHash(dir)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	write("pom.xml", "<project/>")
	write("src/main/java/A.java", "class A {}")
	h1 := hash()
	write("target/classes/A.class", "bytes")
	write("README.md", "words")
	if h := hash(); h != h1 {
		t.Errorf("target/ or a file outside src/ changed the hash")
	}
	write("src/main/java/A.java", "class A { int x; }")
	h2 := hash()
	if h2 == h1 {
		t.Errorf("a source change kept the hash")
	}
	write("pom.xml", "<project><x/></project>")
	if hash() == h2 {
		t.Errorf("a pom change kept the hash")
	}
	if len(h1) != 16 {
		t.Errorf("hash %q, want 16 hex digits", h1)
	}
}

// TestMavenPackage runs MavenPackage with a stand-in for mvn (a shell script): the arguments it
// passes, the jar it returns, and errors that name the build, the command and the project and
// carry Maven's output.
func TestMavenPackage(t *testing.T) {
	tests := []struct {
		name, script string
		wantErr      []string // substrings of the error; none: success
	}{
		{"builds the jar", `mkdir -p target && echo "$@" > target/app.jar`, nil},
		{"fails", `echo "[ERROR] no pom here"; exit 1`, []string{
			"building the app (mvn -q -B -Dstyle.color=never -DskipTests -o package in a copy of /src/app) failed after",
			"exit status 1", "--- Maven output (tail) ---\n[ERROR] no pom here"}},
		{"writes no jar", `echo "[INFO] nothing to package"`, []string{"Maven built no ", "target/app.jar\n[INFO] nothing to package"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mvn := filepath.Join(t.TempDir(), "mvn")
			if err := os.WriteFile(mvn, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			project := t.TempDir()
			jar, err := MavenPackage(context.Background(), mvn, "the app", "/src/app", project, "app.jar", []string{"-o"})
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				args, err := os.ReadFile(jar)
				if jar != filepath.Join(project, "target", "app.jar") || err != nil || string(args) != "-q -B -Dstyle.color=never -DskipTests -o package\n" {
					t.Fatalf("jar %s holding %q (%v); want %s/target/app.jar holding mvn's arguments", jar, args, err, project)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; jar %s", jar)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
