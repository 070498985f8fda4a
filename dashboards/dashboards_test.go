package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/alerts/slo"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestGeneratedFilesUpToDate fails when the committed JSON or ConfigMap
// differs from what the code builds.
func TestGeneratedFilesUpToDate(t *testing.T) {
	cfg, err := rules.Load(testkit.Path(t, rules.RepositoryConfig))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		got, err := os.ReadFile(testkit.Path(t, p))
		if err != nil {
			t.Errorf("%s: %v; run `go generate ./...`", p, err)
			continue
		}
		if !bytes.Equal(got, files[p]) {
			t.Errorf("%s differs from what dashboards/ builds; run `go generate ./...` and commit the result", p)
		}
	}
	// No stray dashboards in the JSON folders.
	for _, dir := range []string{JSONDir, ChartDir} {
		entries, err := os.ReadDir(testkit.Path(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") {
				continue // .lint, the linter's exclusions
			}
			p := dir + "/" + e.Name()
			if _, ok := files[p]; !ok {
				t.Errorf("%s is not built by the generator; delete it or add a builder", p)
			}
		}
	}
}

func TestStableUIDs(t *testing.T) {
	ds, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, d := range ds {
		uids = append(uids, d.UID)
	}
	want := []string{UIDOverview, UIDExternalTask, UIDOutboxInbox, UIDIdempotency, UIDExporter}
	if !slices.Equal(uids, want) {
		t.Fatalf("uids = %v, want %v", uids, want)
	}
	if want[0] != "workflow-overview" || want[1] != "camunda-external-tasks" || want[2] != "workflow-outbox-inbox" ||
		want[3] != "workflow-idempotency" || want[4] != "workflow-exporter" {
		t.Fatalf("a uid constant changed: %v; uids are bookmarked, never change them", want)
	}
}

// Full dashboard model, as far as the checks need it.
type fullDashboard struct {
	hasPlacement bool
	UID          string      `json:"uid"`
	Title        string      `json:"title"`
	Editable     *bool       `json:"editable"`
	Panels       []fullPanel `json:"panels"`
	Templating   struct {
		List []fullVariable `json:"list"`
	} `json:"templating"`
}

type fullVariable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Query      any    `json:"query"`
	Multi      bool   `json:"multi"`
	IncludeAll bool   `json:"includeAll"`
	AllValue   string `json:"allValue"`
	Refresh    int    `json:"refresh"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
}

type fullPanel struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	GridPos     struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
	Links []struct {
		URL string `json:"url"`
	} `json:"links"`
	Options     json.RawMessage `json:"options"`
	FieldConfig struct {
		Defaults struct {
			Unit    string `json:"unit"`
			NoValue string `json:"noValue"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// mustQueries returns every panel query of every dashboard (Queries); the
