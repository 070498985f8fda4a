package alertrouting

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/config"
	"github.com/prometheus/alertmanager/dispatch"
	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
)

func loadAlertmanager(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.LoadFile(filepath.Join(repoRoot, "deploy", "alertmanager.yml"))
	if err != nil {
		t.Fatalf("deploy/alertmanager.yml: %v", err)
	}
	return cfg
}

// receiverFor is what each severity must reach (none is the watchdog's,
// which its own route takes by name).
var receiverFor = map[string]string{
	rulefile.Critical: "pager",
	rulefile.Warning:  "ticket",
	rulefile.Info:     "null",
	rulefile.None:     "watchdog",
}

// groupBy is what every route groups by: the alert and the labels of its
// lane, so one lane's incident is one notification and two lanes are two.
var groupBy = []model.LabelName{"alertname", "database", "engine", "topic", "scope", "aggregate_type", "source_system", "delivery"}

func TestEverySeverityHasAReceiver(t *testing.T) {
	for _, s := range rulefile.Severities() {
		if _, ok := receiverFor[s]; !ok {
			t.Errorf("severity %s: no receiver expected for it here", s)
		}
	}
}

// route matches labels the way Alertmanager's dispatcher (and amtool config
// routes test) does and returns the matched routes.
func route(cfg *config.Config, ls model.LabelSet) []*dispatch.Route {
	return dispatch.NewRoute(cfg.Route, nil).Match(ls)
}

// TestEveryAlertReachesItsReceiver reads every alert and its severity from
// the rule files, so a new alert cannot go untested.
func TestEveryAlertReachesItsReceiver(t *testing.T) {
	cfg := loadAlertmanager(t)
	for _, r := range loadAlerts(t) {
		sev := r.Labels["severity"]
		want, ok := receiverFor[sev]
		if !ok {
			t.Errorf("%s: severity %q is not one of critical, warning, info", r.Alert, sev)
			continue
		}
		ls := model.LabelSet{
			"alertname": model.LabelValue(r.Alert),
			"severity":  model.LabelValue(sev),
			"job":       "workflow-exporter",
			"namespace": "monitoring",
			"database":  "orders",
			"engine":    "main",
		}
		rs := route(cfg, ls)
		if len(rs) != 1 {
			t.Errorf("%s: matched %d routes, want exactly 1", r.Alert, len(rs))
			continue
		}
		if got := rs[0].RouteOpts.Receiver; got != want {
			t.Errorf("%s (severity %s): routed to %q, want %q", r.Alert, sev, got, want)
		}
		if got := sortedGroupBy(rs[0]); !reflect.DeepEqual(got, groupBy) {
			t.Errorf("%s: grouped by %v, want %v", r.Alert, got, groupBy)
		}
	}
}

func sortedGroupBy(r *dispatch.Route) []model.LabelName {
	var out []model.LabelName
	for _, l := range groupBy {
		if _, ok := r.RouteOpts.GroupBy[l]; ok {
			out = append(out, l)
		}
	}
	if len(out) != len(r.RouteOpts.GroupBy) {
		for l := range r.RouteOpts.GroupBy {
			out = append(out, "unexpected:"+l)
		}
	}
	return out
}

// An alert without a known severity is a bug in a rule; it must reach a
// human (ticket) rather than vanish in the null receiver.
func TestUnknownSeverityGoesToTicket(t *testing.T) {
	cfg := loadAlertmanager(t)
	for _, ls := range []model.LabelSet{
		{"alertname": "SomethingNew"},
		{"alertname": "SomethingNew", "severity": "page"},
		{"alertname": "SomethingNew", "severity": ""},
	} {
		rs := route(cfg, ls)
		if len(rs) != 1 || rs[0].RouteOpts.Receiver != "ticket" {
			var got []string
			for _, r := range rs {
				got = append(got, r.RouteOpts.Receiver)
			}
			t.Errorf("%v: routed to %v, want [ticket]", ls, got)
		}
	}
}

func TestPagerRepeatsMoreOftenThanTickets(t *testing.T) {
	cfg := loadAlertmanager(t)
	page := route(cfg, model.LabelSet{"alertname": "WorkflowOutboxBacklogStalled", "severity": "critical"})[0]
	ticket := route(cfg, model.LabelSet{"alertname": "WorkflowInboxBacklogOld", "severity": "warning"})[0]
	if page.RouteOpts.RepeatInterval >= ticket.RouteOpts.RepeatInterval {
		t.Errorf("pager repeat_interval %s should be shorter than ticket %s", page.RouteOpts.RepeatInterval, ticket.RouteOpts.RepeatInterval)
	}
	if page.RouteOpts.GroupWait > ticket.RouteOpts.GroupWait {
		t.Errorf("pager group_wait %s should not exceed ticket %s", page.RouteOpts.GroupWait, ticket.RouteOpts.GroupWait)
	}
}

func TestReceiversExist(t *testing.T) {
	cfg := loadAlertmanager(t)
	names := map[string]bool{}
	for _, r := range cfg.Receivers {
		names[r.Name] = true
	}
	for _, want := range []string{"pager", "ticket", "null", "watchdog"} {
		if !names[want] {
			t.Errorf("receiver %q missing", want)
		}
	}
}

// The watchdog's notifications are the dead man's switch's heartbeat: sent
// at once and repeated every minute, whatever its severity label says.
func TestWatchdogHeartbeatsEveryMinute(t *testing.T) {
	cfg := loadAlertmanager(t)
	rs := route(cfg, model.LabelSet{"alertname": model.LabelValue(rules.WorkflowExporterWatchdog), "severity": "critical"})
	if len(rs) != 1 || rs[0].RouteOpts.Receiver != "watchdog" {
		t.Fatalf("the watchdog routed to %v, want only watchdog", rs)
	}
	o := rs[0].RouteOpts
	if o.GroupWait != 0 || o.GroupInterval > time.Minute || o.RepeatInterval > time.Minute {
		t.Errorf("watchdog route: group_wait %s, group_interval %s, repeat_interval %s; want 0s, at most 1m, at most 1m", o.GroupWait, o.GroupInterval, o.RepeatInterval)
	}
}
