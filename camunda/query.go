package camunda

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultPageSize is used when a Page leaves MaxResults at zero. Every list
// request carries maxResults: engines with queryMaxResultsLimit answer 400
// ("An unbound number of results is forbidden!") to a list without it.
const DefaultPageSize = 100

// SortOrder is the direction of a sort.
type SortOrder string

// Sort orders.
const (
	Ascending  SortOrder = "asc"
	Descending SortOrder = "desc"
)

// Sort orders a list result. The engine rejects sortBy without sortOrder and
// vice versa (400), so both always go out together: an empty Order means
// Ascending, and an empty By sends neither.
type Sort struct {
	By    string
	Order SortOrder
}

// Page selects one window of a list result. Offset paging over live data can
// skip or repeat rows when tasks come and go between pages; sort by a stable
// key (for example id) and dedupe when that matters.
type Page struct {
	FirstResult int
	// MaxResults is always sent; zero or negative means the client's
	// DefaultPageSize() (DefaultPageSize, or Config.MaxResultsLimit if lower).
	MaxResults int
	Sort       Sort
}

// encode writes the paging parameters. limit is the engine's
// queryMaxResultsLimit as configured (0: none known): a Page without
// MaxResults stays within it, and a Page asking for more is refused here,
// because silently shrinking the page would make a pager believe the
// result ended early.
func (p Page) encode(v params, limit int) error {
	first := max(p.FirstResult, 0)
	size := p.MaxResults
	if size <= 0 {
		size = DefaultPageSize
		if limit > 0 {
			size = min(size, limit)
		}
	}
	if limit > 0 && size > limit {
		return fmt.Errorf("page of %d results exceeds the engine's max results limit of %d", size, limit)
	}
	v.set("firstResult", strconv.Itoa(first))
	v.set("maxResults", strconv.Itoa(size))
	if p.Sort.By != "" {
		order := p.Sort.Order
		if order == "" {
			order = Ascending
		}
		v.set("sortBy", p.Sort.By)
		v.set("sortOrder", string(order))
	}
	return nil
}

// The engine's boolean filters only understand true: "locked=false" is not
// "not locked", it is no filter at all. Pairs of opposite filters are
// therefore modelled as one enum whose zero value means "no filter", so a
// caller can neither send false nor ask for both halves of a pair at once.

// LockFilter filters external tasks by lock state (as of the engine's clock).
type LockFilter int

// Lock filters.
const (
	LockAny       LockFilter = iota // no filter
	LockLocked                      // locked=true: lock expiration set and in the future
	LockNotLocked                   // notLocked=true: never locked, or the lock expired
)

// RetryFilter filters by remaining retries.
type RetryFilter int

// Retry filters.
const (
	RetriesAny  RetryFilter = iota // no filter
	RetriesLeft                    // withRetriesLeft=true: retries > 0, or null (never failed)
	RetriesNone                    // noRetriesLeft=true: retries = 0 (an incident exists)
)

// SuspensionFilter filters by suspension state.
type SuspensionFilter int

// Suspension filters.
const (
	SuspensionAny       SuspensionFilter = iota // no filter
	SuspensionActive                            // active=true
	SuspensionSuspended                         // suspended=true
)

func (f LockFilter) encode(v params) {
	oneOf(v, f, map[LockFilter]string{LockLocked: "locked", LockNotLocked: "notLocked"})
}

func (f RetryFilter) encode(v params) {
	oneOf(v, f, map[RetryFilter]string{RetriesLeft: "withRetriesLeft", RetriesNone: "noRetriesLeft"})
}

func (f SuspensionFilter) encode(v params) {
	oneOf(v, f, map[SuspensionFilter]string{SuspensionActive: "active", SuspensionSuspended: "suspended"})
}

// oneOf sends the flag that flags names for the enum value e; the zero
// value ("no filter") has none and sends nothing.
func oneOf[E comparable](v params, e E, flags map[E]string) {
	if k, ok := flags[e]; ok {
		v.flag(k, true)
	}
}

// filter is a query struct (ExternalTaskQuery, JobQuery, ...): it writes
// the filters that are set as query parameters.
type filter interface{ encode(v params) }

// noFilter is the filter of an endpoint this client reads without one.
type noFilter struct{}

func (noFilter) encode(params) {}

// getCount performs GET path, a .../count endpoint, with q's filters.
func getCount(ctx context.Context, c *Client, path string, q filter) (int64, error) {
	v := newParams()
	q.encode(v)
	var res countResult
	if err := c.get(ctx, path, v.Values, &res); err != nil {
		return 0, err
	}
	return res.value(), nil
}

// getPage performs GET path, a list endpoint, with q's filters and the
// paging of p, and decodes the page into []T. A page larger than the
// engine's limit is refused before sending (see Page.encode). Every List*
// call goes through here, so none can forget maxResults.
func getPage[T any](ctx context.Context, c *Client, path string, q filter, p Page) ([]T, error) {
	v := newParams()
	q.encode(v)
	if err := p.encode(v, c.limit()); err != nil {
		return nil, c.refuse(path, err)
	}
	var res []T
	if err := c.get(ctx, path, v.Values, &res); err != nil {
		return nil, err
	}
	return res, nil
}

// params builds query strings and leaves out everything unset, so an empty
// query struct means "no filter".
type params struct{ url.Values }

func newParams() params { return params{url.Values{}} }

func (p params) set(k, v string) {
	if v != "" {
		p.Values.Set(k, v)
	}
}

// flag sends k=true, never k=false (see LockFilter).
func (p params) flag(k string, on bool) {
	if on {
		p.Values.Set(k, "true")
	}
}

// list sends a comma-separated list, the engine's format for *In filters.
func (p params) list(k string, vs []string) {
	if len(vs) > 0 {
		p.Values.Set(k, strings.Join(vs, ","))
	}
}

func (p params) time(k string, t time.Time) {
	if !t.IsZero() {
		p.Values.Set(k, FormatTime(t))
	}
}
