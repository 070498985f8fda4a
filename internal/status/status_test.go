package status

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// t0 is the tests' clock (testkit.At counts from it).
var t0 = testkit.Epoch()

// twoSources are an engine and a database whose lists include a join with
// the engine.
func twoSources(engineUp bool) []Snapshot {
	engineLists := []collectors.List{{Kind: vocab.KindLockExpired, Engine: "main", Source: collectors.SourceRef{Kind: "camunda", Name: "main"}, Total: 1,
		Items: []collectors.Item{{Engine: "main", ExternalTaskID: "t1", Since: testkit.At(-60), AgeSeconds: 60}}}}
	return []Snapshot{
		{Kind: "database", Name: "orders", MinInterval: 30 * time.Second, Collected: true, Started: t0, Up: true, LastSuccess: t0,
			Lists: []collectors.List{
				{Kind: vocab.KindOutboxPending, Source: collectors.SourceRef{Kind: "database", Name: "orders"}, Database: "orders", Table: "event_outbox", Total: 0},
				{Kind: vocab.KindInDoubt, Source: collectors.SourceRef{Kind: "database", Name: "orders"}, Database: "orders", Table: "workflow_idempotency_record", Engine: "main", Total: 1,
					Items: []collectors.Item{{Engine: "main", ExternalTaskID: "t1", IdempotencyKey: "k1", Since: testkit.At(-120), AgeSeconds: 120}}},
			}},
		{Kind: "camunda", Name: "main", MinInterval: 30 * time.Second, Collected: true, Started: t0, Up: engineUp,
			Failures: map[bool][]Failure{false: {{Collector: "connect", Class: "connection refused"}}}[engineUp],
			Lists:    map[bool][]collectors.List{true: engineLists}[engineUp]},
		{Kind: "database", Name: "billing", MinInterval: time.Minute},
	}
}

