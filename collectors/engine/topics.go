package engine

import (
	"sort"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
)

// Topic admission, for both readers. A topic is reported (has its own topic
// label) once it is known (configured, or reported once: it keeps reporting
// after it drains) or the topic label's limiter admits it; beyond
// label_value_limit topics fold into "other", whose counts are what the
// engine-wide counts leave beyond the reported topics. A reader chooses its
// topics (topicChoice.choose) as soon as it has the names of the topics the
// engine holds, because the REST reader spends requests per reported topic
// only; topics named only by the history log are admitted after the reading
// (topicLabel).

// topicChoice is what a reader needs of the collector to choose the topics
// of its reading.
type topicChoice struct {
	// known are the topics reported so far. Sorted, without "other".
	known []string
	// otherKnown: "other" (folded topics) is reported.
	otherKnown bool
	// admit is called for each topic the engine holds that is not known:
	// true admits it to its own label, false folds it into "other".
	admit func(topic string) bool
}

// chosenTopics is the choice of one reading.
type chosenTopics struct {
	// read holds an empty topicRead for every reported topic (known, and
	// admitted now), for the reader to fill.
	read map[string]*topicRead
	// present are the reported topics that hold open tasks now, sorted:
	// those the reader reads per topic.
	present []string
	// folded: topics are folded into "other", in this reading or before.
	folded bool
}

// choose admits the topics the engine holds now that are not known yet, in
// labellimit.Order (not the reader's order: two exporters, or one before
// and after a restart, choose the same topics), and returns the reading's
// choice.
func (tc topicChoice) choose(holding []string) chosenTopics {
	ch := chosenTopics{read: make(map[string]*topicRead, len(tc.known)), folded: tc.otherKnown}
	for _, t := range tc.known {
		ch.read[t] = &topicRead{}
	}
	var fresh [][]string
	for _, n := range holding {
		if ch.read[n] == nil {
			fresh = append(fresh, []string{n})
		}
	}
	labellimit.Order(fresh)
	foldedNow := map[string]bool{}
	for _, n := range fresh {
		if ch.read[n[0]] != nil || foldedNow[n[0]] {
			continue
		}
		if !tc.admit(n[0]) {
			ch.folded, foldedNow[n[0]] = true, true
			continue
		}
		ch.read[n[0]] = &topicRead{}
	}
	for _, n := range holding {
		if ch.read[n] != nil {
			ch.present = append(ch.present, n)
		}
	}
	sort.Strings(ch.present)
	return ch
}

// otherCounts are the counts of the topics folded into "other": the
// engine-wide counts less the reported topics' (over REST separate
// requests, so clamped at 0). nil when no topic is folded: the REST reader
// then counts no engine-wide total.
func (rd *tasksRead) otherCounts() *topicCounts {
	if !rd.folded {
		return nil
	}
	var rep topicCounts
	for _, tr := range rd.topics {
		rep.add(tr.counts)
	}
	sub := func(a, b int64) int64 { return max(0, a-b) }
	return &topicCounts{
		total:     sub(rd.all.total, rep.total),
		suspended: sub(rd.all.suspended, rep.suspended),
		exhausted: sub(rd.all.exhausted, rep.exhausted),
		locked:    sub(rd.all.locked, rep.locked),
		lapsed:    sub(rd.all.lapsed, rep.lapsed),
	}
}

// topicChoice is the collector's side of the reading's choice of topics:
// the topics known so far, and admitTopic for the others.
func (run *collectionRun) topicChoice() topicChoice {
	return topicChoice{known: run.knownTopics(), otherKnown: run.st.topics[labellimit.Other], admit: run.admitTopic}
}

// knownTopics are the topics reported so far, sorted, without "other".
func (run *collectionRun) knownTopics() []string {
	known := make([]string, 0, len(run.st.topics))
	for _, t := range sortedKeys(run.st.topics) {
		if t != labellimit.Other {
			known = append(known, t)
		}
	}
	return known
}

// admitTopic admits a topic the engine holds and the collector does not
// know yet: true gives it its own label, false folds it into "other".
func (run *collectionRun) admitTopic(topic string) bool {
	if run.c.topicLimit.Admit(topic)[0] == topic && topic != labellimit.Other {
		run.st.topics[topic] = true
		return true
	}
	run.st.topics[labellimit.Other] = true // remembered as the folded bucket
	return false
}

// topicLabel is the topic label of a topic named by a history entry,
// admitting it if it is new.
func (run *collectionRun) topicLabel(topic string) string {
	if run.st.topics[topic] && topic != labellimit.Other {
		return topic
	}
	if run.admitTopic(topic) {
		return topic
	}
	return labellimit.Other
}
