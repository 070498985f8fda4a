// Package camundatest builds, starts and drives a real Camunda 7 engine (or the Operaton fork) for
// integration tests, with nothing mocked.
//
// The engines are small Spring Boot applications with the engine's REST starter and an in-memory H2
// database (or PostgreSQL, Options.PostgresURL); their Maven projects live in
// test/camunda-engine/<flavor>, their Java sources, shared, in test/camunda-engine/shared. A flavor
// is one release: "camunda" (7.24.0) and "operaton" (1.0.3) are the default ones (AllFlavors);
// "camunda-7.22", "camunda-7.20" and "camunda-7.19" are older Camunda 7 releases
// (OlderCamundaFlavors) that tests select by name in CAMUNDATEST_FLAVORS. "cibseven" (CIB seven
// 2.0.0) is a process engine on PostgreSQL behind a test driver with the same endpoints as far as
// Client and Worker go, not a REST API (Flavor.RESTAPI). Build compiles a flavor's jar once and
// caches it under <repo>/.cache/camunda-engine, keyed by the flavor and a hash of the pom and sources.
// Start runs the jar on a free 127.0.0.1 port and waits for GET /engine-rest/version. Shared gives
// every test of one `go test` process the same engine per flavor, so the JVM start-up (10-20 s on
// two cores) is paid once; call Main from TestMain so shared engines are stopped at exit.
//
// The engines are driven with sim/engineclient (its Client, Worker and BPMN models), the client the
// workload simulator drives any engine with; Engine.Client returns one for a started engine.
//
// Typical use in another package's tests:
//
//	func TestMain(m *testing.M) { camundatest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		for _, flavor := range camundatest.Flavors() {
//			t.Run(string(flavor), func(t *testing.T) {
//				e := camundatest.Shared(t, flavor)
//				c := e.Client()
//				key := camundatest.UniqueName(t.Name())
//				topic := key + ".charge"
//				_, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)})
//				...
//				_, err = c.StartProcess(ctx, key, "order-1", nil)
//				w := engineclient.NewWorker(c, "worker-1")
//				tasks, err := w.FetchAndLock(ctx, topic, time.Minute, 1)
//				err = w.Failure(ctx, tasks[0].ID, 0, 0, "card declined") // retries exhausted, incident
//				// point the code under test at e.BaseURL
//			})
//		}
//	}
//
// Requirements: Java 17 and Maven 3.8+ in PATH, Maven Central (or a warm ~/.m2). Missing tools make
// Build fail with an error naming the tool; Shared skips only under `go test -short`.
//
// Environment:
//
//	CAMUNDATEST_CACHE_DIR   where built jars are cached (default <repo>/.cache/camunda-engine)
//	CAMUNDATEST_MVN_ARGS    extra Maven arguments, e.g. "-o" once ~/.m2 holds everything
//	CAMUNDATEST_FLAVORS     comma-separated flavors for Flavors() (default: AllFlavors, i.e. camunda,operaton)
package camundatest