func TestBuildListsNothingFromSourcesDown(t *testing.T) {
	r := Build(twoSources(true), Options{MaxItems: 50}, t0.Add(time.Second))
	var kinds []string
	for _, l := range r.Lists {
		kinds = append(kinds, l.Kind+"@"+l.Source.Name)
	}
	// Kind order first: the outbox page, then in doubt, then the engine's.
	if strings.Join(kinds, ",") != "outbox_pending@orders,in_doubt@orders,lock_expired@main" {
		t.Errorf("lists %v", kinds)
	}
	var states []string
	for _, s := range r.Sources {
		states = append(states, s.Kind+"/"+s.Name+"="+s.State)
	}
	if strings.Join(states, ",") != "camunda/main=up,database/billing=not_collected,database/orders=up" {
		t.Errorf("sources %v", states)
	}
	l := r.Lists[1]
	if a, _ := rules.Lookup(rules.WorkflowIdempotencyInDoubt); l.Alert != a.Name || l.Severity != a.Severity || l.Action == "" ||
		l.RunbookURL != rules.DefaultRunbookBaseURL+"/WorkflowIdempotencyInDoubt.md" {
		t.Errorf("in_doubt list: %+v", l)
	}

	// The engine down: its own lists are gone (poll keeps none of a source
	// that is down), and so is the join that named its tasks; the
	// database's own lists stay.
	r = Build(twoSources(false), Options{MaxItems: 50, RunbookBaseURL: "https://runbooks.example/wf/"}, t0)
	if len(r.Lists) != 1 || r.Lists[0].Kind != vocab.KindOutboxPending {
		t.Fatalf("with the engine down: %+v", r.Lists)
	}
	if r.Lists[0].RunbookURL != "https://runbooks.example/wf/WorkflowOutboxOldestEventTooOld.md" {
		t.Errorf("runbook %s", r.Lists[0].RunbookURL)
	}
	if s := r.Sources[0]; s.State != StateDown || s.Up || len(s.Failures) != 1 {
		t.Errorf("engine source %+v", s)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"items":[]`) || strings.Contains(string(b), `"items":null`) {
		t.Errorf("an empty list must have items: [] for scripts: %s", b)
	}
}

// TestEveryKindHasAnAlertWithARunbook: the page links the runbook of an
// alert of alerts/rules, whose runbook exists.
func TestEveryKindHasAnAlertWithARunbook(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range kinds {
		a, ok := rules.Lookup(k.alert)
		if !ok {
			t.Errorf("kind %s: alert %q is not in alerts/rules", k.kind, k.alert)
			continue
		}
		if _, err := os.Stat(testkit.Path(t, a.RunbookPath())); err != nil {
			t.Errorf("kind %s: %v", k.kind, err)
		}
		if seen[k.kind] || k.title == "" || k.action == "" {
			t.Errorf("kind %s: duplicate, or no title or action", k.kind)
		}
		seen[k.kind] = true
	}
}

// TestRenderedPage: the HTML page shows the sources and their state, every
// list with its title, where it comes from, its action and a runbook link
// on every row, ages as of now, how many more exist, what was checked and
// found empty, and what is not listed because its source is down; values
// from data are escaped; there is no script.
func TestRenderedPage(t *testing.T) {
	snaps := twoSources(false)
	snaps[0].Lists = append(snaps[0].Lists, collectors.List{Kind: vocab.KindUnknownOutcome, Source: collectors.SourceRef{Kind: "database", Name: "orders"}, Database: "orders",
		Table: "workflow_idempotency_record", Total: 5, Items: []collectors.Item{
			{Scope: "ORDER", IdempotencyKey: `<script>alert(1)</script>`, Status: "UNKNOWN_OUTCOME", Since: testkit.At(-3600), AgeSeconds: 3600},
			{Scope: "ORDER", IdempotencyKey: "k-2", Status: "UNKNOWN_OUTCOME", Since: testkit.At(-60), AgeSeconds: 60},
		}})
	snaps[0].Lists[1].Items = nil // in doubt: never shown with the engine down anyway
	r := Build(snaps, Options{MaxItems: 2}, t0.Add(90*time.Second))
	// Build returns lists whose More the sink set; here the fixture sets it.
	for i := range r.Lists {
		r.Lists[i].More = r.Lists[i].Total > len(r.Lists[i].Items)
	}
	var b bytes.Buffer
	if err := NewHandlers(nil, HandlerOptions{}).Render(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<meta name="viewport" content="width=device-width, initial-scale=1">`,
		`@media (max-width: 760px)`,
		`<td>camunda <strong>main</strong></td>`, `<span class="badge state-down">down</span>`, `connect: connection refused`,
		`<span class="badge state-not_collected">not_collected</span>`,
		`Not listed: camunda main, database billing (down or not collected yet)`,
		`<h3>Unknown outcome <span class="count">5</span></h3>`,
		`database orders, table workflow_idempotency_record · alert <code>WorkflowUnknownOutcomeRecords</code>`,
		`Ask the external system whether it happened; never retry blindly.`,
		`<th>Since</th><th>Scope</th><th>Idempotency key</th><th>Status</th><th>Runbook</th>`,
		`&lt;script&gt;alert(1)&lt;/script&gt;`,
		// ages as of the page: the item's age at collection plus the 90 s since
		`<td data-label="Since" title="2026-12-03T09:00:00Z">1h 1m</td>`,
		`<td data-label="Since" title="2026-12-03T09:59:00Z">2m 30s</td>`,
		`<a href="` + rules.DefaultRunbookBaseURL + `/WorkflowUnknownOutcomeRecords.md" title="WorkflowUnknownOutcomeRecords">runbook</a></td></tr>`,
		`Showing the 2 oldest of 5 (status.max_items).`,
		`<li>Oldest pending outbox events: database orders, table event_outbox</li>`,
		`<a href="status.json">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := strings.Count(page, `/WorkflowUnknownOutcomeRecords.md" title="WorkflowUnknownOutcomeRecords">runbook</a></td>`); n != 2 {
		t.Errorf("%d rows link their runbook, want 2", n)
	}
	for _, bad := range []string{"<script", "in_doubt", "Lock lapsed"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}

	// Nothing wrong anywhere: the page says so.
	b.Reset()
	if err := NewHandlers(nil, HandlerOptions{}).Render(&b, Build(twoSources(true)[:1], Options{MaxItems: 2}, t0)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="no-problems"`) {
		t.Error("a list with an item, yet the page says no problems")
	}
	// Every item names the list's engine, which its header says: no
	// engine column.
	if strings.Contains(b.String(), `<th>Engine</th>`) || !strings.Contains(b.String(), `<th>Since</th><th>External task id</th><th>Idempotency key</th><th>Runbook</th>`) {
		t.Errorf("columns of the in_doubt list:\n%s", b.String())
	}
	b.Reset()
	clean := twoSources(true)[:1]
	clean[0].Lists = clean[0].Lists[:1]
	if err := NewHandlers(nil, HandlerOptions{}).Render(&b, Build(clean, Options{MaxItems: 2}, t0)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `No current problems in the sources that are up.`) {
		t.Error("no problems, and the page does not say so")
	}
}

// fakeProvider records the deadline it was given.
type fakeProvider struct {
	snaps    []Snapshot
	deadline time.Duration
}

func (f *fakeProvider) StatusSnapshots(ctx context.Context) []Snapshot {
	if d, ok := ctx.Deadline(); ok {
		f.deadline = time.Until(d)
	}
	return f.snaps
}

func TestHandlers(t *testing.T) {
	p := &fakeProvider{snaps: twoSources(true)}
	h := NewHandlers(p, HandlerOptions{Options: Options{MaxItems: 50}, Now: func() time.Time { return t0 },
		Budget: func(*http.Request) time.Duration { return 3 * time.Second }})
	for path, handler := range map[string]http.Handler{"/status": h.HTML(), "/status.json": h.JSON()} {
		p.deadline = 0
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-store" || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: %d %v", path, rec.Code, rec.Header())
		}
		if p.deadline <= 2*time.Second || p.deadline > 3*time.Second {
			t.Errorf("%s: the sources were refreshed with %s left, want the 3 s budget", path, p.deadline)
		}
		if path == "/status.json" {
			var r Report
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.SchemaVersion != SchemaVersion || !r.GeneratedAt.Equal(t0) || len(r.Lists) != 3 ||
				rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("JSON: %v %+v", err, r)
			}
		}
	}
}

// A long list leads with its groups (count and oldest per scope, topic,
// type or worker) and a few examples each; every row stays one click away.
func TestPageGroupsAListWithAFewExamplesEach(t *testing.T) {
	var items []collectors.Item
	for i := range 8 {
		scope := "ORDER"
		if i%4 == 3 {
			scope = "QUOTE"
		}
		items = append(items, collectors.Item{Scope: scope, IdempotencyKey: "k-" + string(rune('a'+i)), Status: "UNKNOWN_OUTCOME",
			Since: testkit.At(-float64(3600 - 60*i)), AgeSeconds: float64(3600 - 60*i)})
	}
	snaps := []Snapshot{{Kind: "database", Name: "orders", MinInterval: 30 * time.Second, Collected: true, Started: t0, Up: true, LastSuccess: t0,
		Lists: []collectors.List{{Kind: vocab.KindUnknownOutcome, Source: collectors.SourceRef{Kind: "database", Name: "orders"}, Database: "orders",
			Table: "workflow_idempotency_record", Total: 8, Items: items}}}}
	var b bytes.Buffer
	if err := NewHandlers(nil, HandlerOptions{}).Render(&b, Build(snaps, Options{MaxItems: 50}, t0)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<tr><td>scope ORDER</td><td>6</td><td>1h 0m</td></tr>`,
		`<tr><td>scope QUOTE</td><td>2</td><td>57m 0s</td></tr>`,
		`<h4 class="group">scope ORDER <span class="count">6</span></h4>`,
		`<p class="more">3 of 6 shown.</p>`,
		`<details><summary>All 8 listed</summary>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// Unfolded: 3 examples of ORDER and both of QUOTE; folded: all 8.
	before, _, _ := strings.Cut(page, "<details>")
	if n := strings.Count(before, `<td data-label="Idempotency key">`); n != 5 {
		t.Errorf("%d rows unfolded, want 5 (3 + 2 examples)", n)
	}
	if n := strings.Count(page, `<td data-label="Idempotency key">`); n != 13 {
		t.Errorf("%d rows in all, want 13 (5 examples + 8 folded)", n)
	}
}

// TestDeliveryLostOnThePage: a delivery's lost events are listed with
// their event id, type, publish time, producer and consumer, under the
// delivery; a delivery source down lists nothing.
func TestDeliveryLostOnThePage(t *testing.T) {
	src := collectors.SourceRef{Kind: vocab.SourceDelivery, Name: "orders-billing"}
	snap := Snapshot{Kind: vocab.SourceDelivery, Name: "orders-billing", MinInterval: 30 * time.Second, Collected: true, Started: t0, Up: true, LastSuccess: t0,
		Lists: []collectors.List{{Kind: vocab.KindDeliveryLost, Source: src, Delivery: "orders-billing", Database: "orders", Table: "event_outbox", Total: 2,
			Items: []collectors.Item{
				{EventID: "e-1", EventType: "OrderPlaced", Producer: "orders", Consumer: "billing", Since: testkit.At(-600), AgeSeconds: 600},
				{EventID: "e-2", EventType: "OrderPlaced", Producer: "orders", Consumer: "billing", Since: testkit.At(-400), AgeSeconds: 400},
			}}}}
	r := Build([]Snapshot{snap}, Options{MaxItems: 50}, t0)
	if len(r.Lists) != 1 || r.Lists[0].Alert != rules.WorkflowDeliveryEventsLost || r.Lists[0].Severity != rulefile.Critical {
		t.Fatalf("lists %+v", r.Lists)
	}
	var b bytes.Buffer
	if err := NewHandlers(nil, HandlerOptions{}).Render(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<h3>Published, never received (delivery lost) <span class="count">2</span></h3>`,
		`delivery orders-billing, from database orders, table event_outbox · alert <code>WorkflowDeliveryEventsLost</code>`,
		`<th>Since</th><th>Event id</th><th>Event type</th><th>Producer</th><th>Consumer</th><th>Runbook</th>`,
		`<td data-label="Event id">e-1</td>`, `<td data-label="Consumer">billing</td>`,
		`<td data-label="Since" title="2026-12-03T09:50:00Z">10m 0s</td>`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	js, _ := json.Marshal(r)
	for _, want := range []string{`"delivery":"orders-billing"`, `"event_id":"e-1"`, `"producer":"orders"`, `"consumer":"billing"`, `"since":"2026-12-03T09:50:00Z"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("status.json lacks %s: %s", want, js)
		}
	}
	snap.Up = false
	if r := Build([]Snapshot{snap}, Options{MaxItems: 50}, t0); len(r.Lists) != 0 {
		t.Errorf("a delivery that is down lists %+v", r.Lists)
	}
}
