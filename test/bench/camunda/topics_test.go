package benchcamunda

// BenchmarkCamundaThousandsOfTopics measures a collection against the number
// of topics, at the defaults a user with that many topics would pick: the
// exporter's defaults (timeout 20s, request_concurrency 4, max_listed_tasks
// 10000) with label_value_limit raised to the number of topics, so every
// topic is reported on its own (with the default of 100 the topics beyond
// the hundredth fold into "other", which has no lapses, redeliveries or
// ages). The engine (setUp: Camunda 7.24 on PostgreSQL, the JVM with -jvm)
// is grown to each of -topic-steps topics in turn (200, 1000, 2000), every
// topic with the same small mix of -topic-tasks open tasks (25: 20 waiting,
// 2 locked, 1 in retry backoff, 1 with a lapsed lock, 1 out of retries;
// every 20th topic's definition suspended with its instance), so the open
// tasks grow with the topics (50,000 at 2,000 topics, the engine of size B
// spread over ten times the topics). At each step both exporter modes are
// measured in rotating rounds (-topic-warmup untimed, -topic-samples timed),
// each collection under the default timeout, and their per-topic counts are
// checked against the engine's tables.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

var (
	topicStepsFlag   = flag.String("topic-steps", "200,1000,2000", "topic counts of the thousands-of-topics benchmark, ascending")
	topicTasksFlag   = flag.Int("topic-tasks", 25, "open tasks per topic in the thousands-of-topics benchmark (at least 10)")
	topicSamplesFlag = flag.Int("topic-samples", 5, "timed collections per mode and step in the thousands-of-topics benchmark")
	topicWarmupFlag  = flag.Int("topic-warmup", 3, "untimed collections per mode and step before the timed ones")
)

// The small per-topic mix: of topicTasks open tasks, these are in flight
// or out of retries; the rest wait.
const (
	manyLocked    = 2
	manyBackoff   = 1
	manyLapsed    = 1
	manyExhausted = 1
)

func manyTopic(i int) string      { return fmt.Sprintf("many.topic-%04d", i) }
func manyProcessKey(i int) string { return fmt.Sprintf("many_%04d", i) }

// manyMix is the state partition of an active topic of the small mix.
func manyMix(tasks int) map[string]int {
	return map[string]int{
		"waiting":           tasks - manyLocked - manyBackoff - manyLapsed - manyExhausted,
		"locked":            manyLocked,
		"retry_backoff":     manyBackoff,
		"lock_expired":      manyLapsed,
		"retries_exhausted": manyExhausted,
	}
}

// addManyTopics deploys topics from..to-1 (a deployment per 100) and drives
// each into the small mix, then waits for the short locks to lapse and
// quiets the history window (quietHistory).
func addManyTopics(ctx context.Context, c *engineclient.Client, from, to, tasks int) error {
	for lo := from; lo < to; lo += 100 {
		hi := min(lo+100, to)
		files := map[string][]byte{}
		for i := lo; i < hi; i++ {
			files[manyProcessKey(i)+".bpmn"] = multiInstanceProcess(manyProcessKey(i), manyTopic(i), tasks)
		}
		if _, err := c.Deploy(ctx, fmt.Sprintf("bench-many-%d-%d", lo, hi), files); err != nil {
			return err
		}
	}
	return driveTopics(ctx, c, from, to, driveManyTopic)
}

// driveManyTopic starts a topic's process and leaves its tasks in the small
// mix; it returns the id of its task in retry backoff.
func driveManyTopic(ctx context.Context, c *engineclient.Client, i int) (string, error) {
	topic := manyTopic(i)
	if _, err := c.StartProcess(ctx, manyProcessKey(i), fmt.Sprintf("many-%04d", i), nil); err != nil {
		return "", err
	}
	w := engineclient.NewWorker(c, "worker-1")
	n := manyLocked + manyBackoff + manyExhausted
	tasks, err := w.FetchAndLock(ctx, topic, longLock, n)
	if err == nil && len(tasks) != n {
		err = fmt.Errorf("%s: fetched %d tasks, want %d", topic, len(tasks), n)
	}
	if err != nil {
		return "", err
	}
	if err := w.Failure(ctx, tasks[0].ID, 2, longLock, "bench: backend unavailable"); err != nil {
		return "", err
	}
	if err := w.Failure(ctx, tasks[1].ID, 0, 0, "bench: request rejected"); err != nil {
		return "", err
	}
	lapse, err := engineclient.NewWorker(c, "worker-lapse").FetchAndLock(ctx, topic, lapseLock, manyLapsed)
	if err == nil && len(lapse) != manyLapsed {
		err = fmt.Errorf("%s: fetched %d tasks to lapse, want %d", topic, len(lapse), manyLapsed)
	}
	if err != nil {
		return "", err
	}
	if suspended(i) {
		return tasks[0].ID, c.SetProcessDefinitionSuspended(ctx, manyProcessKey(i), true, true)
	}
	return tasks[0].ID, nil
}

