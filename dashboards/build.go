// Package dashboards builds the Grafana dashboards of the bundle with the
// grafana-foundation-sdk and renders them as classic dashboard JSON for file
// provisioning, manual import and the Kubernetes ConfigMap.
//
// Every metric name comes from the catalog package; every expression selects
// on job and instance (the scrape target of the exporter) plus the variables
// of its dashboard. Counters are only read through rate() or increase() over
// $__rate_interval, and stat panels show "No data" rather than 0 when a
// series is absent: a source that is down drops its data series, and that
// must never look like "all clear".
package dashboards

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/text"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// Tag is set on every dashboard of the bundle; the dashboards link to each
// other through it.
const Tag = "workflow-exporter"

// Stable dashboard uids. Bookmarks and alert links depend on them: never
// change one.
const (
	UIDOverview     = "workflow-overview"
	UIDExternalTask = "camunda-external-tasks"
	UIDOutboxInbox  = "workflow-outbox-inbox"
	UIDIdempotency  = "workflow-idempotency"
	UIDExporter     = "workflow-exporter"
)

// dashboardTitles name the dashboards in the links between them.
var dashboardTitles = map[string]string{
	UIDOverview: "Workflow overview", UIDExternalTask: "Camunda external tasks", UIDOutboxInbox: "Workflow outbox and inbox",
	UIDIdempotency: "Workflow idempotency", UIDExporter: "Workflow exporter",
}

// Variable names.
const (
	varDatasource = "datasource"
	varJob        = "job"
	varInstance   = "instance"
	varEngine     = "engine"
	varTenant     = "tenant"
	varDatabase   = "database"
	varTopic      = "topic"
	varScope      = "scope"
	varEventType  = "event_type"
	varDelivery   = "delivery"
)

// Matchers on the dashboard variables. Every selector carries mJob and
// mInstance (see sel).
const (
	mJob      = `job=~"$job"`
	mInstance = `instance=~"$instance"`
	mEngine   = `engine=~"$engine"`
	// mTenant is added by sel to every series with the tenant label
	// (camunda[].tenant_label): its All value ".*" also matches the series
	// of engines without the label.
	mTenant    = `tenant=~"$tenant"`
	mDatabase  = `database=~"$database"`
	mTopic     = `topic=~"$topic"`
	mScope     = `scope=~"$scope"`
	mEventType = `event_type=~"$event_type"`
	mDelivery  = `delivery=~"$delivery"`
	// The self-metrics name a source by source and name.
	mSourceEngine   = `source="` + string(catalog.SourceCamunda) + `",name=~"$engine"`
	mSourceDatabase = `source="` + string(catalog.SourceDatabase) + `",name=~"$database"`
	mSourceDelivery = `source="` + string(catalog.SourceDelivery) + `",name=~"$delivery"`
	rateInterval    = "[$__rate_interval]"
)

// sel renders a selector of a catalog metric, scoped to the exporter chosen in
// the job and instance variables, with further matchers. It panics on a name
// outside the catalog, so a rename fails the generator and the tests at once.
func sel(series string, matchers ...string) string {
	if !catalog.KnownSeries(series) && !catalog.StandardSeries(series) {
		panic(fmt.Sprintf("dashboards: series %q is not in the catalog", series))
	}
	ms := append([]string{mJob, mInstance}, matchers...)
	if m, ok := catalog.FamilyOf(series); ok && m.Tenanted() {
		ms = append(ms, mTenant)
	}
	return series + "{" + strings.Join(ms, ",") + "}"
}

// rate renders rate(series{...}[$__rate_interval]).
func rate(series string, matchers ...string) string {
	return "rate(" + sel(series, matchers...) + rateInterval + ")"
}

// increase renders increase(series{...}[$__rate_interval]).
func increase(series string, matchers ...string) string {
	return "increase(" + sel(series, matchers...) + rateInterval + ")"
}

// quantile renders a histogram quantile over the rate of a catalog histogram's
// buckets, keeping the by labels.
func quantile(q float64, histogram string, by []string, matchers ...string) string {
	m := catalog.MustGet(histogram)
	if m.Type != catalog.Histogram {
		panic(fmt.Sprintf("dashboards: %s is not a histogram", histogram))
	}
	return fmt.Sprintf("histogram_quantile(%g, sum by (%s) (%s))",
		q, strings.Join(append([]string{"le"}, by...), ", "), rate(histogram+"_bucket", matchers...))
}

