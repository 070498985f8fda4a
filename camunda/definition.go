package camunda

import (
	"context"
	"net/url"
	"strconv"
	"sync"
)

// ProcessDefinition is one element of GET /process-definition (the fields
// this exporter uses).
type ProcessDefinition struct {
	ID           string `json:"id"`
	Key          string `json:"key"`
	Name         string `json:"name"`
	Version      int    `json:"version"`
	VersionTag   string `json:"versionTag"`
	DeploymentID string `json:"deploymentId"`
	TenantID     string `json:"tenantId"`
	Suspended    bool   `json:"suspended"`
}

// definitionLookupBatch bounds the ids per request. Ids look like
// "key:version:uuid" (often 60+ characters); 50 keeps the URL well under
// the 8 KiB request-line limit of common servlet containers and proxies.
const definitionLookupBatch = 50

// ProcessDefinitionKeys maps process definition ids (as carried by incidents)
// to their keys. Known ids come from a bounded cache (an id's key never
// changes, so entries never go stale); unknown ones are looked up in batches.
// Ids the engine does not know are absent from the result.
func (c *Client) ProcessDefinitionKeys(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	var missing []string
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		if key, ok := c.defs.get(id); ok {
			out[id] = key
		} else {
			missing = append(missing, id)
		}
	}
	step := definitionLookupBatch
	if l := c.limit(); l > 0 {
		step = min(step, l)
	}
	for start := 0; start < len(missing); start += step {
		batch := missing[start:min(start+step, len(missing))]
		v := newParams()
		v.list("processDefinitionIdIn", batch)
		v.set("firstResult", "0")
		v.set("maxResults", strconv.Itoa(len(batch)))
		var defs []ProcessDefinition
		if err := c.get(ctx, "/process-definition", v.Values, &defs); err != nil {
			return nil, err
		}
		for _, d := range defs {
			c.defs.put(d.ID, d.Key)
			out[d.ID] = d.Key
		}
	}
	return out, nil
}

// definitionCache is a bounded id -> key map with FIFO eviction. FIFO is
// enough: entries never go stale, and a working set larger than the cache
// only costs extra batched lookups.
type definitionCache struct {
	mu    sync.Mutex
	max   int
	keys  map[string]string
	order []string // insertion order, used as a ring once full
	next  int
}

func newDefinitionCache(size int) *definitionCache {
	return &definitionCache{max: size, keys: make(map[string]string, size)}
}

func (d *definitionCache) get(id string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k, ok := d.keys[id]
	return k, ok
}

func (d *definitionCache) put(id, key string) {
	if d.max <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.keys[id]; ok {
		return
	}
	if len(d.order) < d.max {
		d.order = append(d.order, id)
	} else {
		delete(d.keys, d.order[d.next])
		d.order[d.next] = id
		d.next = (d.next + 1) % d.max
	}
	d.keys[id] = key
}

func (d *definitionCache) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.keys)
}

// ProcessDefinitionStatistics is one element of GET
// /process-definition/statistics: one process definition (one version of
// a key) with the number of its running process instances.
type ProcessDefinitionStatistics struct {
	ID         string            `json:"id"`
	Instances  int64             `json:"instances"`
	Definition ProcessDefinition `json:"definition"`
}

// ProcessDefinitionStatistics returns every process definition the user
// may read, each version with the number of its running process instances
// (executions that are process instances, suspended ones included; 0 for a
// definition without any). It is one request whatever the number of
// definitions: the endpoint has no paging.
func (c *Client) ProcessDefinitionStatistics(ctx context.Context) ([]ProcessDefinitionStatistics, error) {
	var res []ProcessDefinitionStatistics
	if err := c.get(ctx, "/process-definition/statistics", nil, &res); err != nil {
		return nil, err
	}
	return res, nil
}

// processDefinitionXML is the body of GET /process-definition/{id}/xml.
type processDefinitionXML struct {
	ID  string `json:"id"`
	XML string `json:"bpmn20Xml"`
}

func (d *processDefinitionXML) checkShape() error { return needID(d.ID) }

// ProcessDefinitionXML returns the BPMN 2.0 XML a process definition was
// deployed from (the whole resource: every process of the file). A
// definition never changes, so callers cache it by id.
func (c *Client) ProcessDefinitionXML(ctx context.Context, id string) ([]byte, error) {
	var res processDefinitionXML
	if err := c.get(ctx, "/process-definition/"+url.PathEscape(id)+"/xml", nil, &res); err != nil {
		return nil, err
	}
	return []byte(res.XML), nil
}
