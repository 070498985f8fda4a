package labellimit

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// values splits fuzz input into label values: one per line, each a tuple
// of fields separated by tabs.
func values(input string) [][]string {
	var out [][]string
	for _, line := range strings.Split(input, "\n") {
		out = append(out, strings.Split(line, "\t"))
	}
	return out
}

// FuzzLimiter admits tuples in the fuzzed order over two collections (the
// first succeeds, the second fails). Whatever the input: at most limit
// distinct tuples keep their values, an admitted tuple keeps them for good,
// any other comes back as all "other", and the folds counted are the
// distinct folded tuples of the successful collection only.
func FuzzLimiter(f *testing.F) {
	f.Add("a\nb\nc\na\nd", "e\na\nf", 2)
	f.Add("other\nx\ty\nx\ty", "other", 1)
	f.Add("", "", 1)
	f.Add("a\tb\nb\ta\na\tb\n\t", "b\ta", 3)
	f.Fuzz(func(t *testing.T, first, second string, limit int) {
		if limit < 1 || limit > 1000 {
			return
		}
		stats := NewStats()
		l := NewLimiter(stats, "m", limit)
		kept := map[string]bool{}
		folded := map[string]bool{}
		admit := func(vals []string, fold map[string]bool) {
			key := strings.Join(vals, "\xff")
			got := l.Admit(vals...)
			if len(got) != len(vals) {
				t.Fatalf("Admit(%q) returned %d values", vals, len(got))
			}
			if strings.Join(got, "\xff") == key && (kept[key] || len(kept) < limit) {
				kept[key] = true
				return
			}
			if kept[key] {
				t.Fatalf("admitted tuple %q came back as %q", vals, got)
			}
			for _, v := range got {
				if v != Other {
					t.Fatalf("folded tuple %q came back as %q", vals, got)
				}
			}
			fold[key] = true
		}
		for _, v := range values(first) {
			admit(v, folded)
		}
		l.Flush()
		for _, v := range values(second) {
			admit(v, map[string]bool{})
		}
		l.Discard()
		if len(kept) > limit {
			t.Fatalf("%d tuples kept their values, limit %d", len(kept), limit)
		}
		if got := foldedTotal(t, stats, "m"); got != float64(len(folded)) {
			t.Fatalf("folds counted %v, want the %d distinct tuples folded by the successful collection", got, len(folded))
		}
	})
}

// FuzzRanked folds fuzzed weights. Whatever the input: the weights add up to
// the same total, at most limit values keep their own label plus "other",
// no value kept weighs less than one folded, and the result does not
// depend on the order of the input.
func FuzzRanked(f *testing.F) {
	f.Add("w1\nw2\nw3\nw1", 2, int64(5))
	f.Add("other\na\nb", 1, int64(-3))
	f.Add("", 1, int64(0))
	f.Fuzz(func(t *testing.T, input string, limit int, seed int64) {
		if limit < 1 || limit > 1000 {
			return
		}
		weights := map[string]int64{}
		var total int64
		for i, line := range strings.Split(input, "\n") {
			w := (seed*int64(i+7))%1000 + int64(len(line))
			weights[line] += w
			total += w
		}
		stats := NewStats()
		r := NewRanked(stats, "m", limit)
		out := r.Fold(weights)
		var sum int64
		for _, w := range out {
			sum += w
		}
		if sum != total {
			t.Fatalf("weights add up to %d after folding, %d before", sum, total)
		}
		own := 0
		minKept := int64(1 << 62)
		for v := range out {
			if v != Other {
				own++
				minKept = min(minKept, weights[v])
			}
		}
		if own > limit {
			t.Fatalf("%d values kept their label, limit %d", own, limit)
		}
		var names []string
		for v := range weights {
			names = append(names, v)
		}
		sort.Strings(names)
		for _, v := range names {
			if _, ok := out[v]; !ok && v != Other && weights[v] > minKept {
				t.Fatalf("%q (weight %d) folded while a value of weight %d kept its label", v, weights[v], minKept)
			}
		}
		// The same weights in another map give the same result.
		again := map[string]int64{}
		for i := len(names) - 1; i >= 0; i-- {
			again[names[i]] = weights[names[i]]
		}
		out2 := NewRanked(NewStats(), "m", limit).Fold(again)
		if len(out2) != len(out) {
			t.Fatalf("folding depends on the map: %v and %v", out, out2)
		}
		for k, v := range out {
			if out2[k] != v {
				t.Fatalf("folding depends on the map: %v and %v", out, out2)
			}
		}
	})
}

func foldedTotal(t *testing.T, s *Stats, metric string) float64 {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.folded[metric]
}

// FuzzLimiterOffer: a limiter that has admitted the tuples of an earlier
// reading is offered a second reading, and a twin (same history) the same
// reading in reverse. Whatever the input: both admit the same tuples (the
// choice does not depend on the reading's order), at most limit tuples
// keep their values, and every tuple admitted before still is.
func FuzzLimiterOffer(f *testing.F) {
	f.Add("a\nb", "c\nd\ne\nf\nc", 4)
	f.Add("", "x\ty\nx\nother\nz", 2)
	f.Add("a\nb\nc", "d", 3)
	f.Fuzz(func(t *testing.T, before, reading string, limit int) {
		if limit < 1 || limit > 1000 {
			return
		}
		twins := [2]*Limiter{NewLimiter(NewStats(), "m", limit), NewLimiter(NewStats(), "m", limit)}
		var earlier []string
		for _, v := range values(before) {
			for _, l := range twins {
				if got := l.Admit(v...); got[0] != Other || strings.Join(v, "\xff") == Other {
					earlier = append(earlier, strings.Join(v, "\xff"))
				}
			}
		}
		r := values(reading)
		rev := slices.Clone(r)
		slices.Reverse(rev)
		twins[0].Offer(r...)
		twins[1].Offer(rev...)
		kept := [2]map[string]bool{{}, {}}
		for i, l := range twins {
			for _, v := range append(slices.Clone(r), values(before)...) {
				key := strings.Join(v, "\xff")
				if got := l.Admit(v...); strings.Join(got, "\xff") == key {
					kept[i][key] = true
				}
			}
			if len(l.admitted) > limit {
				t.Fatalf("%d tuples admitted, limit %d", len(l.admitted), limit)
			}
		}
		for _, key := range earlier {
			if _, ok := twins[0].admitted[key]; !ok {
				t.Fatalf("tuple %q admitted before the offer lost its place", key)
			}
		}
		if len(kept[0]) != len(kept[1]) {
			t.Fatalf("the reading's order changed the choice: %v and %v", kept[0], kept[1])
		}
		for k := range kept[0] {
			if !kept[1][k] {
				t.Fatalf("the reading's order changed the choice: %v and %v", kept[0], kept[1])
			}
		}
	})
}
