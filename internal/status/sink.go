package status

import (
	"context"
	"sort"
	"sync"
)

// Sink receives the lists one collector finds in one collection. poll gives
// every collector of a source its own sink in the collection's context and
// keeps the lists only when the collector succeeds, exactly like its
// metrics: a failed collection leaves nothing stale on the page.
type Sink struct {
	source   SourceRef
	maxItems int

	mu    sync.Mutex
	lists []List
}

// NewSink returns a sink for a collection of source, whose lists keep at
// most maxItems items each.
func NewSink(source SourceRef, maxItems int) *Sink {
	return &Sink{source: source, maxItems: max(maxItems, 1)}
}

type sinkKey struct{}

// NewContext returns ctx carrying the sink.
func NewContext(ctx context.Context, s *Sink) context.Context {
	return context.WithValue(ctx, sinkKey{}, s)
}

// FromContext returns the collection's sink, or nil when the status page is
// off: the collector then skips every reading only the page needs.
func FromContext(ctx context.Context) *Sink {
	s, _ := ctx.Value(sinkKey{}).(*Sink)
	return s
}

// MaxItems is how many items a list keeps: the LIMIT of a list's query.
func (s *Sink) MaxItems() int { return s.maxItems }

// Add reports one list. Its items are put in order, oldest first (items
// without a time last, otherwise in the order given), and cut to MaxItems;
// Total is at least the number of items given. A list whose identifiers
// are hidden keeps no item.
func (s *Sink) Add(l List) {
	l.Source = s.source
	if l.IdentifiersHidden {
		l.Items = nil
	}
	sort.SliceStable(l.Items, func(i, j int) bool {
		a, b := l.Items[i].Since, l.Items[j].Since
		return a != nil && (b == nil || a.Before(*b))
	})
	l.Total = max(l.Total, len(l.Items))
	if len(l.Items) > s.maxItems {
		l.Items = l.Items[:s.maxItems:s.maxItems]
	}
	l.More = l.Total > len(l.Items)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists = append(s.lists, l)
}

// Lists returns what was added.
func (s *Sink) Lists() []List {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]List(nil), s.lists...)
}
