package camunda

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestProcessDefinitionKeysBatchedAndCached(t *testing.T) {
	f := newFakeEngine(t)
	f.handle("/process-definition", func(w http.ResponseWriter, r *http.Request) {
		ids := strings.Split(r.URL.Query().Get("processDefinitionIdIn"), ",")
		if r.URL.Query().Get("maxResults") != strconv.Itoa(len(ids)) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var parts []string
		for _, id := range ids {
			if strings.HasPrefix(id, "gone") {
				continue // deleted definition: the engine just omits it
			}
			key, _, _ := strings.Cut(id, ":")
			parts = append(parts, fmt.Sprintf(`{"id":%q,"key":%q,"version":1}`, id, key))
		}
		_, _ = w.Write([]byte("[" + strings.Join(parts, ",") + "]"))
	})
	c := newTestClient(t, f.url(), func(cfg *Config) { cfg.DefinitionCacheSize = 200 })

	var ids []string
	for i := range 120 {
		ids = append(ids, fmt.Sprintf("proc%d:1:uuid-%d", i, i))
	}
	ids = append(ids, "gone:1:x", ids[0], "") // a miss, a duplicate, an empty id
	keys, err := c.ProcessDefinitionKeys(ctxT(t), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 120 || keys["proc7:1:uuid-7"] != "proc7" {
		t.Fatalf("got %d keys", len(keys))
	}
	if _, ok := keys["gone:1:x"]; ok {
		t.Error("unknown id mapped")
	}
	if n := len(f.reqs()); n != 3 {
		t.Errorf("requests = %d, want 3 batches (50+50+21)", n)
	}
	for _, r := range f.reqs() {
		if len(r.RawQuery) > 4096 {
			t.Errorf("query of %d bytes", len(r.RawQuery))
		}
	}

	// Second round: all known ids come from the cache; only the miss is asked again.
	keys, err = c.ProcessDefinitionKeys(ctxT(t), ids)
	if err != nil || len(keys) != 120 {
		t.Fatalf("second round: %d keys, %v", len(keys), err)
	}
	if n := len(f.reqs()); n != 4 {
		t.Errorf("requests = %d, want 4 (cache hits plus one lookup for the unknown id)", n)
	}
	if !strings.Contains(f.last(t).RawQuery, "processDefinitionIdIn=gone") {
		t.Errorf("last lookup = %s", f.last(t).RawQuery)
	}
}

func TestDefinitionCacheBounded(t *testing.T) {
	d := newDefinitionCache(3)
	for i := range 10 {
		d.put(fmt.Sprint(i), "k")
	}
	if d.len() != 3 {
		t.Fatalf("len = %d, want 3", d.len())
	}
	for _, id := range []string{"7", "8", "9"} {
		if _, ok := d.get(id); !ok {
			t.Errorf("newest entry %s evicted", id)
		}
	}
	if _, ok := d.get("0"); ok {
		t.Error("oldest entry kept")
	}
	off := newDefinitionCache(0)
	off.put("a", "b")
	if _, ok := off.get("a"); ok {
		t.Error("size 0 should disable the cache")
	}
}

// The client (and its definition cache) is shared by concurrent collections.
func TestConcurrentUse(t *testing.T) {
	f := newFakeEngine(t)
	registerAll(t, f, "")
	c := newTestClient(t, f.url(), func(cfg *Config) { cfg.DefinitionCacheSize = 1 })
	ctx := ctxT(t)
	ids := []string{"fulfillment:3:5a1b2c3d-f9a0-11f0-9c1e-0242ac120002", "payment:1:4c2d3e4f-f9a0-11f0-9c1e-0242ac120002"}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 20 {
		wg.Go(func() {
			if _, err := c.ProcessDefinitionKeys(ctx, ids); err != nil {
				errs <- err
			}
			if _, err := c.CountExternalTasks(ctx, ExternalTaskQuery{Lock: LockLocked}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c.defs.len() != 1 {
		t.Errorf("cache holds %d entries, bound is 1", c.defs.len())
	}
}
