package camunda

import (
	"net/http"
	"testing"
)

func TestDetectFlavor(t *testing.T) {
	tests := []struct {
		version, product string
		want             Flavor
	}{
		{"7.24.0", "", FlavorCamunda},
		{"7.24.0-ee", "", FlavorCamunda},
		{"7.21.0-alpha2", "Camunda BPM Runtime", FlavorCamunda},
		{"7.24.0", "Camunda BPM Runtime", FlavorCamunda},
		{"1.0.3", "Operaton BPM Runtime", FlavorOperaton},
		{"2.1.0", "Operaton BPM Runtime", FlavorOperaton},
		{"2.1.0", "operaton", FlavorOperaton},
		{"2.2.0", "CIB seven", FlavorCIBSeven},
		{"2.2.0", "Camunda BPM Runtime", FlavorCIBSeven}, // a fork that kept Camunda's product name
		{"7.22.0-cibseven", "", FlavorCIBSeven},
		{"1.0.0-operaton", "", FlavorOperaton},
		{"2.1.0", "", FlavorUnknown}, // Operaton or CIB seven: no guessing
		{"", "", FlavorUnknown},
		{"garbage", "", FlavorUnknown},
		{"", "Camunda BPM Runtime", FlavorCamunda},
	}
	for _, tt := range tests {
		if got := DetectFlavor(tt.version, tt.product); got != tt.want {
			t.Errorf("DetectFlavor(%q, %q) = %q, want %q", tt.version, tt.product, got, tt.want)
		}
	}
}

// The telemetry endpoint is optional: a 403 or 404 there must not fail
// EngineInfo.
func TestEngineInfoWithoutTelemetry(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusForbidden} {
		f := newFakeEngine(t)
		f.handle("/version", jsonStatus(200, []byte(`{"version":"1.0.3"}`)))
		f.handle("/telemetry/data", jsonStatus(status, readFixture(t, "error_403.json")))
		c := newTestClient(t, f.url(), nil)
		info, err := c.EngineInfo(ctxT(t))
		if err != nil {
			t.Fatalf("status %d: %v", status, err)
		}
		if info.Version != "1.0.3" || info.Flavor != FlavorUnknown || info.ProductName != "" {
			t.Errorf("status %d: info = %+v", status, info)
		}
	}
	f := newFakeEngine(t)
	f.handle("/version", jsonStatus(503, nil))
	c := newTestClient(t, f.url(), nil)
	if _, err := c.EngineInfo(ctxT(t)); !IsStatus(err, 503) {
		t.Errorf("version failure: err = %v", err)
	}
}
