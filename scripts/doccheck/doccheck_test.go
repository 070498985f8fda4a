// Package doccheck holds the tests that keep the documentation honest: every
// relative link of README.md, CONTRIBUTING.md and docs/ points to a file of
// this repository and every #anchor to a heading, the README stays a short
// first read, and its configuration examples load.
package doccheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// documents returns the Markdown files whose links are checked, relative to
// the repository root: the README, CONTRIBUTING.md, docs/ and its
// subdirectories (the runbooks).
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs := []string{"README.md", "CONTRIBUTING.md"}
	for _, pattern := range []string{"docs/*.md", "docs/*/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, err := filepath.Rel(root, f)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, filepath.ToSlash(rel))
		}
	}
	return docs
}

func TestLinksResolve(t *testing.T) {
	root := testkit.Path(t, ".")
	anchors := map[string]map[string]bool{} // by file, relative to root
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := anchors[rel]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		anchors[rel] = headingAnchors(string(b))
		return anchors[rel]
	}
	checked := 0
	for _, doc := range documents(t, root) {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(b)) {
			if isExternal(l.target) {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: link %q", doc, l.line, l.target)
			path, anchor, _ := strings.Cut(l.target, "#")
			target := doc
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(doc), path))
				if target == ".." || strings.HasPrefix(target, "../") {
					t.Errorf("%s: points outside the repository", where)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					t.Errorf("%s: no such file %s", where, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s: an anchor into %s, which is not Markdown", where, target)
				continue
			}
			if !anchorsOf(target)[anchor] {
				t.Errorf("%s: %s has no heading with the anchor #%s", where, target, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: the link extraction is broken", checked)
	}
}

// TestREADMEIsAFirstRead keeps the README short enough to read on arrival:
// under 250 lines of at most 120 characters, and nothing that ages with
// every commit (commit hashes, CI run times: docs/benchmarks.md and the
// CHANGELOG hold those).
func TestREADMEIsAFirstRead(t *testing.T) {
	b, err := os.ReadFile(testkit.Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range readmeProblems(string(b)) {
		t.Error("README.md: " + p)
	}
}

var (
	// hexRun is a word of 7 to 40 hex digits, as short and full commit
	// hashes are; commitHash adds that it mixes digits and letters.
	hexRun = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	// timing is a duration a run took: "in 950 s", "took 15 min 50 s",
	// "in about 8 minutes".
	timing = regexp.MustCompile(`(?i)\b(in|took|takes)\s+(about\s+)?\d+(\.\d+)?\s*(ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b|\b\d+\s*min\s+\d+\s*s\b`)
)

// firstScreen is how many lines of the README a newcomer sees first: the
// two commands must be among them.
const firstScreen = 40

func commitHash(word string) bool {
	return strings.ContainsAny(word, "0123456789") && strings.ContainsAny(word, "abcdef")
}

func readmeProblems(text string) []string {
	var out []string
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) >= 250 {
		out = append(out, fmt.Sprintf("%d lines, want under 250", len(lines)))
	}
	for _, cmd := range []string{"make demo", "make test"} {
		if i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, cmd) }); i < 0 || i >= firstScreen {
			out = append(out, fmt.Sprintf("no line starts with %q in the first %d lines", cmd, firstScreen))
		}
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			out = append(out, fmt.Sprintf("line %d has %d characters, want at most 120", i+1, n))
		}
		for _, w := range hexRun.FindAllString(l, -1) {
			if commitHash(w) {
				out = append(out, fmt.Sprintf("line %d names a commit (%s)", i+1, w))
			}
		}
		if m := timing.FindString(l); m != "" {
			out = append(out, fmt.Sprintf("line %d says how long a run took (%q)", i+1, m))
		}
	}
	return out
}

