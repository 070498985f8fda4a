package sources

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

func parse(t *testing.T, doc string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func byName(set *poll.Set) map[string]*poll.Source {
	out := map[string]*poll.Source{}
	for _, s := range set.Sources() {
		out[s.Kind()+"/"+s.Name()] = s
	}
	return out
}

// TestApplyKeepsUnchangedSources: a reload keeps the very Source of every
// source whose settings did not change (its snapshot, counters and lock
// tracking go on), rebuilds the changed ones, adds and removes, and refuses
// a config that cannot be built without changing anything.
func TestApplyKeepsUnchangedSources(t *testing.T) {
	ctx := context.Background()
	m := New(Options{})
	defer m.Close(ctx)
	first := parse(t, `
camunda:
  - {name: main, url: 'http://127.0.0.1:1/engine-rest'}
  - {name: other, url: 'http://127.0.0.1:2/engine-rest'}
databases:
  - {name: orders, dsn: 'postgres://u@127.0.0.1:1/orders', tables: {outbox: {}}}
  - {name: billing, dsn: 'postgres://u@127.0.0.1:1/billing', tables: {inbox: {}}}
`)
	ch, err := m.Apply(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Added) != 4 || len(ch.Kept)+len(ch.Replaced)+len(ch.Removed) != 0 {
		t.Fatalf("first apply: %+v", ch)
	}
	before := byName(m.Set())

	second := parse(t, `
camunda:
  - {name: main, url: 'http://127.0.0.1:1/engine-rest'}
  - {name: other, url: 'http://127.0.0.1:3/engine-rest'}
  - {name: third, url: 'http://127.0.0.1:4/engine-rest'}
databases:
  - {name: orders, dsn: 'postgres://u@127.0.0.1:1/orders', tables: {outbox: {}}}
`)
	ch, err = m.Apply(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	want := Changes{Kept: []string{"database/orders", "camunda/main"}, Added: []string{"camunda/third"},
		Replaced: []string{"camunda/other"}, Removed: []string{"database/billing"}}
	if !slices.Equal(ch.Kept, want.Kept) || !slices.Equal(ch.Added, want.Added) || !slices.Equal(ch.Replaced, want.Replaced) || !slices.Equal(ch.Removed, want.Removed) {
		t.Fatalf("changes %+v, want %+v", ch, want)
	}
	after := byName(m.Set())
	if len(after) != 4 {
		t.Fatalf("sources after the reload: %v", after)
	}
	for _, id := range want.Kept {
		if after[id] != before[id] {
			t.Errorf("%s was rebuilt although its settings did not change", id)
		}
	}
	if after["camunda/other"] == before["camunda/other"] {
		t.Error("camunda/other kept although its URL changed")
	}

	// A config that cannot be built is refused whole, with Check's message.
	bad := parse(t, `
databases:
  - {name: orders, dsn: 'postgres://u@127.0.0.1:notaport/orders'}
`)
	wantErr := Check(bad, nil)
	if wantErr == nil {
		t.Fatal("Check accepted a DSN that does not parse")
	}
	if _, err := m.Apply(ctx, bad); err == nil || err.Error() != wantErr.Error() {
		t.Fatalf("Apply error %v, want Check's %v", err, wantErr)
	}
	if got := byName(m.Set()); len(got) != 4 || got["camunda/main"] != after["camunda/main"] {
		t.Fatalf("a refused config changed the sources: %v", got)
	}
}

// TestDatabaseKeptWhenAnotherEngineIsAdded: adding an engine rebuilds only
// the databases whose joins look up every engine.
func TestDatabaseKeptWhenAnotherEngineIsAdded(t *testing.T) {
	ctx := context.Background()
	m := New(Options{})
	defer m.Close(ctx)
	doc := func(engines string) string {
		return `
camunda: [` + engines + `]
databases:
  - {name: orders, dsn: 'postgres://u@127.0.0.1:1/orders', tables: {idempotency: {camunda: {engine: main}}}}
  - {name: jobs, dsn: 'postgres://u@127.0.0.1:1/jobs', tables: {processed_jobs: {}}}
`
	}
	if _, err := m.Apply(ctx, parse(t, doc(`{name: main, url: 'http://127.0.0.1:1/engine-rest'}`))); err != nil {
		t.Fatal(err)
	}
	ch, err := m.Apply(ctx, parse(t, doc(`{name: main, url: 'http://127.0.0.1:1/engine-rest'}, {name: b, url: 'http://127.0.0.1:2/engine-rest'}`)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ch.Kept, "database/orders") || !slices.Contains(ch.Replaced, "database/jobs") {
		t.Fatalf("changes %+v: orders joins main only (kept), jobs joins every engine (rebuilt)", ch)
	}
	if err := Check(parse(t, doc(`{name: main, url: 'http://u:pw@127.0.0.1:1/engine-rest'}`)), nil); err == nil || !strings.Contains(err.Error(), "camunda[0]") || strings.Contains(err.Error(), "pw") {
		t.Fatalf("Check of credentials in a URL: %v", err)
	}
}

// TestStatusSettingsOnReload: status.max_items is the length of every
// source's lists, so changing it rebuilds every source; the page reads the
// running status section (runbook_base_url) from the manager; with the page
// off (--web.disable-status) max_items changes nothing.
func TestStatusSettingsOnReload(t *testing.T) {
	ctx := context.Background()
	doc := func(status string) *config.Config {
		return parse(t, status+`
camunda:
  - {name: main, url: 'http://127.0.0.1:1/engine-rest'}
databases:
  - {name: orders, dsn: 'postgres://u@127.0.0.1:1/orders', tables: {outbox: {}}}
`)
	}
	for _, c := range []struct {
		name        string
		off         bool
		wantRebuilt bool
	}{
		{"page on", false, true},
		{"page off", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := New(Options{DisableStatus: c.off})
			defer m.Close(ctx)
			if _, err := m.Apply(ctx, doc(`status: {max_items: 50}`)); err != nil {
				t.Fatal(err)
			}
			ch, err := m.Apply(ctx, doc(`status: {max_items: 10, runbook_base_url: 'https://runbooks.example/'}`))
			if err != nil {
				t.Fatal(err)
			}
			if rebuilt := len(ch.Replaced) == 2 && len(ch.Kept) == 0; rebuilt != c.wantRebuilt {
				t.Errorf("changes %+v, want every source rebuilt: %v", ch, c.wantRebuilt)
			}
			if st := m.Status(); st.MaxItems != 10 || st.RunbookBaseURL != "https://runbooks.example/" {
				t.Errorf("the running status section is %+v", st)
			}
		})
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }
