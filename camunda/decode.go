package camunda

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
)

// decode reads a 2xx response body into out and checks that it has the
// shape the engine gives: an object where an object is due and an array
// where a list is due (never null), a count that is there and not negative,
// a version that is not empty, list items with their id (and history
// entries with their timestamp). A body that decodes without error into
// zero values (`{}` for a count, `null` for a list) would otherwise read as
// "nothing there": an exporter must report a wrong answer as a failure, not
// as all clear.
func decode(body []byte, out any) error {
	trimmed := bytes.TrimSpace(body)
	if bytes.Equal(trimmed, []byte("null")) {
		return errors.New("the body is null")
	}
	if err := json.Unmarshal(trimmed, out); err != nil {
		return err
	}
	switch v := out.(type) {
	case shaped:
		return v.checkShape()
	case *[]ExternalTask:
		return checkEach(*v)
	case *[]ExternalTaskLogEntry:
		return checkEach(*v)
	case *[]Incident:
		return checkEach(*v)
	case *[]Job:
		return checkEach(*v)
	case *[]ProcessDefinition:
		return checkEach(*v)
	case *[]Deployment:
		return checkEach(*v)
	case *[]historyItem:
		return checkEach(*v)
	case *[]HistoricActivityInstance:
		return checkEach(*v)
	}
	return nil
}

// shaped is a response type that knows what it must contain.
type shaped interface{ checkShape() error }

func checkEach[T shaped](items []T) error {
	for i, it := range items {
		if err := it.checkShape(); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}

func needID(id string) error {
	if id == "" {
		return errors.New(`no "id"`)
	}
	return nil
}

func (t ExternalTask) checkShape() error      { return needID(t.ID) }
func (i Incident) checkShape() error          { return needID(i.ID) }
func (j Job) checkShape() error               { return needID(j.ID) }
func (d ProcessDefinition) checkShape() error { return needID(d.ID) }
func (d Deployment) checkShape() error        { return needID(d.ID) }

// needTime reports a history entry without its time: an entry the
// exporter cannot place in a window.
func needTime(t Time, name string) error {
	if t.IsZero() {
		return fmt.Errorf("no %q", name)
	}
	return nil
}

func (a HistoricActivityInstance) checkShape() error {
	return cmp.Or(needID(a.ID), needTime(a.StartTime, "startTime"))
}

func (e ExternalTaskLogEntry) checkShape() error {
	return cmp.Or(needID(e.ID), needTime(e.Timestamp, "timestamp"))
}

// countResult is the body of every .../count endpoint.
type countResult struct {
	Count *int64 `json:"count"`
}

func (c *countResult) checkShape() error {
	switch {
	case c.Count == nil:
		return errors.New(`no "count"`)
	case *c.Count < 0:
		return fmt.Errorf("a negative count (%d)", *c.Count)
	}
	return nil
}

func (c countResult) value() int64 { return *c.Count }

// versionResult is the body of GET /version.
type versionResult struct {
	Version string `json:"version"`
}

func (v *versionResult) checkShape() error {
	if v.Version == "" {
		return errors.New(`no "version"`)
	}
	return nil
}
