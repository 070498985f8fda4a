package testkit

import (
	"os"
	"path/filepath"
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
