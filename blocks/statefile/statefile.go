// Package statefile is the file a source's state is kept in between two
// processes (--storage.path): one file per source, a small versioned
// envelope around one section per collector, written atomically and read
// back with every way it can be unusable named.
//
// On disk: the magic line, the format version (4 bytes, big-endian), the
// gob-encoded File, then a trailer of the body's length (8 bytes) and its
// SHA-256 (32 bytes). A file cut short, changed, or written by another
// format is refused as a whole (Problem), never half read.
//
// Write puts the file in place with a temporary file in the same
// directory, fsync, rename and an fsync of the directory: a crash leaves
// the previous file or the new one, never a mix.
package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Format is the version of the envelope this package writes and reads.
const Format = 1

var magic = []byte("workflow-exporter state\n")

// File is one source's state.
type File struct {
	Header
	// Sections are the collectors' states by collector name.
	Sections map[string]Section
}

// Header says whose state a file holds and when it was written.
type Header struct {
	// Kind and Name are the source's (camunda, database, delivery; the
	// configured name).
	Kind, Name string
	// Identity is what the source reads (an engine's URL and name, a
	// database's host, port and name): a state is restored only into a
	// source that reads the same thing.
	Identity string
	// Written is when the file was written (the exporter's clock).
	Written time.Time
	// Final says the file was written as the process stopped, after its
	// last collection: a successor may resume counting where it stopped.
	// A file written while the process ran (periodically) may be older
	// than what the process counted since.
	Final bool
	// Program is the exporter version that wrote it, for the log.
	Program string
}

// Section is one collector's state: Key says what it is about (the
// collector's state version and what it reads), Data is the collector's
// own encoding.
type Section struct {
	Key  string
	Data []byte
}

// Reason classes why a file is not restored.
type Reason string

// The reasons a file is not restored.
const (
	Missing Reason = "missing"
	Corrupt Reason = "corrupt"
	Stale   Reason = "stale"
	Foreign Reason = "foreign"
)

// Problem is why a file cannot be restored, with its path and the detail.
type Problem struct {
	Reason Reason
	Path   string
	Detail string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("state file %s %s: %s", p.Path, p.Reason, p.Detail)
}

// Path is the file of the source kind/name in dir. The name is a config
// name (letters, digits, _ . : -); ':' becomes '_' (the header keeps the
// name, so two names that map to one file are told apart).
func Path(dir, kind, name string) string {
	return filepath.Join(dir, kind+"-"+strings.ReplaceAll(name, ":", "_")+".state")
}

// Encode returns the file's bytes.
func Encode(f *File) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write(magic)
	_ = binary.Write(&buf, binary.BigEndian, uint32(Format))
	start := buf.Len()
	if err := gob.NewEncoder(&buf).Encode(f); err != nil {
		return nil, fmt.Errorf("state of %s %s: encode: %w", f.Kind, f.Name, err)
	}
	body := buf.Bytes()[start:]
	sum := sha256.Sum256(body)
	_ = binary.Write(&buf, binary.BigEndian, uint64(len(body)))
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// Decode reads the bytes Encode wrote; anything else is a Corrupt problem.
func Decode(path string, b []byte) (*File, error) {
	corrupt := func(format string, args ...any) error {
		return &Problem{Reason: Corrupt, Path: path, Detail: fmt.Sprintf(format, args...)}
	}
	const trailer = 8 + sha256.Size
	if !bytes.HasPrefix(b, magic) {
		return nil, corrupt("not a workflow-exporter state file")
	}
	b = b[len(magic):]
	if len(b) < 4+trailer {
		return nil, corrupt("cut short (%d bytes)", len(b))
	}
	if v := binary.BigEndian.Uint32(b); v != Format {
		return nil, corrupt("format %d, this exporter reads format %d", v, Format)
	}
	b = b[4:]
	body, tail := b[:len(b)-trailer], b[len(b)-trailer:]
	if n := binary.BigEndian.Uint64(tail); n != uint64(len(body)) {
		return nil, corrupt("cut short or extended (%d bytes of %d)", len(body), n)
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], tail[8:]) {
		return nil, corrupt("checksum mismatch")
	}
	var f File
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&f); err != nil {
		return nil, corrupt("%v", err)
	}
	return &f, nil
}

// Write encodes f and puts it at path atomically.
func Write(path string, f *File) error {
	b, err := Encode(f)
	if err != nil {
		return err
	}
	return WriteBytes(path, b)
}

// WriteBytes puts b at path atomically (temporary file, fsync, rename,
// fsync of the directory).
func WriteBytes(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Read reads the file at path: a Missing problem when there is none, a
// Corrupt one when it cannot be decoded.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Problem{Reason: Missing, Path: path, Detail: "no state file (first start, or a new volume)"}
	}
	if err != nil {
		return nil, &Problem{Reason: Corrupt, Path: path, Detail: err.Error()}
	}
	return Decode(path, b)
}

// Check says whether f is the state of the source kind/name reading
// identity, written at most maxAge before now: a Foreign or Stale problem
// if not.
func Check(path string, f *File, kind, name, identity string, now time.Time, maxAge time.Duration) error {
	switch {
	case f.Kind != kind || f.Name != name:
		return &Problem{Reason: Foreign, Path: path, Detail: fmt.Sprintf("holds the state of %s %s", f.Kind, f.Name)}
	case f.Identity != identity:
		return &Problem{Reason: Foreign, Path: path, Detail: fmt.Sprintf("was written for %s, this source reads %s", f.Identity, identity)}
	case now.Sub(f.Written) > maxAge:
		return &Problem{Reason: Stale, Path: path, Detail: fmt.Sprintf("written %s ago (at %s), more than --storage.max-age (%s)",
			now.Sub(f.Written).Round(time.Second), f.Written.UTC().Format(time.RFC3339), maxAge)}
	case f.Written.After(now.Add(time.Minute)):
		return &Problem{Reason: Stale, Path: path, Detail: fmt.Sprintf("written in the future (at %s): a clock went back", f.Written.UTC().Format(time.RFC3339))}
	}
	return nil
}

// Writable makes sure dir exists and a file can be put in it, at start-up,
// so a storage path that cannot work is refused naming the flag.
func Writable(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	probe := filepath.Join(dir, ".write-probe")
	if err := WriteBytes(probe, []byte("ok\n")); err != nil {
		return err
	}
	return os.Remove(probe)
}
