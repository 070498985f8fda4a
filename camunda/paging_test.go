package camunda

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// fakeList serves total items with offset paging and records each Page.
type fakeList struct {
	total  int
	pages  []Page
	failAt int // request number (1-based) that fails; 0 never
}

func (f *fakeList) fetch(_ context.Context, p Page) ([]int, error) {
	f.pages = append(f.pages, p)
	if f.failAt == len(f.pages) {
		return nil, errors.New("boom")
	}
	var out []int
	for i := p.FirstResult; i < f.total && i < p.FirstResult+p.MaxResults; i++ {
		out = append(out, i)
	}
	return out, nil
}

func TestCollect(t *testing.T) {
	tests := []struct {
		name          string
		total         int
		pageSize      int
		hardCap       int
		wantLen       int
		wantTruncated bool
		wantRequests  int
	}{
		{"empty", 0, 10, 100, 0, false, 1},
		{"one partial page", 7, 10, 100, 7, false, 1},
		{"exact pages", 20, 10, 100, 20, false, 3},
		{"several pages under the cap", 25, 10, 100, 25, false, 3},
		{"cap truncates mid page", 100, 10, 25, 25, true, 3},
		{"exactly cap items exist", 25, 10, 25, 25, false, 3},
		{"cap on a page boundary, more exist", 100, 10, 20, 20, true, 3},
		{"cap on a page boundary, nothing more", 20, 10, 20, 20, false, 3},
		{"cap smaller than a page", 100, 50, 5, 5, true, 1},
		{"cap of one", 3, 10, 1, 1, true, 1},
		{"default page size", 250, 0, 1000, 250, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fl := &fakeList{total: tt.total}
			items, truncated, err := Collect(context.Background(), Page{Sort: Sort{By: "id"}}, tt.pageSize, tt.hardCap, fl.fetch)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tt.wantLen || truncated != tt.wantTruncated {
				t.Errorf("got %d items, truncated=%v; want %d, %v", len(items), truncated, tt.wantLen, tt.wantTruncated)
			}
			if len(fl.pages) != tt.wantRequests {
				t.Errorf("requests = %d, want %d (%+v)", len(fl.pages), tt.wantRequests, fl.pages)
			}
			for i, it := range items {
				if it != i {
					t.Fatalf("item %d = %d: pages overlap or skip", i, it)
				}
			}
			pageSize := tt.pageSize
			if pageSize <= 0 {
				pageSize = DefaultPageSize
			}
			for _, p := range fl.pages {
				if p.MaxResults <= 0 || p.MaxResults > pageSize {
					t.Errorf("page %+v: maxResults outside 1..%d", p, pageSize)
				}
				if p.Sort.By != "id" {
					t.Errorf("page %+v lost the template's sort", p)
				}
				if p.FirstResult+p.MaxResults > tt.hardCap+1 {
					t.Errorf("page %+v reads past the cap %d (+1 probe)", p, tt.hardCap)
				}
			}
		})
	}
}

func TestCollectRefusesUnbounded(t *testing.T) {
	fl := &fakeList{total: 10}
	for _, cap := range []int{0, -1} {
		if _, _, err := Collect(context.Background(), Page{}, 10, cap, fl.fetch); err == nil {
			t.Errorf("cap %d accepted", cap)
		}
	}
	if len(fl.pages) != 0 {
		t.Error("fetched without a cap")
	}
}

func TestCollectError(t *testing.T) {
	fl := &fakeList{total: 100, failAt: 2}
	items, truncated, err := Collect(context.Background(), Page{}, 10, 100, fl.fetch)
	if err == nil || truncated || len(items) != 10 {
		t.Errorf("got %d items, %v, %v; want the first page and the error", len(items), truncated, err)
	}
}

// End to end: Collect over ListExternalTasks against a paging fake engine.
func TestCollectExternalTasks(t *testing.T) {
	f := newFakeEngine(t)
	const total = 37
	f.handle("/external-task", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		first, _ := strconv.Atoi(q.Get("firstResult"))
		max, err := strconv.Atoi(q.Get("maxResults"))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(readFixture(t, "error_400_unbound.json"))
			return
		}
		var parts []string
		for i := first; i < total && i < first+max; i++ {
			parts = append(parts, fmt.Sprintf(`{"id":"task-%03d","topicName":"t","retries":null,"lockExpirationTime":null}`, i))
		}
		_, _ = w.Write([]byte("[" + strings.Join(parts, ",") + "]"))
	})
	c := newTestClient(t, f.url(), nil)
	q := ExternalTaskQuery{TopicName: "t", Lock: LockLocked}
	fetch := func(ctx context.Context, p Page) ([]ExternalTask, error) { return c.ListExternalTasks(ctx, q, p) }

	tasks, truncated, err := Collect(ctxT(t), Page{Sort: Sort{By: ExternalTaskSortID}}, 10, 30, fetch)
	if err != nil || !truncated || len(tasks) != 30 || tasks[29].ID != "task-029" {
		t.Fatalf("got %d tasks, truncated=%v, err=%v", len(tasks), truncated, err)
	}
	tasks, truncated, err = Collect(ctxT(t), Page{Sort: Sort{By: ExternalTaskSortID}}, 10, 100, fetch)
	if err != nil || truncated || len(tasks) != total {
		t.Fatalf("got %d tasks, truncated=%v, err=%v", len(tasks), truncated, err)
	}
	for _, r := range f.reqs() {
		if !strings.Contains(r.RawQuery, "maxResults=") || !strings.Contains(r.RawQuery, "sortBy=id&sortOrder=asc") || !strings.Contains(r.RawQuery, "locked=true") {
			t.Errorf("request %s lacks maxResults, sort or filter", r.RawQuery)
		}
	}
}