// percentiles are the targets of a time series of a catalog histogram's
// percentiles ps (50 for the median) per value of the label by, each
// legend naming its percentile: "p95 {{topic}}".
func percentiles(histogram, by string, ps []int, matchers ...string) []target {
	out := make([]target, len(ps))
	for i, p := range ps {
		out[i] = target{expr: quantile(float64(p)/100, histogram, []string{by}, matchers...),
			legend: fmt.Sprintf("p%d {{%s}}", p, by)}
	}
	return out
}

// sumBy renders sum by (labels) (one(inner)), or sum(one(inner)) without
// labels: the sum over the selection of one exporter's readings, whatever
// the number of its replicas (see one).
func sumBy(inner string, by ...string) string {
	if len(by) == 0 {
		return "sum(" + one(inner) + ")"
	}
	return "sum by (" + strings.Join(by, ", ") + ") (" + one(inner) + ")"
}

// one merges the replicas of an exporter in inner's result, as the alert
// rules do (rules.ReplicaLabels): two replicas on the same sources read the
// same values, so a sum over their series would double every count and
// rate; max keeps one reading. The panels that take a max or a quantile
// need no merging: neither changes with a second copy.
func one(inner string) string {
	return "max without (" + strings.Join(rules.ReplicaLabels(), ", ") + ") (" + inner + ")"
}

// zeroWhenUp renders `inner or (0 * (min(up1) == 1) * ...)`. Some series
// exist only once something was seen (an incident type, a record matched in
// the Camunda join), so a healthy system may have none, and a stat over them
// would show "No data" like an outage. With this, the stat shows 0 when every
// source that would report the series is up by its 0/1 metric (all of ups
// select series, all at 1), and still "No data" when any is down or absent.
func zeroWhenUp(inner string, ups ...string) string {
	conds := make([]string, len(ups))
	for i, u := range ups {
		conds[i] = "(min(" + u + ") == 1)"
	}
	return inner + " or (0 * " + strings.Join(conds, " * ") + ")"
}

func ptr[T any](v T) *T { return &v }

func datasourceRef() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${" + varDatasource + "}")}
}

// target is one query of a panel.
type target struct {
	expr   string
	legend string
}

// step is a threshold step: from value on, color.
type step struct {
	from  float64
	color string
}

// panel is what every panel of the bundle states: title, description, unit,
// queries and the runbooks of the alerts it explains.
type panel struct {
	title    string
	desc     string
	unit     string
	targets  []target
	runbooks []string
	w, h     uint32
	// stat and table
	steps []step // thresholds after the base (green)
	// timeseries
	stack bool
	min   *float64
	// overrides: thresholds of the series a selector of the alerts config
	// tunes (timeseries, drawn dashed like steps).
	overrides []thresholdOverride
	// drill is the uid of the detail dashboard a stat links to, with the
	// time range and the variables both dashboards have carried over.
	drill string
	// statusPage: the stat's series carry an exporter instance, and each
	// links that exporter's status page (a data link).
	statusPage bool
}

type board struct {
	b      *dashboard.DashboardBuilder
	nextID uint32
	// alerts is the alerts config: thresholds and runbook links.
	alerts rules.Config
	// vars are the names of the dashboard's variables.
	vars []string
}

func newBoard(c rules.Config, uid, title, description string, vars ...cog.Builder[dashboard.VariableModel]) *board {
	b := dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{Tag}).
		Readonly().
		Timezone("browser").
		Time("now-6h", "now").
		Refresh("1m").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Link(dashboard.NewDashboardLinkBuilder("Workflow dashboards").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{Tag}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true)).
		Link(dashboard.NewDashboardLinkBuilder("Runbooks").
			Type(dashboard.DashboardLinkTypeLink).
			Url(strings.TrimRight(c.RunbookBaseURL, "/") + "/").
			Icon("doc").
			TargetBlank(true))
	b.WithVariable(dashboard.NewDatasourceVariableBuilder(varDatasource).
		Label("Data source").
		Type("prometheus"))
	b.WithVariable(queryVar(varJob, "Job", "label_values("+catalog.ExporterBuildInfo+", job)", ".+"))
	b.WithVariable(queryVar(varInstance, "Instance", "label_values("+catalog.ExporterBuildInfo+"{"+mJob+"}, instance)", ".+"))
	names := []string{varJob, varInstance}
	for _, v := range vars {
		b.WithVariable(v)
		if m, err := v.Build(); err == nil {
			names = append(names, m.Name)
		}
	}
	return &board{b: b, nextID: 1, alerts: c, vars: names}
}

