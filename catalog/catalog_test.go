package catalog

import (
	"strings"
	"testing"

	"github.com/prometheus/common/model"
)

func TestCatalogConventions(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All() {
		t.Run(m.Name, func(t *testing.T) {
			if seen[m.Name] {
				t.Fatalf("duplicate metric name")
			}
			seen[m.Name] = true
			if !model.UTF8Validation.IsValidMetricName(m.Name) || strings.ContainsAny(m.Name, ".-") {
				t.Errorf("invalid metric name")
			}
			switch m.Type {
			case Counter:
				if !strings.HasSuffix(m.Name, "_total") {
					t.Errorf("counter must end in _total")
				}
			case Gauge, Histogram:
				if strings.HasSuffix(m.Name, "_total") {
					t.Errorf("%s must not end in _total", m.Type)
				}
			default:
				t.Errorf("unknown type %q", m.Type)
			}
			wantPrefix := map[Source]string{SourceCamunda: "camunda_", SourceDatabase: "workflow_", SourceDelivery: "workflow_delivery_", SourceExporter: "workflow_exporter_"}[m.Source]
			if wantPrefix == "" || !strings.HasPrefix(m.Name, wantPrefix) {
				t.Errorf("source %q needs prefix %q", m.Source, wantPrefix)
			}
			if m.Help == "" || !strings.HasSuffix(m.Help, ".") {
				t.Errorf("HELP must be a sentence: %q", m.Help)
			}
			labels := map[string]bool{}
			for _, l := range m.Labels {
				if labels[l] || !model.LegacyValidation.IsValidLabelName(l) {
					t.Errorf("bad or repeated label %q", l)
				}
				labels[l] = true
			}
			switch m.Source {
			case SourceCamunda:
				if !labels["engine"] {
					t.Errorf("camunda metrics carry the engine label")
				}
			case SourceDatabase:
				if !labels["database"] {
					t.Errorf("table metrics carry the database label")
				}
			case SourceDelivery:
				if !labels["delivery"] {
					t.Errorf("delivery metrics carry the delivery label")
				}
			}
		})
	}
}

func TestLookup(t *testing.T) {
	if _, ok := Lookup(OutboxOldestPendingAge); !ok {
		t.Fatal("known metric not found")
	}
	if _, ok := Lookup("workflow_nonexistent"); ok {
		t.Fatal("unknown metric found")
	}
	if !KnownSeries(OutboxPublishDelay+"_bucket") || KnownSeries(OutboxPublishDelay+"_total") {
		t.Fatal("histogram series names wrong")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustGet of an unknown name did not panic")
		}
	}()
	MustGet("nope")
}

func TestDesc(t *testing.T) {
	for _, m := range All() {
		if got, want := Desc(m.Name).String(), m.Desc().String(); got != want {
			t.Fatalf("Desc(%q) = %s, want %s", m.Name, got, want)
		}
	}
	// Collectors build theirs once (NewDescs) and look them up per series.
	d := NewDescs(CamundaExternalTasks)
	if d.Get(CamundaExternalTasks) != d.Get(CamundaExternalTasks) { //nolint:staticcheck // two calls must return the same descriptor
		t.Fatal("Descs returns a new descriptor per call")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Desc of an unknown name did not panic")
		}
	}()
	Desc("nope")
}
