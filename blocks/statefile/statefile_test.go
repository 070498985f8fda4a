package statefile

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func sample() *File {
	return &File{
		Header:   Header{Kind: "camunda", Name: "main", Identity: "http://e:8080/engine-rest default", Written: t0, Final: true, Program: "test"},
		Sections: map[string]Section{"camunda": {Key: "camunda/v1", Data: []byte{1, 2, 3}}},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir, "camunda", "main:1")
	if filepath.Base(path) != "camunda-main_1.state" {
		t.Fatalf("path %s", path)
	}
	if err := Write(path, sample()); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sample()) {
		t.Fatalf("read %+v, wrote %+v", got, sample())
	}
	// Only the file: the temporary one was renamed.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries after a write", len(entries))
	}
	if err := Check(path, got, "camunda", "main", sample().Identity, t0.Add(time.Minute), time.Hour); err != nil {
		t.Fatalf("a fresh file of the same source: %v", err)
	}
}

// Every way a file can be unusable is a Problem naming its reason; none
// panics or returns a half-read state.
func TestUnusableFiles(t *testing.T) {
	good, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(magic)+20] ^= 0x40
	otherFormat := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(otherFormat[len(magic):], Format+1)
	cases := []struct {
		name   string
		bytes  []byte // nil: no file
		reason Reason
		detail string
	}{
		{"missing", nil, Missing, "no state file"},
		{"empty", []byte{}, Corrupt, "not a workflow-exporter state file"},
		{"another file", []byte("groups:\n- name: x\n"), Corrupt, "not a workflow-exporter state file"},
		{"cut short", good[:len(good)-10], Corrupt, "cut short"},
		{"cut in the header", good[:len(magic)+6], Corrupt, "cut short"},
		{"a flipped bit", flipped, Corrupt, "checksum mismatch"},
		{"another format", otherFormat, Corrupt, "format 2"},
		{"appended to", append(append([]byte(nil), good...), 0), Corrupt, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.state")
			if c.bytes != nil {
				if err := os.WriteFile(path, c.bytes, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			f, err := Read(path)
			var p *Problem
			if !errors.As(err, &p) || p.Reason != c.reason || !strings.Contains(p.Detail, c.detail) || f != nil {
				t.Fatalf("Read = %v, %v; want a %s problem mentioning %q", f, err, c.reason, c.detail)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("%q does not name the file", err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	f := sample()
	cases := []struct {
		name                string
		kind, src, identity string
		now                 time.Time
		reason              Reason
	}{
		{"another source", "camunda", "other", f.Identity, t0, Foreign},
		{"another kind", "database", "main", f.Identity, t0, Foreign},
		{"another engine", "camunda", "main", "http://f:8080/engine-rest default", t0, Foreign},
		{"older than the bound", "camunda", "main", f.Identity, t0.Add(61 * time.Minute), Stale},
		{"from the future", "camunda", "main", f.Identity, t0.Add(-2 * time.Minute), Stale},
	}
	for _, c := range cases {
		err := Check("p", f, c.kind, c.src, c.identity, c.now, time.Hour)
		var p *Problem
		if !errors.As(err, &p) || p.Reason != c.reason {
			t.Errorf("%s: Check = %v, want %s", c.name, err, c.reason)
		}
	}
}

func TestWritable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := Writable(dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the probe stayed: %v", entries)
	}
	ro := t.TempDir()
	if err := os.Chmod(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(ro, 0o700) })
	if os.Geteuid() != 0 {
		if err := Writable(ro); err == nil {
			t.Fatal("a read-only directory is writable")
		}
	}
}
