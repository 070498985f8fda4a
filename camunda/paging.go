package camunda

import (
	"context"
	"errors"
)

// PageFunc fetches one page; it is usually a closure over a List* call with
// its query and sort fixed.
type PageFunc[T any] func(ctx context.Context, p Page) ([]T, error)

// Collect walks pages of pageSize items (DefaultPageSize if <= 0) until the
// result is exhausted or hardCap items are collected. It never reads more
// than hardCap items, plus one to learn whether more exist; truncated
// reports that the cap cut the result short. hardCap must be positive: there
// is deliberately no unbounded mode.
//
// Pages are fetched with offset paging; see Page for what that means on live
// data. Set a stable sort in the Page passed as template.
func Collect[T any](ctx context.Context, template Page, pageSize, hardCap int, fetch PageFunc[T]) (items []T, truncated bool, err error) {
	if hardCap <= 0 {
		return nil, false, errors.New("camunda: paging needs a positive hard cap")
	}
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	for {
		remaining := hardCap - len(items)
		// Ask for one more than the cap allows when this is the last page,
		// so a full cap can be told apart from "exactly cap items exist"
		// without an extra request; if that would exceed the page size,
		// probe with a separate one-item request once the cap is reached.
		want := min(pageSize, remaining+1)
		p := template
		p.FirstResult = template.FirstResult + len(items)
		p.MaxResults = want
		page, err := fetch(ctx, p)
		if err != nil {
			return items, false, err
		}
		if len(page) > remaining {
			return append(items, page[:remaining]...), true, nil
		}
		items = append(items, page...)
		if len(page) < want || len(page) == 0 {
			return items, false, nil
		}
	}
}