func queryVar(name, label, query, allValue string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(datasourceRef()).
		Query(dashboard.StringOrMap{String: ptr(query)}).
		Definition(query).
		Multi(true).
		IncludeAll(true).
		AllValue(allValue).
		Current(dashboard.VariableOption{
			Selected: ptr(true),
			Text:     dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
			Value:    dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}},
		}).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
}

// Variables beyond datasource, job and instance. Each lists the values of a
// series that exists even while its source is down (camunda_up,
// workflow_exporter_source_up) where one exists, so a down source can still
// be selected.
func engineVar() cog.Builder[dashboard.VariableModel] {
	return queryVar(varEngine, "Engine", "label_values("+sel(catalog.CamundaUp)+", engine)", ".*")
}

// tenantVar lists the tenants of the selected engines' tasks; without
// camunda[].tenant_label it holds All alone, which matches every series.
func tenantVar() cog.Builder[dashboard.VariableModel] {
	// Not sel: the variable's own query must not depend on it.
	return queryVar(varTenant, "Tenant", "label_values("+catalog.CamundaExternalTasks+"{"+mJob+","+mInstance+","+mEngine+"}, tenant)", ".*")
}

func databaseVar() cog.Builder[dashboard.VariableModel] {
	return queryVar(varDatabase, "Database",
		"label_values("+sel(catalog.ExporterSourceUp, `source="`+string(catalog.SourceDatabase)+`"`)+", name)", ".*")
}

func topicVar() cog.Builder[dashboard.VariableModel] {
	return queryVar(varTopic, "Topic", "label_values("+sel(catalog.CamundaExternalTasks, mEngine)+", topic)", ".*")
}

func eventTypeVar() cog.Builder[dashboard.VariableModel] {
	return queryVar(varEventType, "Event type", "label_values("+sel(catalog.OutboxEventsPending, mDatabase)+", event_type)", ".*")
}

// deliveryVar lists the configured deliveries (deliveries[]), from their
// sources' up, which exists while a delivery cannot be read too.
func deliveryVar() cog.Builder[dashboard.VariableModel] {
	return queryVar(varDelivery, "Delivery",
		"label_values("+sel(catalog.ExporterSourceUp, `source="`+string(catalog.SourceDelivery)+`"`)+", name)", ".*")
}

func scopeVar() cog.Builder[dashboard.VariableModel] {
	return queryVar(varScope, "Scope", "label_values("+sel(catalog.IdempotencyRecords, mDatabase)+", scope)", ".*")
}

func (d *board) row(title string) {
	d.b.WithRow(dashboard.NewRowBuilder(title).Id(d.id()))
}

func (d *board) id() uint32 {
	id := d.nextID
	d.nextID++
	return id
}

// build builds the dashboard and undoes one SDK default: every link gets
// placement "inControlsMenu", which tucks it into the controls menu of
// recent Grafana versions where on-call would not see it. Without a
// placement Grafana shows dashboard links in the top bar.
func (d *board) build() (dashboard.Dashboard, error) {
	db, err := d.b.Build()
	if err != nil {
		return db, err
	}
	for i := range db.Links {
		db.Links[i].Placement = nil
	}
	for _, p := range db.Panels {
		if p.Panel != nil {
			for i := range p.Panel.Links {
				p.Panel.Links[i].Placement = nil
			}
			if p.Panel.FieldConfig != nil {
				for i := range p.Panel.FieldConfig.Defaults.Links {
					p.Panel.FieldConfig.Defaults.Links[i].Placement = nil
				}
			}
		}
	}
	return db, nil
}

func queries(p panel, instant bool) []cog.Builder[variants.Dataquery] {
	out := make([]cog.Builder[variants.Dataquery], 0, len(p.targets))
	for i, t := range p.targets {
		q := prometheus.NewDataqueryBuilder().
			Expr(t.expr).
			RefId(string(rune('A' + i))).
			Datasource(datasourceRef())
		if t.legend != "" {
			q.LegendFormat(t.legend)
		}
		if instant {
			q.Instant().Format(prometheus.PromQueryFormatTable)
		} else {
			q.Range()
		}
		out = append(out, q)
	}
	return out
}

