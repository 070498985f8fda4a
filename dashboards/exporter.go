package dashboards

import (
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// Standard series of the Go and process collectors the exporter registers
// (catalog.StandardSeries accepts them).
const (
	processResidentMemory = "process_resident_memory_bytes"
	processCPUSeconds     = "process_cpu_seconds_total"
	goGoroutines          = "go_goroutines"
)

func exporterHealth(c rules.Config) *board {
	d := newBoard(c, UIDExporter, "Workflow exporter",
		"Health of the workflow exporter itself: is it scraped, which sources and collectors fail, how long collections take, how stale the data is, and label values folded into \"other\".")

	d.row("Is the data fresh?")
	d.upStat(panel{title: "Exporter scrape", unit: "none", w: 6,
		desc:     "Prometheus's own view (up) of each exporter target that served data in the last day. DOWN means no panel of this bundle has data.",
		targets:  []target{{expr: exporterTargetsUp(), legend: "{{instance}}"}},
		runbooks: []string{rules.WorkflowExporterDown, rules.WorkflowExporterWatchdog}})
	d.upStat(panel{title: "Sources", unit: "none", w: 9,
		desc:     "Every configured Camunda engine, database and delivery, UP or DOWN as of the last collection. A DOWN source has no data series.",
		targets:  []target{{expr: sel(catalog.ExporterSourceUp), legend: "{{source}} {{name}}"}},
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.downStat(sel(catalog.ExporterCollectorUp), panel{title: "Collectors failing", w: 3,
		desc:     "Collectors whose last collection failed; their series are absent until they succeed again.",
		runbooks: []string{rules.WorkflowExporterSourceDown, rules.WorkflowExporterCollectorDown}})
	d.stat(panel{title: "Oldest data", unit: "s", w: 3,
		desc:     "Time since the least recent fully successful collection over all sources. Above min_interval plus the scrape interval means some data on the other dashboards is old.",
		targets:  []target{{expr: "max(time() - " + sel(catalog.ExporterLastSuccessfulCollect) + ")"}},
		steps:    []step{{120, "orange"}, {600, "red"}},
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.stat(panel{title: "Label values folded", unit: "cpm", w: 3,
		desc:     "Series folded into the label value \"other\" per minute because a metric reached its label value limit. Above 0, some topics, scopes or workers are hidden in \"other\"; raise the limit or fix the cardinality.",
		targets:  []target{{expr: "60 * " + sumBy(rate(catalog.ExporterLabelValuesFolded))}},
		steps:    []step{{0.001, "orange"}},
		runbooks: []string{rules.WorkflowExporterLabelValuesFolded}})

	d.row("Collections")
	d.series(panel{title: "Collector up", unit: "bool", min: ptr(0.0),
		desc:     "1 while a collector's last collection succeeded, 0 while it fails, per source and collector.",
		targets:  []target{{expr: sel(catalog.ExporterCollectorUp), legend: "{{source}} {{name}} {{collector}}"}},
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.series(panel{title: "Collection duration", unit: "s",
		desc:    "Duration of the last collection per collector. Approaching the scrape timeout means scrapes get the previous snapshot.",
		targets: []target{{expr: sel(catalog.ExporterCollectDuration), legend: "{{name}} {{collector}}"}}})
	d.series(panel{title: "Collection errors", unit: "ops",
		desc:     "Failed collections per second per collector.",
		targets:  []target{{expr: sumBy(rate(catalog.ExporterCollectErrors), "source", "name", "collector"), legend: "{{name}} {{collector}}"}},
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.series(panel{title: "Data age per source", unit: "s",
		desc:     "Time since the last collection of each source in which every collector succeeded.",
		targets:  []target{{expr: "time() - " + sel(catalog.ExporterLastSuccessfulCollect), legend: "{{source}} {{name}}"}},
		runbooks: []string{rules.WorkflowExporterSourceDown}})
	d.series(panel{title: "Label values folded by metric", unit: "ops",
		desc:     "Series folded into \"other\" per second, by metric.",
		targets:  []target{{expr: sumBy(rate(catalog.ExporterLabelValuesFolded), "metric"), legend: "{{metric}}"}},
		runbooks: []string{rules.WorkflowExporterLabelValuesFolded}})
	d.series(panel{title: "External tasks not watched", unit: "short",
		desc:     "In-flight external tasks (locked or lock lapsed) per engine that the last collection did not list: beyond max_listed_tasks, or on topics folded into \"other\". Their lapsed locks and redeliveries are not counted and the database joins (in doubt, completed with task open) do not see them, so those numbers are lower bounds while this is above 0. Raise max_listed_tasks or label_value_limit.",
		targets:  []target{{expr: "max by (engine) (" + sel(catalog.ExporterUnwatchedTasks) + ")", legend: "{{engine}}"}},
		runbooks: []string{rules.WorkflowExporterTasksUnwatched, rules.CamundaExternalTaskLockExpirations, rules.WorkflowIdempotencyInDoubt}})
	d.series(panel{title: "History readings cut short", unit: "short",
		desc: "Collections per engine whose new history log entries exceeded max_history_entries: for the external task log the failures and completions of those intervals are undercounted, for the job log the job failures and successes. Above 0, raise max_history_entries or collect more often.",
		targets: []target{
			{expr: sumBy(increase(catalog.ExporterHistoryReadsCut), "engine"), legend: "external tasks {{engine}}"},
			{expr: sumBy(increase(catalog.ExporterJobHistoryReadsCut), "engine"), legend: "jobs {{engine}}"},
		},
		runbooks: []string{rules.WorkflowExporterHistoryReadsCut}})
	d.series(panel{title: "Table history skipped after a gap", unit: "s",
		desc:    "Seconds of table history per collector that the counters skipped because the collection before had been longer ago than max_catch_up plus the late_commit_window (no scrapes for a while, a long outage): rows written in those spans are never counted, so the counters' increases over them are lower bounds. The exporter logs each skip once. Raise max_catch_up if a longer catch-up fits in the statement timeout.",
		targets: []target{{expr: sumBy(increase(catalog.ExporterCollectionSkipped), "source", "name", "collector"), legend: "{{name}} {{collector}}"}}})
	d.labelTable(panel{title: "Build", unit: "none",
		desc:    "Version, revision, branch, Go version and platform of each exporter instance (workflow_exporter_build_info).",
		targets: []target{{expr: sel(catalog.ExporterBuildInfo)}}},
		"job")

	d.row("Process")
	d.series(panel{title: "Resident memory", unit: "bytes", w: 8,
		desc:    "Resident memory of the exporter process.",
		targets: []target{{expr: sel(processResidentMemory), legend: "{{instance}}"}}})
	d.series(panel{title: "CPU", unit: "percentunit", w: 8,
		desc:    "CPU time of the exporter process as a share of one core.",
		targets: []target{{expr: rate(processCPUSeconds), legend: "{{instance}}"}}})
	d.series(panel{title: "Goroutines", unit: "short", w: 8,
		desc:    "Goroutines of the exporter process; a steady climb is a leak.",
		targets: []target{{expr: sel(goGoroutines), legend: "{{instance}}"}}})
	d.series(panel{title: "Remembered entries", unit: "short", w: 24,
		desc:    "What each source's collectors keep in memory between collections, by kind (lock first sightings, workers, redeliveries, admitted label values, watermark keys, duplicate counts, task creations), per exporter instance. Each kind has a bound (docs/production.md, \"Memory\"); resident memory follows the largest ones.",
		targets: []target{{expr: sel(catalog.ExporterRememberedEntries), legend: "{{instance}} {{name}} {{kind}}"}}})
	return d
}
