package dashboards

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/blocks/promlabel"
)

func TestLegendRegex(t *testing.T) {
	for _, c := range []struct {
		legend, match, want string
		ok                  bool
	}{
		{outboxAgeLegend, `event_type="Order.Cancelled"`, `^.* .* Order\.Cancelled$`, true},
		{outboxAgeLegend, `database="orders", aggregate_type=~"Quote|Order"`, `^orders (?:Quote|Order) .*$`, true},
		{waitingAgeLegend, `topic!="x"`, "", false},
		{"{{engine}}", `topic="x"`, "", false},
	} {
		got, ok := legendRegex(c.legend, promlabel.Selector(c.match))
		if got != c.want || ok != c.ok {
			t.Errorf("legendRegex(%q, %q) = %q, %v; want %q, %v", c.legend, c.match, got, ok, c.want, c.ok)
		}
	}
}

// The panels follow the alerts config: its thresholds, a selector's own
// thresholds as an override of the series it matches, and its runbooks.
func TestDashboardsFollowTheAlertsConfig(t *testing.T) {
	cfg, err := rules.Parse([]byte(`
runbook_base_url: https://wiki.example.com/runbooks
camunda: {backlog_stalled_age: 20m, backlog_stalled_for: 5m}
alerts:
  CamundaExternalTaskBacklogStalled:
    selectors:
      - match: topic="billing.nightly-export"
        set: {camunda: {backlog_stalled_age: 2h}}
`))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Render(Options{Alerts: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, d := range ds {
		js := string(d.JSON)
		if strings.Contains(js, "github.com/workflow-exporter/workflow-exporter/blob/") {
			t.Errorf("%s links the repository's runbooks, not runbook_base_url", d.UID)
		}
		if d.UID != UIDExternalTask {
			continue
		}
		var dash struct {
			Panels []struct {
				Title       string `json:"title"`
				FieldConfig struct {
					Defaults struct {
						Thresholds struct {
							Steps []struct {
								Value *float64 `json:"value"`
							} `json:"steps"`
						} `json:"thresholds"`
					} `json:"defaults"`
					Overrides []struct {
						Matcher struct {
							ID      string `json:"id"`
							Options string `json:"options"`
						} `json:"matcher"`
						Properties []struct {
							ID    string `json:"id"`
							Value json.RawMessage
						} `json:"properties"`
					} `json:"overrides"`
				} `json:"fieldConfig"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(d.JSON, &dash); err != nil {
			t.Fatal(err)
		}
		for _, p := range dash.Panels {
			if p.Title != "Oldest waiting task" && p.Title != "Oldest waiting task by topic" {
				continue
			}
			found++
			s := p.FieldConfig.Defaults.Thresholds.Steps
			if len(s) != 3 || *s[1].Value != 1200 || *s[2].Value != 1500 {
				t.Errorf("%s: thresholds %v, want 20m and 25m from the config", p.Title, s)
			}
			if p.Title != "Oldest waiting task by topic" {
				continue
			}
			if len(p.FieldConfig.Overrides) != 1 || p.FieldConfig.Overrides[0].Matcher.Options != `^.* billing\.nightly-export$` ||
				!strings.Contains(string(p.FieldConfig.Overrides[0].Properties[0].Value), "7200") {
				t.Errorf("%s: overrides %+v, want the selector's 2h on the series of topic billing.nightly-export", p.Title, p.FieldConfig.Overrides)
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d of the two waiting-age panels", found)
	}
	// A bad alerts config is an error naming its key.
	bad := rules.Default()
	bad.Camunda.BacklogStalledWindow = 0
	if _, err := Render(Options{Alerts: &bad}); err == nil || !strings.Contains(err.Error(), "camunda.backlog_stalled_window") {
		t.Errorf("bad alerts config: %v, want an error naming camunda.backlog_stalled_window", err)
	}
}