// test fails when the dashboards cannot be rendered.
func mustQueries(t *testing.T) []Query {
	t.Helper()
	qs, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

func loadAll(t *testing.T) []fullDashboard {
	t.Helper()
	ds, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var out []fullDashboard
	for _, d := range ds {
		var fd fullDashboard
		if err := json.Unmarshal(d.JSON, &fd); err != nil {
			t.Fatalf("%s: %v", d.UID, err)
		}
		fd.hasPlacement = bytes.Contains(d.JSON, []byte(`"placement": "inControlsMenu"`))
		out = append(out, fd)
	}
	return out
}

func (p fullPanel) isData() bool { return p.Type != "row" && p.Type != "text" }

// checkDashboard returns every violation of the bundle's rules for panels,
// variables and layout. It is a function of its own so the tests can show it
// catches a broken dashboard.
func checkDashboard(d fullDashboard) []string {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, d.UID+": "+sprintf(format, args...))
	}
	if d.Editable == nil || *d.Editable {
		bad("not read-only (editable must be false)")
	}
	if d.hasPlacement {
		bad("a link has a placement: it would hide in the controls menu")
	}
	vars := map[string]fullVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v, ok := vars[varDatasource]; !ok || v.Type != "datasource" || v.Query != "prometheus" {
		bad("no Prometheus datasource variable %q", varDatasource)
	}
	for _, name := range []string{varJob, varInstance} {
		if _, ok := vars[name]; !ok {
			bad("no %q variable", name)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if !strings.HasPrefix(q, "label_values(") {
			bad("variable %s: query %q is not label_values(...)", v.Name, q)
		}
		if !v.Multi || !v.IncludeAll || v.AllValue == "" {
			bad("variable %s: want multi-select with All and an allValue", v.Name)
		}
		if v.Refresh != 2 {
			bad("variable %s: refresh %d, want 2 (on time range change)", v.Name, v.Refresh)
		}
		if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
			bad("variable %s: does not use the datasource variable", v.Name)
		}
	}
	ids := map[int]bool{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	for _, p := range d.Panels {
		if ids[p.ID] || p.ID == 0 {
			bad("panel %q: id %d is 0 or not unique", p.Title, p.ID)
		}
		ids[p.ID] = true
		for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
			for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					bad("panel %q overlaps panel %q", p.Title, other)
					x = p.GridPos.X + p.GridPos.W // one report per panel: leave both loops
					break
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.GridPos.X+p.GridPos.W > 24 {
			bad("panel %q is wider than the grid", p.Title)
		}
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || p.Description == "" {
			bad("panel %q: needs a title and a description", p.Title)
		}
		if !p.isData() {
			continue
		}
		if len(p.Targets) == 0 {
			bad("panel %q: no targets", p.Title)
		}
		if p.FieldConfig.Defaults.Unit == "" {
			bad("panel %q: no unit", p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			bad("panel %q: does not use the datasource variable", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				bad("panel %q: refId %q empty or repeated", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Expr == "" {
				bad("panel %q: empty expression", p.Title)
			}
		}
		switch p.Type {
		case "timeseries":
			var o struct {
				Legend struct {
					ShowLegend  bool   `json:"showLegend"`
					DisplayMode string `json:"displayMode"`
				} `json:"legend"`
				Tooltip struct {
					Mode string `json:"mode"`
				} `json:"tooltip"`
			}
			if err := json.Unmarshal(p.Options, &o); err != nil {
				bad("panel %q: options: %v", p.Title, err)
			}
			if o.Tooltip.Mode == "" {
				bad("panel %q: empty tooltip mode", p.Title)
			}
			if !o.Legend.ShowLegend || o.Legend.DisplayMode == "" {
				bad("panel %q: hidden legend", p.Title)
			}
		case "stat":
			if p.FieldConfig.Defaults.NoValue != noData {
				bad("panel %q: absent series must show %q, not %q", p.Title, noData, p.FieldConfig.Defaults.NoValue)
			}
		}
	}
	return errs
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func TestDashboardRules(t *testing.T) {
	for _, d := range loadAll(t) {
		for _, e := range checkDashboard(d) {
			t.Error(e)
		}
	}
}

// TestDashboardRulesCatchBreakage proves the rules can fail.
func TestDashboardRulesCatchBreakage(t *testing.T) {
	d := loadAll(t)[1]
	d.Editable = ptr(true)
	for i := range d.Panels {
		if d.Panels[i].Type == "timeseries" {
			d.Panels[i].Description = ""
			d.Panels[i].FieldConfig.Defaults.Unit = ""
			d.Panels[i].Targets[0].RefID = ""
			d.Panels[i].Options = json.RawMessage(`{"legend":{"showLegend":false},"tooltip":{"mode":""}}`)
			break
		}
	}
	errs := strings.Join(checkDashboard(d), "\n")
	for _, want := range []string{"read-only", "description", "no unit", "refId", "tooltip", "legend"} {
		if !strings.Contains(errs, want) {
			t.Errorf("breakage %q not reported; got:\n%s", want, errs)
		}
	}
}

var (
	rangeSelector = regexp.MustCompile(`\[([^\]]*)\]`)
	seriesName    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*\{`)
)

// checkExpr reports counters read without rate()/increase() over
// $__rate_interval, and range selectors other than $__rate_interval (the one
// exception: the one-day lookback of build_info for the scrape panels).
// checks/promql does the same on the parsed PromQL; this textual check
// keeps the rule in the main module's go test.
func checkExpr(expr string) []string {
	var errs []string
	for _, loc := range seriesName.FindAllStringIndex(expr, -1) {
		name := expr[loc[0] : loc[1]-1]
		m, ok := catalog.Lookup(strings.TrimSuffix(name, "_bucket"))
		isCounter := (ok && m.Type == catalog.Counter) || strings.HasSuffix(name, "_total") || strings.HasSuffix(name, "_bucket")
		if !isCounter {
			continue
		}
		before := expr[:loc[0]]
		if !strings.HasSuffix(before, "rate(") && !strings.HasSuffix(before, "increase(") || strings.HasSuffix(before, "irate(") {
			errs = append(errs, name+" is not inside rate() or increase()")
		}
		rest := expr[loc[1]:]
		end := strings.Index(rest, "}")
		if end < 0 || !strings.HasPrefix(rest[end+1:], "[$__rate_interval])") {
			errs = append(errs, name+" is not read over [$__rate_interval]")
		}
	}
	for _, m := range rangeSelector.FindAllStringSubmatch(expr, -1) {
		if m[1] != "$__rate_interval" && !(m[1] == "1d" && strings.Contains(expr, catalog.ExporterBuildInfo)) {
			errs = append(errs, "range ["+m[1]+"] is not $__rate_interval")
		}
	}
	return errs
}

func TestCountersThroughRate(t *testing.T) {
	qs := mustQueries(t)
	if len(qs) < 50 {
		t.Fatalf("only %d queries; the dashboards lost panels", len(qs))
	}
	for _, q := range qs {
		for _, e := range checkExpr(q.Expr) {
			t.Errorf("%s / %q: %s: %s", q.Dashboard, q.Panel, e, q.Expr)
		}
		// The SLOs' recording rules aggregate the job label away (their
		// selector names the job, docs/slos.md).
		if !strings.Contains(q.Expr, mJob) && !strings.HasPrefix(q.Expr, "count(ALERTS") && !strings.HasPrefix(q.Expr, "ALERTS") &&
			!strings.Contains(q.Expr, slo.RecordPrefix) {
			t.Errorf("%s / %q: not scoped to $job: %s", q.Dashboard, q.Panel, q.Expr)
		}
	}
	for _, bad := range []string{
		`sum(workflow_outbox_events_published_total{job=~"$job"})`,
		`rate(workflow_outbox_events_published_total{job=~"$job"}[5m])`,
		`histogram_quantile(0.9, sum by (le) (workflow_outbox_publish_delay_seconds_bucket{job=~"$job"}))`,
	} {
		if len(checkExpr(bad)) == 0 {
			t.Errorf("checkExpr accepted %s", bad)
		}
	}
}

// unmergedSums returns the sums in expr that add the series of every
// exporter replica: a sum whose argument is not the replicas' merge (one:
// max without the replica labels). Two replicas read the same values, so
// such a sum shows every count twice. A sum of histogram buckets under
// histogram_quantile is left alone (doubling every bucket moves no
// quantile), as are counts of ALERTS (the rules merge replicas).
func unmergedSums(expr string) []string {
	var bad []string
	for _, m := range sumAt.FindAllStringIndex(expr, -1) {
		if !quantileBefore.MatchString(expr[:m[0]]) && !strings.HasPrefix(strings.TrimSpace(expr[m[1]:]), "max without (") {
			bad = append(bad, expr[m[0]:min(len(expr), m[1]+40)])
		}
	}
	return bad
}

var (
	sumAt          = regexp.MustCompile(`\bsum\s*(?:by\s*\([^)]*\)\s*)?\(`)
	quantileBefore = regexp.MustCompile(`histogram_quantile\(\s*[0-9.]+\s*,\s*$`)
)

// TestSumsMergeReplicas: with two exporter replicas (the documented high
// availability setup) a panel's sum must merge them first, as sumBy does.
func TestSumsMergeReplicas(t *testing.T) {
	for _, q := range mustQueries(t) {
		for _, b := range unmergedSums(q.Expr) {
			t.Errorf("%s / %q: a sum over every replica (use sumBy): %s", q.Dashboard, q.Panel, b)
		}
	}
	for expr, want := range map[string]int{
		`sum by (a) (x{job=~"$job"})`:                        1,
		`sum(x{job=~"$job"})`:                                1,
		sumBy(`x{job=~"$job"}`, "a"):                         0,
		`histogram_quantile(0.9, sum by (le) (rate(x[5m])))`: 0,
	} {
		if got := len(unmergedSums(expr)); got != want {
			t.Errorf("unmergedSums(%s): %d, want %d", expr, got, want)
		}
	}
}

// metricsOnNoPanel returns the catalog metrics none of the queries selects
// (by family name, or a histogram's _bucket/_sum/_count series).
func metricsOnNoPanel(qs []Query) []string {
	var missing []string
	for _, m := range catalog.All() {
		used := false
		for _, q := range qs {
			for _, s := range m.SeriesNames() {
				if strings.Contains(q.Expr, s+"{") {
					used = true
				}
			}
		}
		if !used {
			missing = append(missing, m.Name)
		}
	}
	return missing
}

// TestEveryCatalogMetricIsOnAPanel: a metric nobody can see is either dead
// or a gap in the dashboards. Every panel selector carries the job and
// instance matchers (sel), so a metric a panel shows appears as name{.
func TestEveryCatalogMetricIsOnAPanel(t *testing.T) {
	qs := mustQueries(t)
	for _, name := range metricsOnNoPanel(qs) {
		t.Errorf("catalog metric %s is on no panel", name)
	}
	// The check can fail: without the panels of the exporter dashboard its
	// own metrics are on no panel.
	var fewer []Query
	for _, q := range qs {
		if q.Dashboard != UIDExporter {
			fewer = append(fewer, q)
		}
	}
	if missing := metricsOnNoPanel(fewer); !slices.Contains(missing, catalog.ExporterCollectDuration) {
		t.Errorf("without the exporter dashboard, %s should be on no panel; missing: %v", catalog.ExporterCollectDuration, missing)
	}
}

func TestHistogramQuantileShape(t *testing.T) {
	qs := mustQueries(t)
	n := 0
	for _, q := range qs {
		if !strings.Contains(q.Expr, "histogram_quantile") {
			continue
		}
		n++
		if !strings.Contains(q.Expr, "sum by (le") || !strings.Contains(q.Expr, "_bucket{") {
			t.Errorf("%s / %q: quantile not over sum by (le, ...) of _bucket rates: %s", q.Dashboard, q.Panel, q.Expr)
		}
	}
	if n == 0 {
		t.Error("no histogram_quantile panel: the publish delay histogram is not shown")
	}
}

func TestSelRejectsUnknownMetric(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("sel accepted a metric outside the catalog")
		}
	}()
	sel("workflow_not_in_catalog")
}

// TestRunbookLinks requires every runbook link of a panel to be the runbook
// of an alert of the bundle (rules.Alerts()), and every alert's runbook to be
// linked from some panel.
func TestRunbookLinks(t *testing.T) {
	known := map[string]bool{}
	for _, a := range rules.Alerts() {
		known[rules.RunbookURL(rules.DefaultRunbookBaseURL, a.Name)] = true
	}
	// Every SLO's burn-rate alert (render slos) shares one runbook.
	known[rules.RunbookURL(rules.DefaultRunbookBaseURL, slo.BudgetBurnRunbook)] = true
	linked := map[string]bool{}
	for _, d := range loadAll(t) {
		for _, p := range d.Panels {
			for _, l := range p.Links {
				if strings.Contains(l.URL, "/docs/runbooks/") && !known[l.URL] {
					t.Errorf("%s / %q links to unknown runbook %s", d.UID, p.Title, l.URL)
				}
				linked[l.URL] = true
			}
		}
	}
	for u := range known {
		if !linked[u] {
			t.Errorf("no panel links to %s", u)
		}
	}
	// Every linked runbook must be there.
	for _, a := range rules.Alerts() {
		if _, err := os.Stat(testkit.Path(t, a.RunbookPath())); err != nil {
			t.Errorf("runbook of %s missing: %v", a.Name, err)
		}
	}
}

// TestOverviewAnswersWhatIsPaging checks the top of the landing page: firing
// alerts with runbook links, the key stats, and source health.
func TestOverviewAnswersWhatIsPaging(t *testing.T) {
	d := loadAll(t)[0]
	if d.UID != UIDOverview {
		t.Fatalf("first dashboard is %s", d.UID)
	}
	var top []fullPanel
	for _, p := range d.Panels[1:] {
		if p.Type == "row" {
			break
		}
		top = append(top, p)
	}
	var exprs []string
	hasAlertTable := false
	for _, p := range top {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
			if p.Type == "table" && strings.HasPrefix(tg.Expr, "ALERTS{") {
				hasAlertTable = true
			}
		}
	}
	if !hasAlertTable {
		t.Error("no table of firing alerts in the first row")
	}
	all := strings.Join(exprs, "\n")
	// What pages, first: the signal of every paging alert of a lane.
	for _, want := range []string{catalog.IdempotencyInDoubt, catalog.IdempotencyCompletedTaskOpen, catalog.ProcessedJobTaskOpen,
		catalog.OutboxOldestPendingAge, catalog.InboxOldestMessageAge, catalog.CamundaExternalTaskOldestWaitingAge,
		catalog.CamundaJobOldestExecutableAge, catalog.ExporterSourceUp} {
		if !strings.Contains(all, want) {
			t.Errorf("first row of the overview does not show %s", want)
		}
	}
	if top[0].FieldConfig.Defaults.NoValue != noData {
		t.Error("stats must show No data for absent series")
	}
	// Each stat of it but the alert count links its detail dashboard with
	// the time range and the shared variables.
	for _, p := range top[1:] {
		if p.Type != "stat" {
			continue
		}
		drill := false
		for _, l := range p.Links {
			if strings.HasPrefix(l.URL, "/d/") {
				drill = strings.Contains(l.URL, "${__url_time_range}") && strings.Contains(l.URL, "${job:queryparam}") && strings.Contains(l.URL, "${instance:queryparam}")
			}
		}
		if !drill {
			t.Errorf("overview stat %q links no detail dashboard with time range, job and instance: %+v", p.Title, p.Links)
		}
	}
}

// The overview links each exporter's status page; the outbox dashboard has
// the event type variable the alerts' dashboard links set.
func TestStatusPageLinkAndEventTypeVariable(t *testing.T) {
	ds, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		switch d.UID {
		case UIDOverview:
			if !strings.Contains(string(d.JSON), `"url": "http://${__field.labels.instance}/status"`) {
				t.Error("overview: no link to the exporters' status pages")
			}
		case UIDOutboxInbox:
			if !strings.Contains(string(d.JSON), `"name": "event_type"`) || !strings.Contains(string(d.JSON), `event_type=~\"$event_type\"`) {
				t.Error("outbox dashboard: no event_type variable, or no panel scoped by it")
			}
		}
	}
	for _, uid := range []string{UIDOverview, UIDExternalTask, UIDOutboxInbox, UIDIdempotency} {
		for _, v := range rules.DashboardVariables(uid) {
			if uid == UIDOverview {
				continue
			}
			for _, d := range ds {
				if d.UID == uid && !strings.Contains(string(d.JSON), `"name": "`+v+`"`) {
					t.Errorf("%s: alerts link it with var-%s, but it has no such variable", uid, v)
				}
			}
		}
	}
}

func TestConfigMap(t *testing.T) {
	ds, err := All()
	if err != nil {
		t.Fatal(err)
	}
	cm := string(ConfigMap(ds))
	docs := strings.Split(cm, "\n---\n")[1:]
	if len(docs) != len(ds) {
		t.Fatalf("%d ConfigMaps for %d dashboards", len(docs), len(ds))
	}
	for i, doc := range docs {
		if !strings.Contains(doc, "\n    grafana_dashboard: \"1\"\n") {
			t.Errorf("ConfigMap %d lacks the sidecar label grafana_dashboard: \"1\"", i)
		}
		// kubectl apply stores the whole object in an annotation limited
		// to 256 KiB; keep well below.
		if len(doc) > 192<<10 {
			t.Errorf("ConfigMap %d is %d bytes; kubectl apply would fail near 256 KiB", i, len(doc))
		}
	}
	for _, d := range ds {
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSuffix(string(d.JSON), "\n"), "\n") {
			b.WriteString("    " + line + "\n")
		}
		if !strings.Contains(cm, "  "+d.UID+".json: |\n"+b.String()) {
			t.Errorf("ConfigMap does not carry %s verbatim", d.UID)
		}
	}
}

func TestQueriesListEveryTarget(t *testing.T) {
	qs := mustQueries(t)
	perDashboard := map[string]int{}
	for _, q := range qs {
		if q.Dashboard == "" || q.Panel == "" || q.RefID == "" || q.Expr == "" {
			t.Errorf("incomplete query %+v", q)
		}
		perDashboard[q.Dashboard]++
	}
	for _, d := range loadAll(t) {
		n := 0
		for _, p := range d.Panels {
			n += len(p.Targets)
		}
		if perDashboard[d.UID] != n || n == 0 {
			t.Errorf("%s: Queries lists %d targets, the dashboard has %d", d.UID, perDashboard[d.UID], n)
		}
	}
	vs, err := VariableQueries()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 5*2 {
		t.Errorf("only %d variable queries", len(vs))
	}
}

// TestAlertNamePatternSelectsEveryAlert: the overview's alert panels select
// the bundle's alerts in ALERTS by alertNamePattern, which must match every
// alert of rules.Alerts() (the list the rule file is generated from; the
// tests of alerts/rules keep the two equal).
func TestAlertNamePatternSelectsEveryAlert(t *testing.T) {
	re := regexp.MustCompile("^(?:" + alertNamePattern + ")$")
	for _, a := range rules.Alerts() {
		if !re.MatchString(a.Name) {
			t.Errorf("alert %s does not match %q: the overview's firing alerts would leave it out", a.Name, alertNamePattern)
		}
	}
}

func TestAlertsPagesFirst(t *testing.T) {
	as := alertsPagesFirst()
	if len(as) != len(rules.Alerts()) {
		t.Fatalf("%d alerts, want %d", len(as), len(rules.Alerts()))
	}
	rank := func(a rules.Alert) int { return slices.Index(rulefile.Severities(), a.Severity) }
	for i := 1; i < len(as); i++ {
		if rank(as[i-1]) > rank(as[i]) {
			t.Errorf("%s (%s) after %s (%s)", as[i].Name, as[i].Severity, as[i-1].Name, as[i-1].Severity)
		}
	}
	if as[0].Severity != rulefile.Critical {
		t.Errorf("first alert %s is %s, want a page first", as[0].Name, as[0].Severity)
	}
}
