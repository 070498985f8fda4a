package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/alerts/slo"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/dashboards"
)

// renderOptions are the flags of `render rules` and `render dashboards`:
// the alert rules and the dashboards from a user's settings, without a Go
// toolchain. `go generate` writes the repository's own files with these
// commands, so a user's render and the committed files take one code path.
type renderOptions struct {
	alertsConfig     string
	dashboardsConfig string
	// Each command has its own flags (kingpin sets the defaults of every
	// command's flags).
	rulesFormat, rulesOut, name, rulesNamespace string
	rulesLabels                                 map[string]string
	dashFormat, dashOut, dashNamespace, folder  string
	dashLabels                                  map[string]string
	slosConfig, slosExporterConfig, slosFormat  string
	slosOut, slosName, slosNamespace, service   string
	slosLabels                                  map[string]string
}

const (
	cmdRenderRules      = "render rules"
	cmdRenderDashboards = "render dashboards"
	cmdRenderSLOs       = "render slos"
)

func addRenderCommands(app *kingpin.Application, r *renderOptions) {
	r.rulesLabels, r.dashLabels, r.slosLabels = map[string]string{}, map[string]string{}, map[string]string{}
	render := app.Command("render", "Write the alert rules or the Grafana dashboards for your settings (see `render rules --help`, `render dashboards --help`).")
	rc := render.Command("rules", "Write the Prometheus alert rules, tuned by an alerts config (the format of alerts/config.yml; keys left out keep their default), as a rule file or a PrometheusRule.")
	rc.Flag("alerts-config", "Alerts config file: job selector, runbook base URL, thresholds. Without it: the defaults.").PlaceHolder("FILE").StringVar(&r.alertsConfig)
	rc.Flag("format", "rules: a Prometheus rule file; prometheusrule: a PrometheusRule for the Prometheus Operator.").Default("rules").EnumVar(&r.rulesFormat, "rules", "prometheusrule")
	rc.Flag("out", "File to write; - for standard output.").Default("-").StringVar(&r.rulesOut)
	rc.Flag("name", "PrometheusRule: metadata.name.").Default("workflow-exporter").StringVar(&r.name)
	rc.Flag("namespace", "PrometheusRule: metadata.namespace (empty: none, kubectl's current namespace).").StringVar(&r.rulesNamespace)
	rc.Flag("label", "PrometheusRule: a label KEY=VALUE, e.g. the one your Prometheus's ruleSelector matches (repeatable).").PlaceHolder("KEY=VALUE").StringMapVar(&r.rulesLabels)

	dc := render.Command("dashboards", "Write the Grafana dashboards, adapted by a dashboards config (datasource, selector, cluster and namespace variables), as JSON files or as ConfigMaps for the Grafana sidecar.")
	dc.Flag("dashboards-config", "Dashboards config file (see docs/install.md). Without it: the shipped dashboards.").PlaceHolder("FILE").StringVar(&r.dashboardsConfig)
	dc.Flag("alerts-config", "Alerts config file (the one the rules are rendered from): the panels show its thresholds and link its runbooks. Without it: the defaults.").PlaceHolder("FILE").StringVar(&r.alertsConfig)
	dc.Flag("format", "json: one <uid>.json per dashboard in the --out directory; configmap: ConfigMaps with the sidecar label in one file.").Default("json").EnumVar(&r.dashFormat, "json", "configmap")
	dc.Flag("out", "json: the directory to write into (created if missing); configmap: the file to write, - for standard output.").StringVar(&r.dashOut)
	dc.Flag("namespace", "ConfigMaps: metadata.namespace (empty: none).").StringVar(&r.dashNamespace)
	dc.Flag("label", "ConfigMaps: an extra label KEY=VALUE (repeatable).").PlaceHolder("KEY=VALUE").StringMapVar(&r.dashLabels)
	dc.Flag("folder", "ConfigMaps: the Grafana folder (grafana_folder annotation).").Default("Workflow").StringVar(&r.folder)

	sc := render.Command("slos", "Write recording rules and multi-window, multi-burn-rate alerts for service level objectives on the exporter's histograms and counters (docs/slos.md), as a rule file, a PrometheusRule, or a Sloth specification.")
	sc.Flag("slos-config", "SLO file (alerts/slos.example.yml shows every key).").PlaceHolder("FILE").Required().StringVar(&r.slosConfig)
	sc.Flag("exporter-config", "The exporter's config file, whose histogram buckets the latency thresholds must be boundaries of. Without it: the default buckets.").PlaceHolder("FILE").StringVar(&r.slosExporterConfig)
	sc.Flag("format", "rules: a Prometheus rule file; prometheusrule: a PrometheusRule; sloth: a Sloth prometheus/v1 specification.").Default("rules").EnumVar(&r.slosFormat, "rules", "prometheusrule", "sloth")
	sc.Flag("out", "File to write; - for standard output.").Default("-").StringVar(&r.slosOut)
	sc.Flag("service", "Sloth: the service name.").Default("workflow-exporter").StringVar(&r.service)
	sc.Flag("name", "PrometheusRule: metadata.name.").Default("workflow-exporter-slos").StringVar(&r.slosName)
	sc.Flag("namespace", "PrometheusRule: metadata.namespace (empty: none).").StringVar(&r.slosNamespace)
	sc.Flag("label", "PrometheusRule: a label KEY=VALUE (repeatable).").PlaceHolder("KEY=VALUE").StringMapVar(&r.slosLabels)
}

