package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGoBuildIsCached: the second build of an unchanged package is the same
// file, found without linking again, and the binary runs.
func TestGoBuildIsCached(t *testing.T) {
	first := GoBuild(t, "./test/bench/tables/constserver")
	st, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	again := GoBuild(t, "./test/bench/tables/constserver")
	st2, err := os.Stat(again)
	if err != nil {
		t.Fatal(err)
	}
	if again != first || !st2.ModTime().Equal(st.ModTime()) {
		t.Fatalf("second build %s (modified %s), want the cached %s (modified %s)", again, st2.ModTime(), first, st.ModTime())
	}
	out, _ := exec.Command(first, "-h").CombinedOutput()
	if !strings.Contains(string(out), "-metrics") {
		t.Fatalf("the cached binary does not run as constserver:\n%s", out)
	}
}
