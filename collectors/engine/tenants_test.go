package engine

import (
	"slices"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

func TestTenantLabels(t *testing.T) {
	on := newTenantLabels(true, catalog.CamundaExternalTasks, catalog.CamundaIncidents, catalog.CamundaEngineInfo)
	off := newTenantLabels(false, catalog.CamundaExternalTasks)
	for _, tc := range []struct {
		name   string
		t      tenantLabels
		family string
		in     []string
		want   []string
	}{
		{"a tenant's topic", on, catalog.CamundaExternalTasks, []string{"e1", reading.TenantKey("acme", "pay"), "locked"}, []string{"e1", "acme", "pay", "locked"}},
		{"no tenant", on, catalog.CamundaExternalTasks, []string{"e1", reading.TenantKey("", "pay"), "locked"}, []string{"e1", "", "pay", "locked"}},
		{"a configured topic without key", on, catalog.CamundaExternalTasks, []string{"e1", "pay", "waiting"}, []string{"e1", "", "pay", "waiting"}},
		{"the fold", on, catalog.CamundaExternalTasks, []string{"e1", labellimit.Other, "waiting"}, []string{"e1", labellimit.Other, labellimit.Other, "waiting"}},
		{"the key after the type", on, catalog.CamundaIncidents, []string{"e1", "failedJob", reading.TenantKey("globex", "order"), "task"},
			[]string{"e1", "failedJob", "globex", "order", "task"}},
		{"a family without the label", on, catalog.CamundaEngineInfo, []string{"e1", "7.24.0", "camunda", "full"}, []string{"e1", "7.24.0", "camunda", "full"}},
		{"tenant_label off", off, catalog.CamundaExternalTasks, []string{"e1", "pay", "locked"}, []string{"e1", "pay", "locked"}},
	} {
		got := tc.t.of(tc.family, tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		// The values fit the family's labels as served.
		if m := catalog.MustGet(tc.family); len(tc.t) > 0 && len(got) != len(m.WithTenant().Labels) {
			t.Errorf("%s: %d values for the labels %v", tc.name, len(got), m.WithTenant().Labels)
		}
	}
}
