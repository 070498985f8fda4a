package engine

import (
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// Topic admission, for both readers. A topic is reported (has its own topic
// label) once it is known (configured, or reported once: it keeps reporting
// after it drains) or the topic label's limiter admits it; beyond
// label_value_limit topics fold into "other", whose counts are what the
// engine-wide counts leave beyond the reported topics. A reader chooses its
// topics (reading.TopicChoice) as soon as it has the names of the topics
// the engine holds, because the REST reader spends requests per reported
// topic only; topics named only by the history log are admitted after the
// reading (topicLabel).

// topicChoice is the collector's side of the reading's choice of topics:
// the topics known so far, and admitTopic for the others.
func (run *collectionRun) topicChoice() reading.TopicChoice {
	return reading.TopicChoice{Known: run.knownTopics(), OtherKnown: run.st.topics[labellimit.Other], Admit: run.admitTopic}
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
		run.c.topicLimit.Admit(topic) // seen (label_value_forget_after)
		return topic
	}
	if run.admitTopic(topic) {
		return topic
	}
	return labellimit.Other
}
