// Command constserver is the baseline of the scrape benchmark
// (BenchmarkScrapeFromSnapshot in test/bench/tables): a plain client_golang
// registry serving a fixed set of const metrics, beside the Go and process
// collectors the exporter also registers, through promhttp with the same
// handler options as the exporter. The metrics are read once at start from
// a text exposition file (the benchmark gives it the exporter's own
// output), so the baseline serves the same series with the same names,
// labels and values, and does nothing else per scrape.
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func main() {
	file := flag.String("metrics", "", "text exposition file whose series to serve (go_* and process_* families are left out: this process's own collectors provide them)")
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	flag.Parse()
	metrics, err := readMetrics(*file)
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		constCollector(metrics),
	)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Ready.") })
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// constCollector sends the same const metrics on every scrape. Like the
// exporter's collector of snapshots it describes nothing (unchecked).
type constCollector []prometheus.Metric

func (c constCollector) Describe(chan<- *prometheus.Desc) {}

func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// readMetrics turns the counter, gauge, untyped and histogram series of a
// text exposition into const metrics.
func readMetrics(path string) ([]prometheus.Metric, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names := make([]string, 0, len(families))
	for n := range families {
		if !strings.HasPrefix(n, "go_") && !strings.HasPrefix(n, "process_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []prometheus.Metric
	for _, n := range names {
		mf := families[n]
		descs := map[string]*prometheus.Desc{}
		for _, m := range mf.GetMetric() {
			var labelNames, values []string
			for _, lp := range m.GetLabel() {
				labelNames = append(labelNames, lp.GetName())
				values = append(values, lp.GetValue())
			}
			key := strings.Join(labelNames, "\xff")
			if descs[key] == nil {
				descs[key] = prometheus.NewDesc(n, mf.GetHelp(), labelNames, nil)
			}
			desc := descs[key]
			var metric prometheus.Metric
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				metric, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, m.GetCounter().GetValue(), values...)
			case dto.MetricType_GAUGE:
				metric, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.GetGauge().GetValue(), values...)
			case dto.MetricType_UNTYPED:
				metric, err = prometheus.NewConstMetric(desc, prometheus.UntypedValue, m.GetUntyped().GetValue(), values...)
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				buckets := map[float64]uint64{}
				for _, bk := range h.GetBucket() {
					if !math.IsInf(bk.GetUpperBound(), 1) {
						buckets[bk.GetUpperBound()] = bk.GetCumulativeCount()
					}
				}
				metric, err = prometheus.NewConstHistogram(desc, h.GetSampleCount(), h.GetSampleSum(), buckets, values...)
			default:
				return nil, fmt.Errorf("%s: family %s has type %s, which this baseline does not serve", path, n, mf.GetType())
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, n, err)
			}
			out = append(out, metric)
		}
	}
	return out, nil
}
