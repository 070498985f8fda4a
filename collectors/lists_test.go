package collectors

import (
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

func TestSinkOrdersCutsAndCounts(t *testing.T) {
	s := NewSink(SourceRef{"database", "orders"}, 2)
	s.Add(List{Kind: vocab.KindInDoubt, Total: 1, Items: []Item{
		{IdempotencyKey: "new", Since: testkit.At(-10)}, {IdempotencyKey: "no-time"}, {IdempotencyKey: "old", Since: testkit.At(-300)}, {IdempotencyKey: "mid", Since: testkit.At(-60)},
	}})
	s.Add(List{Kind: vocab.KindUnknownOutcome, Total: 7, IdentifiersHidden: true, Items: []Item{{IdempotencyKey: "secret"}}})
	s.Add(List{Kind: vocab.KindOutboxPending})
	got := s.Lists()
	var keys []string
	for _, it := range got[0].Items {
		keys = append(keys, it.IdempotencyKey)
	}
	if strings.Join(keys, ",") != "old,mid" || got[0].Total != 4 || !got[0].More || got[0].Source != (SourceRef{"database", "orders"}) {
		t.Errorf("in_doubt: items %v, total %d, more %v, source %v; want the two oldest of 4 (the total is at least the items given)",
			keys, got[0].Total, got[0].More, got[0].Source)
	}
	if len(got[1].Items) != 0 || got[1].Total != 7 || !got[1].More {
		t.Errorf("hidden list kept %d items, total %d", len(got[1].Items), got[1].Total)
	}
	if got[2].Total != 0 || got[2].More {
		t.Errorf("empty list: total %d, more %v", got[2].Total, got[2].More)
	}
}
