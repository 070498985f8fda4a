package engine

import (
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// With camunda[].tenant_label on, the collectors break their series per
// topic or process definition key down by tenant without a second kind of
// state: every map keyed by a topic or key label (the counts, the tracked
// tasks, the counters, the admission; the jobs', processes', incidents' and
// history cleanup's keys alike) is keyed by reading.TenantKey(tenant, topic)
// instead, which the readers build where they read one (keyOf of the rest
// and the enginedb Reader, in SQL enginedb's Reader.keyed with the same
// separator), and which
// the series split into their tenant and topic (or key) labels as they are
// emitted (tenantLabels). label_value_limit then bounds the pairs; beyond
// it they fold into the one key "other", served as tenant="other",
// topic="other". Keys without the separator (the configured topics,
// "unattributed") belong to no tenant.

// tenantOfKey returns the tenant of a key ("" for none).
func tenantOfKey(key string) string {
	tenant, _ := reading.SplitKey(key)
	return tenant
}

// plainKey returns the topic (or process definition key) of a key: what
// the joins and the status page call it.
func plainKey(key string) string {
	_, topic := reading.SplitKey(key)
	return topic
}

// tenantLabels are the tenanted families a collector emits (none with
// tenant_label off), each with the index of its keyed label (topic or
// process_definition_key, catalog.Metric.TenantKeyIndex).
type tenantLabels map[string]int

func newTenantLabels(on bool, names ...string) tenantLabels {
	t := tenantLabels{}
	if on {
		for _, n := range names {
			if i := catalog.MustGet(n).TenantKeyIndex(); i >= 0 {
				t[n] = i
			}
		}
	}
	return t
}

// of returns the label values of a series of the family name: for a
// tenanted family its keyed value becomes the tenant and the value.
func (t tenantLabels) of(name string, values []string) []string {
	i, ok := t[name]
	if !ok || i >= len(values) {
		return values
	}
	tenant, v := reading.SplitKey(values[i])
	out := make([]string, 0, len(values)+1)
	out = append(out, values[:i]...)
	out = append(out, tenant, v)
	return append(out, values[i+1:]...)
}

// topicLabels are the label values of a series of the collector.
func (c *externalTasksCollector) topicLabels(name string, labels []string) []string {
	return c.tenanted.of(name, labels)
}

// newDescs builds a collector's descriptors: with tenant_label on, the
// tenanted families carry the tenant label (catalog.NewTenantDescs).
func newDescs(tenants bool, names ...string) catalog.Descs {
	if tenants {
		return catalog.NewTenantDescs(names...)
	}
	return catalog.NewDescs(names...)
}