// topicsConfig is the exporter's config at a step: the defaults, every
// refresh collecting (min_interval 1ms: what one collection costs does not
// depend on it), and label_value_limit raised to the topics.
func topicsConfig(restURL, database string, limit int) string {
	y := fmt.Sprintf("camunda:\n  - name: bench\n    url: %s\n    min_interval: 1ms\n    label_value_limit: %d\n", restURL, limit)
	if database != "" {
		y += fmt.Sprintf("    database:\n      dsn: %q\n      time_zone: UTC\n", database)
	}
	return y
}

// topicStep is one measured number of topics.
type topicStep struct {
	topics  int
	open    int64
	built   time.Duration
	load    [2]string
	results map[string]*measurement
	errs    map[string]int // collections that failed (a timeout, say)
}

// BenchmarkCamundaThousandsOfTopics is the thousands-of-topics run; it
// prints its tables to stdout:
// go test -run '^$' -bench ThousandsOfTopics -benchtime 1x -timeout 90m ./test/bench/camunda
func BenchmarkCamundaThousandsOfTopics(b *testing.B) {
	steps, err := parseSteps(*topicStepsFlag)
	if err != nil || *topicTasksFlag < 10 {
		b.Fatalf("want -topic-steps ascending positive counts and -topic-tasks >= 10: %v", err)
	}
	runStart := time.Now()
	ctx := context.Background()
	e := setUp(b, ctx)
	progress("engine %s up in %s (JVM %s)", e.engine.Version, e.engine.StartupTime.Round(100*time.Millisecond), strings.Join(e.jvmFlags, " "))
	loadBefore := loadAverage()
	limit := steps[len(steps)-1]
	var out []*topicStep
	have := 0
	for _, n := range steps {
		st := &topicStep{topics: n, results: map[string]*measurement{}, errs: map[string]int{}}
		t0 := time.Now()
		if err := addManyTopics(ctx, e.direct, have, n, *topicTasksFlag); err != nil {
			b.Fatalf("building %d topics: %v\n%s", n, err, e.engine.LogTail(4000))
		}
		have = n
		st.built = time.Since(t0)
		pgtest.Exec(b, e.conn, `VACUUM (ANALYZE)`)
		progress("%d topics built in %s", n, st.built.Round(time.Second))
		measureTopics(b, ctx, e, st, limit)
		out = append(out, st)
	}
	reportTopics(os.Stdout, e, out, loadBefore, loadAverage(), time.Since(runStart))
}

func parseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("-topic-steps %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// measureTopics measures both modes at one step and checks their counts.
func measureTopics(b *testing.B, ctx context.Context, e *env, st *topicStep, limit int) {
	truth, err := sqlCounts(ctx, e.conn)
	if err != nil {
		b.Fatal(err)
	}
	if len(truth) != st.topics {
		b.Fatalf("%d topics: the engine holds tasks of %d", st.topics, len(truth))
	}
	for _, g := range truth {
		st.open += g.total
	}
	rest, err := newExporter(restMode, topicsConfig(e.engine.BaseURL, "", limit), false)
	if err != nil {
		b.Fatal(err)
	}
	db, err := newExporter(databaseMode, topicsConfig(e.engine.BaseURL, e.dbURL, limit), false)
	if err != nil {
		b.Fatal(err)
	}
	contenders := []*contender{rest, db}
	defer func() {
		for _, c := range contenders {
			c.close()
		}
	}()
	for _, c := range contenders {
		st.results[c.name] = &measurement{}
	}
	st.load[0] = loadAverage()
	for round := 0; round < *topicWarmupFlag+*topicSamplesFlag; round++ {
		for i := range contenders {
			c := contenders[(i+round)%len(contenders)]
			m := st.results[c.name]
			c.paths()
			before, err := e.meter.sample()
			if err != nil {
				b.Fatal(err)
			}
			self0, t0 := selfCPU(), time.Now()
			// Each collection under the default timeout, as in production.
			cctx, cancel := context.WithTimeout(ctx, config.DefaultCollectTimeout)
			err = c.collect(cctx)
			cancel()
			d, self1 := time.Since(t0), selfCPU()
			after, serr := e.meter.sample()
			paths := c.paths()
			if serr != nil {
				b.Fatal(serr)
			}
			if round < *topicWarmupFlag {
				continue
			}
			if err != nil {
				st.errs[c.name]++
				progress("%d topics, %s: %v", st.topics, c.name, err)
			}
			m.wall = append(m.wall, d)
			m.requests = append(m.requests, requests(paths))
			m.paths = paths
			m.cpu.jvm += after.jvm - before.jvm
			m.cpu.db += after.db - before.db
			m.cpu.self += self1 - self0
		}
	}
	st.load[1] = loadAverage()
	mix := manyMix(*topicTasksFlag)
	for _, c := range contenders {
		got, states, err := c.counts()
		if err != nil {
			b.Fatal(err)
		}
		if bad := compare(truth, got); len(bad) > 0 {
			st.results[c.name].checked = fmt.Sprintf("%d of %d topics differ", len(bad), len(truth))
			b.Errorf("%d topics, %s: counts differ from the engine's tables:\n%s", st.topics, c.name, strings.Join(bad[:min(len(bad), 10)], "\n"))
			continue
		}
		st.results[c.name].checked = fmt.Sprintf("%d/%d topics equal", len(truth), len(truth))
		for topic, s := range states {
			i, _ := strconv.Atoi(strings.TrimPrefix(topic, "many.topic-"))
			want := map[string]int{"suspended": *topicTasksFlag}
			if !suspended(i) {
				want = mix
			}
			for state, v := range s {
				if int(v) != want[state] {
					b.Errorf("%d topics, %s, topic %s: %s = %v, the workload makes %d", st.topics, c.name, topic, state, v, want[state])
				}
			}
		}
	}
	progress("%d topics measured", st.topics)
}

func reportTopics(w io.Writer, e *env, steps []*topicStep, loadBefore, loadAfter string, took time.Duration) {
	fmt.Fprintf(w, "\n## Collection cost versus topics (thousands of topics)\n\n")
	fmt.Fprintf(w, "date %s; commit %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), gitCommit())
	fmt.Fprintf(w, "engine: Camunda %s; JVM flags: %s; database: %s\n", e.engine.Version, strings.Join(e.jvmFlags, " "), e.pgInfo[0])
	fmt.Fprintf(w, "load average (1, 5, 15 min) before: %s; after: %s; run time %s\n", loadBefore, loadAfter, took.Round(time.Second))
	fmt.Fprintf(w, "per topic %d open tasks (%v); every %dth topic suspended; the exporter's defaults (timeout %s, request_concurrency %d, max_listed_tasks %d) with label_value_limit %d; median of %d collections after %d warm-up, each under the default timeout\n\n",
		*topicTasksFlag, manyMix(*topicTasksFlag), suspendEvery, config.DefaultCollectTimeout, config.DefaultRequestConcurrency, config.DefaultMaxListedTasks,
		steps[len(steps)-1].topics, *topicSamplesFlag, *topicWarmupFlag)
	fmt.Fprintln(w, "| topics | open tasks | mode | wall ms (median) | wall ms (max) | per topic ms | requests | engine CPU ms | DB CPU ms | client CPU ms | within the 20s timeout | counts | load before / after |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
	for _, st := range steps {
		for _, name := range []string{restMode, databaseMode} {
			m := st.results[name]
			mx := time.Duration(0)
			for _, d := range m.wall {
				mx = max(mx, d)
			}
			cpu := m.perCollection()
			within := "yes"
			if st.errs[name] > 0 {
				within = fmt.Sprintf("**no**: %d of %d failed", st.errs[name], len(m.wall))
			}
			fmt.Fprintf(w, "| %d | %d | %s | %.1f | %.1f | %.2f | %d | %.1f | %.1f | %.1f | %s | %s | %s / %s |\n", st.topics, st.open, name,
				ms(m.medianWall()), ms(mx), ms(m.medianWall())/float64(st.topics), m.medianRequests(),
				ms(cpu.jvm), ms(cpu.db), ms(cpu.self), within, m.checked, st.load[0], st.load[1])
		}
	}
	if len(steps) > 1 {
		fmt.Fprintf(w, "\nGrowth from %d to %d topics (the open tasks grow alike):\n\n", steps[0].topics, steps[len(steps)-1].topics)
		fmt.Fprintln(w, "| mode | topics | wall | requests | engine+DB CPU | wall ms per added topic |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
		a, z := steps[0], steps[len(steps)-1]
		for _, name := range []string{restMode, databaseMode} {
			ma, mz := a.results[name], z.results[name]
			ca, cz := ma.perCollection(), mz.perCollection()
			fmt.Fprintf(w, "| %s | %.1fx | %.2fx | %.2fx | %.2fx | %.2f |\n", name, float64(z.topics)/float64(a.topics),
				ms(mz.medianWall())/ms(ma.medianWall()), float64(mz.medianRequests())/float64(ma.medianRequests()),
				ms(cz.jvm+cz.db)/ms(ca.jvm+ca.db), (ms(mz.medianWall())-ms(ma.medianWall()))/float64(z.topics-a.topics))
		}
	}
	fmt.Fprintln(w)
}
