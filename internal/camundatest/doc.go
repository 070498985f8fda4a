// Package camundatest builds, starts and drives a real Camunda 7 engine (or the Operaton fork) for
// integration tests, with nothing mocked.
//
// The engines are small Spring Boot applications with the engine's REST starter and an in-memory H2
// database; their Maven projects live in test/camunda-engine/<flavor>. Build compiles a flavor's jar
// once and caches it under <repo>/.cache/camunda-engine, keyed by a hash of the pom and sources.
// Start runs the jar on a free 127.0.0.1 port and waits for GET /engine-rest/version. Shared gives
// every test of one `go test` process the same engine per flavor, so the JVM start-up (10-20 s on
// two cores) is paid once; call Main from TestMain so shared engines are stopped at exit.
//
// The REST helpers (Client, Worker, ExternalTaskProcess) use net/http only. Errors name the endpoint
// and HTTP status and carry the response body.
//
// Requirements: Java 17 and Maven 3.8+ in PATH, Maven Central (or a warm ~/.m2). Missing tools make
// Build fail with an error naming the tool; Shared skips only under `go test -short`.
//
// Environment:
//
//	CAMUNDATEST_CACHE_DIR   where built jars are cached (default <repo>/.cache/camunda-engine)
//	CAMUNDATEST_MVN_ARGS    extra Maven arguments, e.g. "-o" once ~/.m2 holds everything
//	CAMUNDATEST_FLAVORS     comma-separated flavors for Flavors() (default: all)
package camundatest