func TestREADMERulesCatchWhatTheyShould(t *testing.T) {
	long := strings.Repeat("x", 121)
	bad := "`make test` took 15 min 50 s at e728636\nCI finished in 950 s.\n" + long + "\n"
	got := strings.Join(readmeProblems(bad), "\n")
	for _, want := range []string{"line 1 names a commit (e728636)", "line 1 says how long", "line 2 says how long", "line 3 has 121 characters"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	commands := "make demo\nmake test\n"
	if got := readmeProblems(commands + strings.Repeat("ok\n", 248)); len(got) != 1 {
		t.Errorf("250 lines: %v", got)
	}
	if got := strings.Join(readmeProblems(strings.Repeat("ok\n", 40)+commands), "\n"); !strings.Contains(got, `"make demo" in the first 40`) {
		t.Errorf("the commands below the first screen: %v", got)
	}
	fine := commands + "min_interval: 30s, 1m windows, port 7840:7840, sha256sums.txt, 1000000 rows, a deadbeef, in 5 topics\n"
	if got := readmeProblems(fine); len(got) != 0 {
		t.Errorf("false alarms: %v", got)
	}
}

// TestConfigExamplesLoad loads the README's smallest config and the full
// reference of docs/configuration.md, so an example cannot name a key the
// exporter refuses.
func TestConfigExamplesLoad(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "camunda")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ORDERS_DATABASE_URL", "postgres://exporter@db/orders")
	t.Setenv("CAMUNDA_DATABASE_URL", "postgres://exporter@db/camunda")
	for _, doc := range []string{"README.md", "docs/configuration.md"} {
		b, err := os.ReadFile(testkit.Path(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, block := range yamlBlocks(string(b)) {
			if !strings.HasPrefix(block.text, "camunda:") {
				continue
			}
			n++
			text := strings.ReplaceAll(block.text, "/run/secrets/camunda", pw)
			if _, err := config.Parse([]byte(text)); err != nil {
				t.Errorf("%s:%d: the example does not load: %v", doc, block.line, err)
			}
		}
		if n == 0 {
			t.Errorf("%s: no configuration example found", doc)
		}
	}
}

type link struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(\S+)`)
	htmlLink   = regexp.MustCompile(`(?i)\b(?:href|src)="([^"]+)"`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

// links returns the link targets of a Markdown text outside code blocks and
// code spans: inline links and images, reference definitions, and href and
// src attributes.
func links(text string) []link {
	var out []link
	for n, l := range proseLines(text) {
		l = codeSpan.ReplaceAllString(l, "")
		for _, re := range []*regexp.Regexp{inlineLink, refLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				out = append(out, link{strings.Trim(m[1], "<>"), n})
			}
		}
	}
	return out
}

// proseLines returns the lines outside fenced code blocks, by line number.
func proseLines(text string) map[int]string {
	out := map[int]string{}
	fence := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			out[n] = l
		}
	}
	return out
}

type block struct {
	text string
	line int
}

// yamlBlocks returns the contents of the ```yaml blocks of a Markdown text.
func yamlBlocks(text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		out = append(out, block{strings.Join(lines[start:i], "\n") + "\n", start + 1})
	}
	return out
}

func isExternal(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:")
}

var (
	atxHeading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\s+(?:name|id)="([^"]+)"`)
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text (and explicit <a name> or <a id> anchors).
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
	}
	// In document order, for the -1, -2 suffixes of repeated headings.
	lines := proseLines(text)
	for n := 1; n <= len(strings.Split(text, "\n")); n++ {
		l, ok := lines[n]
		if !ok {
			continue
		}
		m := atxHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if k := seen[s]; k > 0 {
			out[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor for a heading: its text (links reduced to their
// text) in lower case, every character but letters, digits, '-' and '_'
// dropped, and spaces turned into '-'.
func slug(heading string) string {
	heading = mdLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', r == '_', unicode.IsLetter(r), unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Read-only, proven: `TestExporterRoleReadsEverythingAndWritesNothing` (`test/reliability/readonly_test.go`)": "read-only-proven-testexporterrolereadseverythingandwritesnothing-testreliabilityreadonly_testgo",
		"The hard window: side effect done, completion lost":                                                         "the-hard-window-side-effect-done-completion-lost",
		"`GET /status.json`, schema version 1":                                                                       "get-statusjson-schema-version-1",
		"Routing and inhibition (`deploy/alertmanager.yml`)":                                                         "routing-and-inhibition-deployalertmanageryml",
		"See [the design](design.md) — twice":                                                                        "see-the-design--twice",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	a := headingAnchors("# A\n## What it means\n```\n# not a heading\n```\n## What it means\n### What it means\n")
	for _, want := range []string{"a", "what-it-means", "what-it-means-1", "what-it-means-2"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block became an anchor")
	}
}
