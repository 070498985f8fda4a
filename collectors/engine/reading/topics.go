package reading

import (
	"sort"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
)

// TopicChoice is what a reader needs of the collector to choose the topics
// of its reading.
type TopicChoice struct {
	// Known are the topics reported so far. Sorted, without "other".
	Known []string
	// OtherKnown: "other" (folded topics) is reported.
	OtherKnown bool
	// Admit is called for each topic the engine holds that is not known:
	// true admits it to its own label, false folds it into "other".
	Admit func(topic string) bool
}

// ChosenTopics is the choice of one reading.
type ChosenTopics struct {
	// Read holds an empty TopicRead for every reported topic (known, and
	// admitted now), for the reader to fill.
	Read map[string]*TopicRead
	// Present are the reported topics that hold open tasks now, sorted:
	// those the reader reads per topic.
	Present []string
	// Folded: topics are folded into "other", in this reading or before.
	Folded bool
}

// Choose admits the topics the engine holds now that are not known yet, in
// labellimit.Order, and returns the reading's choice.
func (tc TopicChoice) Choose(holding []string) ChosenTopics {
	ch := ChosenTopics{Read: make(map[string]*TopicRead, len(tc.Known)), Folded: tc.OtherKnown}
	for _, t := range tc.Known {
		ch.Read[t] = &TopicRead{}
	}
	// New topics are admitted in labellimit.Order, not the reader's order:
	// two exporters, or one before and after a restart, choose the same
	// topics.
	var fresh [][]string
	for _, n := range holding {
		if ch.Read[n] == nil {
			fresh = append(fresh, []string{n})
		}
	}
	labellimit.Order(fresh)
	foldedNow := map[string]bool{}
	for _, n := range fresh {
		if ch.Read[n[0]] != nil || foldedNow[n[0]] {
			continue
		}
		if !tc.Admit(n[0]) {
			ch.Folded, foldedNow[n[0]] = true, true
			continue
		}
		ch.Read[n[0]] = &TopicRead{}
	}
	for _, n := range holding {
		if ch.Read[n] != nil {
			ch.Present = append(ch.Present, n)
		}
	}
	sort.Strings(ch.Present)
	return ch
}