func (d *board) runbookLinks(alerts []string) []cog.Builder[dashboard.DashboardLink] {
	out := make([]cog.Builder[dashboard.DashboardLink], 0, len(alerts))
	for _, a := range alerts {
		out = append(out, dashboard.NewDashboardLinkBuilder("Runbook: "+a).
			Type(dashboard.DashboardLinkTypeLink).
			Url(d.runbookURL(a)).
			TargetBlank(true))
	}
	return out
}

func thresholds(steps []step) *dashboard.ThresholdsConfigBuilder {
	ts := []dashboard.Threshold{{Value: nil, Color: "green"}}
	for _, s := range steps {
		ts = append(ts, dashboard.Threshold{Value: ptr(s.from), Color: s.color})
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(ts)
}

func size(p panel, w, h uint32) (uint32, uint32) {
	if p.w != 0 {
		w = p.w
	}
	if p.h != 0 {
		h = p.h
	}
	return w, h
}

// noData is what a stat shows when its series are absent. Grafana's default
// text is the same; it is set explicitly so no panel default can turn it into
// a reassuring 0.
const noData = "No data"

// stat adds a single-value panel. Absent series show "No data", never 0.
func (d *board) stat(p panel) {
	w, h := size(p, 4, 4)
	b := d.statBase(p).
		Thresholds(thresholds(p.steps)).
		GraphMode(common.BigValueGraphModeArea).
		TextMode(common.BigValueTextModeAuto).
		Span(w).Height(h)
	d.addStat(b, p)
}

// upStat adds a stat with one value per series of a 0/1 metric, shown as
// UP/DOWN. Absent series show "No data".
func (d *board) upStat(p panel) {
	w, h := size(p, 12, 4)
	b := d.statBase(p).
		Mappings([]dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
			Type: dashboard.MappingTypeValueToText,
			Options: map[string]dashboard.ValueMappingResult{
				"0": {Text: ptr("DOWN"), Color: ptr("red"), Index: ptr(int32(0))},
				"1": {Text: ptr("UP"), Color: ptr("green"), Index: ptr(int32(1))},
			},
		}}}).
		Thresholds(dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{{Value: nil, Color: "red"}, {Value: ptr(1.0), Color: "green"}})).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValueAndName).
		Span(w).Height(h)
	d.addStat(b, p)
}

// downStat adds a stat counting the selected series of the 0/1 metric up
// that are 0 (sources, collectors or relay slots down), red from one. A
// down source drops its data series and leaves the panels beside it blank:
// this count is what tells that blank from healthy. p gives the title, the
// description, the runbooks and any width or drill.
func (d *board) downStat(up string, p panel) {
	p.unit = "short"
	p.targets = []target{{expr: sumBy("1 - " + up)}}
	p.steps = []step{{1, "red"}}
	d.stat(p)
}

// queryBuilder is what the SDK's builders of the panels that show queries
// (stat, time series, table) have in common, each returning itself.
type queryBuilder[B any] interface {
	Id(id uint32) B
	Title(title string) B
	Description(description string) B
	Datasource(datasource common.DataSourceRef) B
	Targets(targets []cog.Builder[variants.Dataquery]) B
	Unit(unit string) B
	NoValue(noValue string) B
}

// queryPanel sets what every panel of queries shares: its identity, title
// and description, the data source, the queries (instant ones for a
// table), the unit, and the explicit "No data" that keeps an absent series
// from looking like 0.
func queryPanel[B queryBuilder[B]](d *board, b B, p panel, instant bool) B {
	return b.Id(d.id()).
		Title(p.title).
		Description(p.desc).
		Datasource(datasourceRef()).
		Targets(queries(p, instant)).
		Unit(p.unit).
		NoValue(noData)
}

// statBase is what every stat panel shares: a panel of queries with
// background colouring and the last non-null value.
func (d *board) statBase(p panel) *stat.PanelBuilder {
	return queryPanel(d, stat.NewPanelBuilder(), p, false).
		ColorMode(common.BigValueColorModeBackground).
		Orientation(common.VizOrientationAuto).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false).Fields(""))
}

