package dashboards

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// strictDecodeErr decodes dashboard JSON with the SDK's strict decoder (it
// fails on unknown fields, wrong types and missing required fields). The SDK
// returns an empty cog.BuildErrors as a non-nil error; that counts as none.
// The __requires section of Grafana's export format is not part of the
// dashboard schema (Grafana reads it on import), so it is left out here.
func strictDecodeErr(js []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return err
	}
	delete(m, "__requires")
	js, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var d dashboard.Dashboard
	err = d.UnmarshalJSONStrict(js)
	var be cog.BuildErrors
	if errors.As(err, &be) && len(be) == 0 {
		return nil
	}
	return err
}

// TestJSONMatchesSDKSchema decodes every generated dashboard with the SDK's
// strict decoder: the JSON is a valid Grafana dashboard as the schema the SDK
// is generated from describes it.
func TestJSONMatchesSDKSchema(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	ds, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if err := strictDecodeErr(d.JSON); err != nil {
			t.Errorf("%s: %v", d.UID, err)
		}
	}
	if strictDecodeErr([]byte(`{"uid":"x","title":"x","panels":[{"type":"stat","bogus":1}]}`)) == nil {
		t.Error("the strict decoder accepted an unknown panel field")
	}
}
