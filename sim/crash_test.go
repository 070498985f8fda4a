package sim

import (
	"testing"
	"time"
)

// A crashed worker restarts under an id no unreplayed crash was under, so
// every replay is by another id than its lapsed lock's; the ids stay few.
func TestRestartIDNeverOneOfAnUnreplayedCrash(t *testing.T) {
	s := &Simulator{cfg: Config{LockDuration: 20 * time.Second}, crashed: map[string]crash{}}
	w := &worker{s: s, id: "w", base: "w"}
	crash := func(task, want string) {
		t.Helper()
		id, ok := s.crashOnce(w, task)
		if !ok || id != want {
			t.Fatalf("crash on %s under %s: restart as %q (crashed %v), want %q", task, w.id, id, ok, want)
		}
		w.restart(id)
	}
	crash("t1", "wr1")
	crash("t2", "wr2") // t1's lock is under w, t2's under wr1
	s.replayed("t1")
	crash("t3", "w") // w is free again
	if _, ok := s.crashOnce(w, "t3"); ok {
		t.Fatal("t3 crashed twice")
	}
	crash("t4", "wr3") // under w now; t2 (wr1) and t3 (wr2) still wait for their replays
}
