package reading

import (
	"strings"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
)

// TenantSep separates the tenant from the topic in a topic key: a control
// character no topic name or tenant id holds. The engine-database reader
// writes it as chr(31).
const TenantSep = "\x1f"

// TenantKey is the topic key of a topic of a tenant ("" for tasks without
// one).
func TenantKey(tenant, topic string) string { return tenant + TenantSep + topic }

// SplitKey returns the tenant and the topic of a topic key.
func SplitKey(key string) (tenant, topic string) {
	if key == labellimit.Other {
		return labellimit.Other, labellimit.Other
	}
	if t, topic, ok := strings.Cut(key, TenantSep); ok {
		return t, topic
	}
	return "", key
}