func (d *board) addStat(b *stat.PanelBuilder, p panel) {
	var links []cog.Builder[dashboard.DashboardLink]
	if p.drill != "" {
		links = append(links, dashboard.NewDashboardLinkBuilder("Details: "+dashboardTitles[p.drill]).
			Type(dashboard.DashboardLinkTypeLink).
			Url(d.drillURL(p.drill)))
	}
	links = append(links, d.runbookLinks(p.runbooks)...)
	if len(links) > 0 {
		b.Links(links)
	}
	if p.statusPage {
		b.DataLinks([]cog.Builder[dashboard.DashboardLink]{dashboard.NewDashboardLinkBuilder("Status page of ${__field.labels.instance}").
			Type(dashboard.DashboardLinkTypeLink).
			Url(d.statusPageURL()).
			TargetBlank(true)})
	}
	d.b.WithPanel(b)
}

// drillURL links the detail dashboard uid with the time range and the
// variables this dashboard and that one share (job, instance, and the lane
// variables of rules.DashboardVariables).
func (d *board) drillURL(uid string) string {
	u := "/d/" + uid + "?${__url_time_range}"
	for _, v := range d.vars {
		if v == varJob || v == varInstance || slices.Contains(rules.DashboardVariables(uid), v) {
			u += "&${" + v + ":queryparam}"
		}
	}
	return u
}

var labelRefRE = regexp.MustCompile(`\{\{\s*\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// statusPageURL is the status page of the exporter a series comes from: the
// alerts config's status_page_url with its $labels read from the series,
// or the exporter's own /status at the scraped address.
func (d *board) statusPageURL() string {
	if u := labelRefRE.ReplaceAllString(d.alerts.StatusPageURL, "$${__field.labels.$1}"); u != "" && !strings.Contains(u, "{{") {
		return u
	}
	return "http://${__field.labels.instance}/status"
}

// series adds a time series panel with an explicit legend and tooltip (the
// SDK's defaults are a hidden legend and an empty tooltip mode).
func (d *board) series(p panel) {
	w, h := size(p, 12, 8)
	b := queryPanel(d, timeseries.NewPanelBuilder(), p, false).
		Legend(common.NewVizLegendOptionsBuilder().
			ShowLegend(true).
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			Calcs([]string{"lastNotNull", "max"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending)).
		Thresholds(thresholds(p.steps)).
		DrawStyle(common.GraphDrawStyleLine).
		LineWidth(1).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).
		Span(w).Height(h)
	if len(p.steps) > 0 {
		b.ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashed))
	}
	for _, o := range p.overrides {
		t, err := thresholds(o.steps).Build()
		if err != nil {
			panic(err) // steps are values and colours: cannot fail
		}
		b.OverrideByRegexp(o.regex, []dashboard.DynamicConfigValue{
			{Id: "thresholds", Value: t},
			{Id: "custom.thresholdsStyle", Value: map[string]string{"mode": string(common.GraphThresholdsStyleModeDashed)}},
		})
	}
	if p.stack {
		b.Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal).Group("A"))
	}
	if p.min != nil {
		b.Min(*p.min)
	}
	if len(p.runbooks) > 0 {
		b.Links(d.runbookLinks(p.runbooks))
	}
	d.b.WithPanel(b)
}

// labelTable adds a table of the label sets of an instant query, hiding the
// time and value columns (for info metrics).
func (d *board) labelTable(p panel, hide ...string) {
	w, h := size(p, 12, 6)
	exclude := map[string]bool{"Time": true, "Value": true, "__name__": true}
	for _, c := range hide {
		exclude[c] = true
	}
	b := queryPanel(d, table.NewPanelBuilder(), p, true).
		WithTransformation(dashboard.DataTransformerConfig{
			Id:      "organize",
			Options: map[string]any{"excludeByName": exclude},
		}).
		Footer(tableFooter()).
		Span(w).Height(h)
	if len(p.runbooks) > 0 {
		b.Links(d.runbookLinks(p.runbooks))
	}
	d.b.WithPanel(b)
}

// tableFooter is a hidden footer with an empty reducer list: the SDK's
// default footer has reducer null, which its own strict decoder rejects.
func tableFooter() *common.TableFooterOptionsBuilder {
	return common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}).CountRows(false)
}

// markdown adds a text panel.
func (d *board) markdown(title, desc, content string, w, h uint32) {
	d.b.WithPanel(text.NewPanelBuilder().
		Id(d.id()).
		Title(title).
		Description(desc).
		Mode(text.TextModeMarkdown).
		Content(content).
		Span(w).Height(h))
}
