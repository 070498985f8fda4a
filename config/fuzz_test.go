package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds the config loader arbitrary documents. Whatever the
// input: no panic and no hang; an error names what is wrong without Go's
// type names, and a line it names exists; an accepted document configures a
// source, and its defaults and validation are settled (checking it again
// accepts it and changes nothing).
// Regression cases found by fuzzing live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, file := range []string{"../../deploy/config.example.yml"} {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("camunda:\n  - name: main\n    url: http://localhost:8080/engine-rest\n    min_interval: 30s\n    topics: [fulfillment.submit-command]\n" +
		"databases:\n  - name: orders\n    dsn: postgres://exporter@db/orders\n    tables:\n      idempotency: {table: workflow_idempotency_record}\n      outbox: {}\n"))
	f.Add([]byte("databases: [{name: orders, dsn: 'postgres://127.0.0.1/x', min_interval: 30}]\n"))
	f.Add([]byte("camunda:\n  - name: main\n    url: http://localhost:8080/engine-rest\n    tabels: 1\n"))
	f.Add([]byte("databases:\n  - &d {name: a, dsn: x}\n  - <<: *d\n    name: b\n---\n"))
	f.Add([]byte("databases: [{name: a, dsn: x, tables: {idempotency: , outbox: {statuses: {PENDING: [P]}}}}]"))
	f.Add([]byte("camunda: [{name: m, url: 'http://x', database: {dsn: y, time_zone: Mars/Olympus}}]"))
	f.Add([]byte("databases: [{name: a, dsn: x, tables: {outbox: {table: cdc.outbox, relay: {slot: dbz, publication: dbz_publication}}}}]"))
	f.Add([]byte("databases: [{name: a, dsn: x, tables: {outbox: {relay: {slot: dbz}, columns: {status: state}}}}]"))
	lineRE := regexp.MustCompile(`\(line (\d+)\)|line (\d+):`)
	f.Fuzz(func(t *testing.T, doc []byte) {
		cfg, err := Parse(doc)
		if err != nil {
			msg := err.Error()
			if msg == "" {
				t.Fatal("empty error")
			}
			for _, goName := range []string{"config.", "reflect.", "*model.", "struct {"} {
				if strings.Contains(msg, goName) {
					t.Errorf("error shows Go's %q: %s", goName, msg)
				}
			}
			lines := yamlLines(doc)
			for _, m := range lineRE.FindAllStringSubmatch(msg, -1) {
				if lines < 0 {
					break // not UTF-8: the decoder counts in the decoded text
				}
				n, _ := strconv.Atoi(m[1] + m[2])
				if n < 1 || n > lines {
					t.Errorf("error names line %d of a %d-line document: %s", n, lines, msg)
				}
			}
			return
		}
		if len(cfg.Camunda)+len(cfg.Databases) == 0 {
			t.Fatal("accepted a document that configures no source")
		}
		// Defaults and validation are settled: finishing the accepted
		// configuration again accepts it and changes nothing.
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var again Config
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		if err := again.finish(); err != nil {
			t.Fatalf("an accepted configuration fails validation when checked again: %v\n%s", err, doc)
		}
		if !reflect.DeepEqual(&again, cfg) {
			t.Fatalf("an accepted configuration changes when its defaults are applied again:\n%+v\n%+v", cfg, &again)
		}
	})
}

// yamlLines counts the lines of a UTF-8 document as YAML does: \n, \r\n, a
// lone \r, and U+0085, U+2028 and U+2029 end a line. -1 when the document
// is not UTF-8 (YAML also reads UTF-16).
func yamlLines(doc []byte) int {
	if !utf8.Valid(doc) {
		return -1
	}
	s := strings.ReplaceAll(string(doc), "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

// TestLoadNamesTheFile: loading a file is Parse, with the file named.
func TestLoadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yml")
	if err := os.WriteFile(p, []byte("databases: [{name: a, dsn: x, min_interval: 30}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.HasPrefix(err.Error(), "config file "+p+": ") {
		t.Fatalf("Load error %v does not name the file", err)
	}
}