// runRender runs a render command. Errors name the file or flag.
func runRender(cmd string, r *renderOptions, stdout io.Writer) error {
	switch cmd {
	case cmdRenderRules:
		if err := checkLabels(r.rulesLabels); err != nil {
			return err
		}
		cfg := rules.Default()
		if r.alertsConfig != "" {
			var err error
			if cfg, err = rules.Load(r.alertsConfig); err != nil {
				return fmt.Errorf("%s: %w", r.alertsConfig, err)
			}
		}
		source := filepath.ToSlash(r.alertsConfig)
		var b []byte
		var err error
		if r.rulesFormat == "prometheusrule" {
			labels := map[string]string{"app.kubernetes.io/name": "workflow-exporter", "app.kubernetes.io/component": "alerts"}
			maps.Copy(labels, r.rulesLabels)
			b, err = rules.RenderPrometheusRule(cfg, source, rules.ObjectMeta{Name: r.name, Namespace: r.rulesNamespace, Labels: labels})
		} else {
			b, err = rules.RenderFrom(cfg, source)
		}
		if err != nil {
			return err
		}
		return writeOut(r.rulesOut, b, stdout)
	case cmdRenderDashboards:
		if err := checkLabels(r.dashLabels); err != nil {
			return err
		}
		var o dashboards.Options
		if r.dashboardsConfig != "" {
			var err error
			if o, err = dashboards.LoadOptions(r.dashboardsConfig); err != nil {
				return err
			}
		}
		if r.alertsConfig != "" {
			cfg, err := rules.Load(r.alertsConfig)
			if err != nil {
				return fmt.Errorf("%s: %w", r.alertsConfig, err)
			}
			o.Alerts = &cfg
		}
		ds, err := dashboards.Render(o)
		if err != nil {
			return err
		}
		if r.dashFormat == "configmap" {
			return writeOut(r.dashOut, dashboards.ConfigMapWith(ds, dashboards.ConfigMapOptions{Namespace: r.dashNamespace, Labels: r.dashLabels, Folder: r.folder}), stdout)
		}
		out := r.dashOut
		if out == "" || out == "-" {
			return fmt.Errorf("render dashboards: --out: give the directory for the JSON files (or --format configmap for one file)")
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("render dashboards: --out: %w", err)
		}
		for _, d := range ds {
			if err := os.WriteFile(filepath.Join(out, d.UID+".json"), d.JSON, 0o644); err != nil {
				return fmt.Errorf("render dashboards: %w", err)
			}
		}
		return nil
	case cmdRenderSLOs:
		b, err := renderSLOs(r)
		if err != nil {
			return err
		}
		return writeOut(r.slosOut, b, stdout)
	}
	return fmt.Errorf("unknown command %q", cmd)
}

// renderSLOs renders `render slos`: the SLO file checked against the
// catalog and the exporter's buckets, in the format asked for.
func renderSLOs(r *renderOptions) ([]byte, error) {
	if err := checkLabels(r.slosLabels); err != nil {
		return nil, err
	}
	var exporterCfg *config.Config
	if r.slosExporterConfig != "" {
		c, err := config.Load(r.slosExporterConfig)
		if err != nil {
			return nil, fmt.Errorf("render slos: --exporter-config: %w", err)
		}
		exporterCfg = c
	}
	cfg, err := slo.Load(r.slosConfig, slo.BucketsOf(exporterCfg))
	if err != nil {
		return nil, err
	}
	source := filepath.ToSlash(r.slosConfig)
	switch r.slosFormat {
	case "sloth":
		return slo.Sloth(cfg, r.service)
	case "prometheusrule":
		labels := map[string]string{"app.kubernetes.io/name": "workflow-exporter", "app.kubernetes.io/component": "slos"}
		maps.Copy(labels, r.slosLabels)
		return slo.PrometheusRule(cfg, source, slo.Meta{Name: r.slosName, Namespace: r.slosNamespace, Labels: labels})
	}
	return slo.Rules(cfg, source)
}

func writeOut(path string, b []byte, stdout io.Writer) error {
	if path == "-" || path == "" {
		_, err := stdout.Write(b)
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

var (
	// labelKeyRE is a Kubernetes label key: an optional DNS prefix and a
	// name of at most 63 characters.
	labelKeyRE   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValueRE = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		if !labelKeyRE.MatchString(k) || len(strings.SplitN(k, "/", 2)[0]) > 253 {
			return fmt.Errorf("--label %s=%s: %q is not a Kubernetes label key", k, v, k)
		}
		if !labelValueRE.MatchString(v) {
			return fmt.Errorf("--label %s=%s: %q is not a Kubernetes label value (at most 63 letters, digits, '-', '_', '.')", k, v, v)
		}
	}
	return nil
}
