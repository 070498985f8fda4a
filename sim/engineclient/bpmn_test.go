package engineclient_test

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
)

// element is any XML element, with its attributes by local name.
type element struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []element  `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (e element) attr(name string) string {
	for _, a := range e.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// process parses a model and returns its process element.
func process(t *testing.T, model []byte) element {
	t.Helper()
	var defs element
	if err := xml.Unmarshal(model, &defs); err != nil {
		t.Fatalf("not XML: %v\n%s", err, model)
	}
	for _, c := range defs.Children {
		if c.XMLName.Local == "process" {
			if c.attr("isExecutable") != "true" || c.attr("historyTimeToLive") != "P1D" {
				t.Errorf("process %s: isExecutable %q, historyTimeToLive %q", c.attr("id"), c.attr("isExecutable"), c.attr("historyTimeToLive"))
			}
			return c
		}
	}
	t.Fatalf("no process:\n%s", model)
	return element{}
}

// path follows the sequence flows from the start event and describes each
// service task on the way: "id topic|expression [async] [xN] [catches]".
func path(t *testing.T, p element) []string {
	t.Helper()
	next, byID := map[string]string{}, map[string]element{}
	caught := map[string]bool{}
	for _, c := range p.Children {
		byID[c.attr("id")] = c
		switch c.XMLName.Local {
		case "sequenceFlow":
			if _, dup := next[c.attr("sourceRef")]; !dup {
				next[c.attr("sourceRef")] = c.attr("targetRef")
			}
		case "boundaryEvent":
			caught[c.attr("attachedToRef")] = true
		}
	}
	var out []string
	for id := next["start"]; id != "end"; id = next[id] {
		c, ok := byID[id]
		if !ok || len(out) > 10 {
			t.Fatalf("the flow from start does not reach end (at %q)", id)
		}
		d := id + " " + c.attr("topic") + c.attr("expression")
		if c.attr("asyncBefore") == "true" {
			d += " async"
		}
		for _, m := range c.Children {
			if m.XMLName.Local == "multiInstanceLoopCharacteristics" {
				d += " x" + strings.TrimSpace(m.Children[0].Text)
			}
		}
		if caught[id] {
			d += " catches"
		}
		out = append(out, d)
	}
	return out
}

func TestChain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model []byte
		want  []string
	}{
		{"external tasks in a row", engineclient.ExternalTaskProcess("p_one", "a.charge", "a.ship"), []string{"task_1 a.charge", "task_2 a.ship"}},
		{"a lane of the simulator", engineclient.Chain("sim-orders", engineclient.Task{ID: "submit-orders", Name: "submit", Topic: "sim.orders", CatchErrors: true}),
			[]string{"submit-orders sim.orders catches"}},
		{"a benchmark's multi-instance task", engineclient.Chain("bench_001", engineclient.Task{ID: "work", Topic: "bench.topic-001", Instances: 255}),
			[]string{"work bench.topic-001 x255"}},
		{"a failing async job", engineclient.Chain("p_jobs", engineclient.Task{ID: "reserve", Expression: "${noSuchBean.reserve()}", Async: true}),
			[]string{"reserve ${noSuchBean.reserve()} async"}},
		{"names that need escaping", engineclient.ExternalTaskProcess("p_x", "a<b&c"), []string{"task_1 a<b&c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := path(t, process(t, tc.model))
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("path %q, want %q", got, tc.want)
			}
		})
	}
}

// The fixed models parse, and are the executable process of their key
// with a history time to live.
func TestModelsParse(t *testing.T) {
	for _, tc := range []struct {
		key   string
		model []byte
	}{
		{"p_timer", engineclient.TimerProcess("p_timer")},
		{"p_async", engineclient.AsyncProcess("p_async")},
		{"p_error", engineclient.ErrorProcess("p_error", "t.error", "p_error_interrupt")},
		{"p_esp", engineclient.ErrorEventSubprocessProcess("p_esp", "t.esp")},
	} {
		if p := process(t, tc.model); p.attr("id") != tc.key {
			t.Errorf("process id %q, want %q", p.attr("id"), tc.key)
		}
	}
}
