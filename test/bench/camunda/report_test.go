package benchcamunda

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"
)

// longClient is the HTTP client of the workload and the baseline: long
// enough for a slow page, enough idle connections for the workload's
// concurrency.
func longClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute,
		Transport: &http.Transport{MaxIdleConns: 16, MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute}}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func report(e *env, sizes []*size, ipc []ipcRow, loadBefore, loadAfter string, total time.Duration) {
	w := os.Stdout
	fmt.Fprintf(w, "\n## Camunda collection cost versus engine size and history\n\n")
	fmt.Fprintf(w, "date %s; commit %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), gitCommit())
	fmt.Fprintf(w, "machine: %d CPUs (%s), %s RAM, Linux %s, %s/%s, %s\n", runtime.NumCPU(), cpuModel(), memTotal(),
		readTrim("/proc/sys/kernel/osrelease"), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "engine: Camunda %s (test/harness/camundatest, Spring Boot, history level full, on PostgreSQL, JVM time zone UTC); %s; JVM flags: %s\n",
		e.engine.Version, javaVersion(), strings.Join(e.jvmFlags, " "))
	fmt.Fprintf(w, "database: %s\nserver settings: %s (test/harness/pgtest)\n", e.pgInfo[0], e.pgInfo[1])
	fmt.Fprintf(w, "load average (1, 5, 15 min) before the first size: %s; after the last: %s\n", loadBefore, loadAfter)
	fmt.Fprintf(w, "run time: %s in all (engine start %s); per contender and size: the median wall time of %d timed collections, CPU their sum / %d; before them at least %d untimed rounds, more (at most %d) while the engine's JIT compiler took over %.0f%% of its CPU in a round\n\n",
		total.Round(time.Second), e.engine.StartupTime.Round(time.Second), *samplesFlag, *samplesFlag, *warmupFlag, *maxWarmupFlag, jitSettled*100)

	tableHead(w, "Workload (the same per-topic mix at every size):",
		"| size | topics | open tasks | suspended topics | history rows | act_hi_ext_task_log MB | open incidents | built in |",
		"|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range sizes {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %.0f | %d | %s |\n", s.name, s.topics, s.open, s.topics/suspendEvery,
			s.history, s.historyMB, s.incidents, s.built.Round(100*time.Millisecond))
	}
	fmt.Fprintln(w)
	states := []string{"waiting", "locked", "retry_backoff", "lock_expired", "retries_exhausted", "suspended"}
	tableHead(w, "camunda_external_tasks of the REST mode's last collection, summed over topics:",
		"| size | "+strings.Join(states, " | ")+" | sum |", "|---|"+strings.Repeat("---:|", len(states))+"---:|")
	for _, s := range sizes {
		var sum float64
		fmt.Fprintf(w, "| %s |", s.name)
		for _, st := range states {
			fmt.Fprintf(w, " %.0f |", s.states[st])
			sum += s.states[st]
		}
		fmt.Fprintf(w, " %.0f |\n", sum)
	}
	fmt.Fprintln(w)

	tableHead(w, "Per collection (engine CPU: the engine's JVM; DB CPU: the PostgreSQL server, all its processes; client CPU: the Go process, i.e. the exporter's collector or the baseline's client (the list-everything baseline's also the counting proxy's; the exporters talk to the engine directly); x: the list-everything baseline's figure divided by this one, wall time and engine+DB CPU):",
		"| size | contender | wall ms (median) | wall ms (min-max) | HTTP requests | engine CPU ms | of which JIT / GC | DB CPU ms | engine+DB CPU ms | client CPU ms | wall x | CPU x | counts vs engine tables |",
		"|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, s := range sizes {
		base := s.results[listAll]
		bw, bc := ms(base.medianWall()), ms(base.perCollection().jvm+base.perCollection().db)
		for _, name := range []string{restMode, databaseMode, databaseStatus, listAll, physical, fairFloor} {
			m := s.results[name]
			if m == nil {
				continue
			}
			cpu := m.perCollection()
			lo, hi := minMax(m.wall)
			fmt.Fprintf(w, "| %s | %s | %.1f | %.1f-%.1f | %d | %.1f | %.0f / %.0f | %.1f | %.1f | %.1f | %s | %s | %s |\n", s.name, name, ms(m.medianWall()),
				ms(lo), ms(hi), m.medianRequests(), ms(cpu.jvm), ms(cpu.jit), ms(cpu.gc), ms(cpu.db), ms(cpu.jvm+cpu.db), ms(cpu.self),
				ratio(bw, ms(m.medianWall())), ratio(bc, ms(cpu.jvm+cpu.db)), m.checked)
		}
	}
	fmt.Fprintln(w)
	tableHead(w, "Warm-up rounds, machine load while measuring each size, and the engine's and server's idle consumption over 5 s before (background in the CPU columns):",
		"| size | warm-up rounds | load average before | load average after | idle engine CPU ms/s | idle DB CPU ms/s |",
		"|---|---:|---|---|---:|---:|")
	for _, s := range sizes {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %.1f | %.1f |\n", s.name, s.warmups, s.load[0], s.load[1], ms(s.idle.jvm), ms(s.idle.db))
	}
	fmt.Fprintln(w)

	by := map[string]*size{}
	for _, s := range sizes {
		by[s.name] = s
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if by[n] == nil {
				return false
			}
		}
		return true
	}
	growth := func(title, from string, to ...string) {
		var present []string
		for _, t := range to {
			if has(t) {
				present = append(present, t)
			}
		}
		if !has(from) || len(present) == 0 {
			return // -sizes left a size out
		}
		to = present
		head, line := "| contender |", "|---|"
		for _, t := range to {
			head += fmt.Sprintf(" wall %s/%s | CPU %s/%s | requests %s/%s |", t, from, t, from, t, from)
			line += "---:|---:|---:|"
		}
		tableHead(w, title, head, line)
		for _, name := range []string{restMode, databaseMode, listAll, physical} {
			a := by[from].results[name]
			fmt.Fprintf(w, "| %s |", name)
			for _, t := range to {
				z := by[t].results[name]
				ca, cz := a.perCollection(), z.perCollection()
				fmt.Fprintf(w, " %s | %s | %s |", ratio(ms(z.medianWall()), ms(a.medianWall())),
					ratio(ms(cz.jvm+cz.db), ms(ca.jvm+ca.db)), ratio(float64(z.medianRequests()), float64(a.medianRequests())))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	growth(fmt.Sprintf("Growth with the engine, A to B (%dx the topics and open tasks):", *topicsFlag / *smallFlag), "A", "B")
	if has("B", "C") {
		growth(fmt.Sprintf("Growth with the history, B to C (history %d to %d rows, the same open tasks), without and with the index on timestamp_; \"B again\" is B measured once more at the end (drift):",
			by["B"].history, by["C"].history), "B", "C", "C+index", "B again")
	}

	var paths []string
	seen := map[string]bool{}
	for _, s := range sizes {
		for p := range s.results[restMode].paths {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	head := "| path |"
	for _, s := range sizes {
		head += " " + s.name + " |"
	}
	tableHead(w, "REST mode's requests per path (the last timed collection):", head, "|---|"+strings.Repeat("---:|", len(sizes)))
	for _, p := range paths {
		fmt.Fprintf(w, "| `%s` |", p)
		for _, s := range sizes {
			fmt.Fprintf(w, " %d |", s.results[restMode].paths[p])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)

	reportFloor(w, sizes)
	if len(ipc) > 0 {
		reportItemsPerCount(w, ipc)
	}
	reportTargets(w, sizes, by)
}

// reportFloor prints engine-database mode against the physical limit (one
// GROUP BY over the runtime table) and the fair floor (the same and the
// in-flight list lock tracking reads), per size: the median of the
// per-round ratios (the contenders of a round ran back to back) with their
// extremes, wall time and database CPU.
func reportFloor(w io.Writer, sizes []*size) {
	tableHead(w, "Engine-database mode against the physical limit and the fair floor (median of the per-round ratios of wall time, min-max; database CPU per collection):",
		"| size | engine-database mode ms | physical limit ms | fair floor ms | mode / physical limit | mode / fair floor | fair floor / physical limit | mode DB CPU ms | physical limit DB CPU ms | fair floor DB CPU ms |",
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	ratios := func(a, b *measurement) string {
		med, lo, hi := roundRatios(a, b)
		return fmt.Sprintf("%.2fx (%.2f-%.2f)", med, lo, hi)
	}
	for _, s := range sizes {
		for _, mode := range []string{databaseMode, databaseStatus} {
			db, pl, ff := s.results[mode], s.results[physical], s.results[fairFloor]
			if db == nil || pl == nil || ff == nil {
				continue
			}
			name := s.name
			if mode == databaseStatus {
				name += ", status page on"
			}
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f | %s | %s | %s | %.1f | %.1f | %.1f |\n", name, ms(db.medianWall()), ms(pl.medianWall()), ms(ff.medianWall()),
				ratios(db, pl), ratios(db, ff), ratios(ff, pl), ms(db.perCollection().db), ms(pl.perCollection().db), ms(ff.perCollection().db))
		}
	}
	fmt.Fprintln(w)
}

// roundRatios are the ratios a/b of the wall times of the same rounds
// (the contenders of a round ran back to back): median, min and max.
func roundRatios(a, b *measurement) (med, lo, hi float64) {
	var rs []float64
	for i := range min(len(a.wall), len(b.wall)) {
		rs = append(rs, float64(a.wall[i])/float64(b.wall[i]))
	}
	if len(rs) == 0 {
		return 0, 0, 0
	}
	sort.Float64s(rs)
	return rs[len(rs)/2], rs[0], rs[len(rs)-1]
}

// reportItemsPerCount prints the items-per-count measurement.
func reportItemsPerCount(w io.Writer, ipc []ipcRow) {
	tableHead(w, fmt.Sprintf("Items per count request (size B, straight to the engine, one request at a time; %d rounds of one count per topic and 10 pages per list shape, after one untimed round). items per count = 1000 x count's cost / (page's cost - count's cost): listing that many tasks costs as much as one count; the collector assumes 50 (engine.ItemsPerCountRequest):", *ipcFlag),
		"| request | n | wall ms | engine CPU ms | DB CPU ms | engine+DB CPU ms | items per count (CPU) | items per count (wall) |",
		"|---|---:|---:|---:|---:|---:|---:|---:|")
	count := ipc[0]
	cc, cw := ms(count.cpu.jvm+count.cpu.db), ms(count.wall)
	for _, r := range ipc {
		c := ms(r.cpu.jvm + r.cpu.db)
		perCPU, perWall := "", ""
		if r.items > 0 {
			perCPU, perWall = itemsPerCount(r.items, cc, c), itemsPerCount(r.items, cw, ms(r.wall))
		}
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", r.shape, r.n, ms(r.wall), ms(r.cpu.jvm), ms(r.cpu.db), c, perCPU, perWall)
	}
	fmt.Fprintln(w)
}

// reportTargets prints the targets of the issues that asked for this
// benchmark, for the sizes measured.
func reportTargets(w io.Writer, sizes []*size, by map[string]*size) {
	tableHead(w, "Targets of the issue:",
		"| target | measured | |",
		"|---|---:|---|")
	for _, b := range []string{"B", "B again"} {
		if by[b] == nil {
			continue
		}
		rb := by[b].results[restMode]
		bCPU := rb.perCollection().jvm + rb.perCollection().db
		fmt.Fprintf(w, "| %s, REST mode: collection <= 1.5 s | %.0f ms | %s |\n", b, ms(rb.medianWall()), verdict(rb.medianWall() <= 1500*time.Millisecond))
		fmt.Fprintf(w, "| %s, REST mode: collection <= 0.5 s (200 topics, 50k tasks) | %.0f ms | %s |\n", b, ms(rb.medianWall()), verdict(rb.medianWall() <= 500*time.Millisecond))
		fmt.Fprintf(w, "| %s, REST mode: engine+DB CPU <= 1 s per collection | %.0f ms | %s |\n", b, ms(bCPU), verdict(bCPU <= time.Second))
	}
	for _, b := range []string{"B", "B again"} {
		for _, c := range []string{"C", "C+index"} {
			if by[b] == nil || by[c] == nil {
				continue
			}
			r := float64(by[c].results[restMode].medianWall()) / float64(by[b].results[restMode].medianWall())
			fmt.Fprintf(w, "| %s/%s, REST mode: collection time <= 1.5x | %.2fx | %s |\n", c, b, r, verdict(r <= 1.5))
		}
	}
	for _, s := range sizes {
		d := s.results[databaseMode].medianWall()
		fmt.Fprintf(w, "| %s, engine-database mode: <= 100 ms per collection | %.1f ms | %s |\n", s.name, ms(d), verdict(d <= 100*time.Millisecond))
	}
	for _, s := range sizes {
		for _, mode := range []string{databaseMode, databaseStatus} {
			if s.results[physical] == nil || s.results[mode] == nil {
				continue
			}
			r, _, _ := roundRatios(s.results[mode], s.results[physical])
			what := "engine-database mode"
			if mode == databaseStatus {
				what += " with the status page on (the default)"
			}
			fmt.Fprintf(w, "| %s, %s: within 3x of one GROUP BY topic_name_ (median of the per-round ratios) | %.2fx | %s |\n", s.name, what, r, verdict(r <= 3))
		}
	}
	for _, b := range []string{"B", "B again"} {
		if by[b] == nil {
			continue
		}
		dbB := by[b].results[databaseMode].medianWall()
		for _, name := range []string{"C", "C+index"} {
			if by[name] == nil {
				continue
			}
			r := float64(by[name].results[databaseMode].medianWall()) / float64(dbB)
			fmt.Fprintf(w, "| %s/%s, engine-database mode: flat in history size (taken as within 1.2x) | %.2fx | %s |\n", name, b, r, verdict(r <= 1.2))
		}
	}
	fmt.Fprintln(w)
	for _, s := range sizes {
		for _, n := range s.notes {
			fmt.Fprintf(w, "note, size %s: %s\n", s.name, n)
		}
	}
	fmt.Fprintln(w)
}

// tableHead writes the start of a table of the report: its caption, a blank
// line, the header row and the row of alignments under it.
func tableHead(w io.Writer, caption, header, rule string) {
	fmt.Fprintln(w, caption)
	fmt.Fprintln(w)
	fmt.Fprintln(w, header)
	fmt.Fprintln(w, rule)
}

func itemsPerCount(items int, count, page float64) string {
	if page <= count {
		return "n/a (page no dearer than a count)"
	}
	return fmt.Sprintf("%.0f", float64(items)*count/(page-count))
}

func minMax(ds []time.Duration) (time.Duration, time.Duration) {
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func cpuModel() string {
	for _, l := range strings.Split(readTrim("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown model"
}

func memTotal() string {
	for _, l := range strings.Split(readTrim("/proc/meminfo"), "\n") {
		if strings.HasPrefix(l, "MemTotal:") {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:")), "%f", &kb); err != nil {
				return "unknown"
			}
			return fmt.Sprintf("%.1f GiB", kb/(1<<20))
		}
	}
	return "unknown"
}

func javaVersion() string {
	out, err := exec.Command("java", "-version").CombinedOutput()
	if err != nil {
		return "java (version unknown)"
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "Runtime Environment") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(strings.Split(string(out), "\n")[0])
}

func gitCommit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// loadAverage reads /proc/loadavg: other work on the machine shows in the
// timings, so the report says how busy it was.
func loadAverage() string {
	f := strings.Fields(readTrim("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
