package io.workflowexporter.testengine.cibseven;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.cibseven.bpm.engine.AuthorizationException;
import org.cibseven.bpm.engine.BadUserRequestException;
import org.cibseven.bpm.engine.ParseException;
import org.cibseven.bpm.engine.ProcessEngine;
import org.cibseven.bpm.engine.ProcessEngineConfiguration;
import org.cibseven.bpm.engine.ProcessEngineException;
import org.cibseven.bpm.engine.exception.NotFoundException;
import org.cibseven.bpm.engine.impl.cfg.StandaloneProcessEngineConfiguration;
import org.cibseven.bpm.engine.impl.util.ClockUtil;
import org.cibseven.bpm.engine.impl.util.ProductPropertiesUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real CIB seven process engine on PostgreSQL, plus an HTTP <b>test driver</b> on 127.0.0.1.
 *
 * <p>The driver is not CIB seven's REST API (whose artifacts Maven Central does not serve here) and
 * not something the exporter reads: the exporter reads this engine only through its database. The
 * driver exists so that the Go harness's Client and Worker (test/harness/camundatest) can put work
 * into the engine unchanged: it answers the few endpoints they call, under /engine-rest, with the
 * request and response JSON of the Camunda 7 REST API, each backed by the engine's Java API
 * (RepositoryService, RuntimeService, ExternalTaskService, HistoryService). Everything else is 404.
 *
 * <p>Arguments (all --name=value):
 * <ul>
 *   <li>--port (required), --address (default 127.0.0.1)
 *   <li>--jdbc-url (required, jdbc:postgresql://host:port/db), --jdbc-username, --jdbc-password
 *   <li>--history-level (none, activity, audit, full; default full)
 *   <li>--job-executor (true or false; default true)
 *   <li>--clock-offset-ms (shifts the engine's clock, ClockUtil; default 0)
 * </ul>
 * The engine creates or updates its schema (databaseSchemaUpdate true).
 */
public final class TestDriver {

  static final Logger LOG = LoggerFactory.getLogger(TestDriver.class);

  static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();

  private final ProcessEngine engine;
  private final Routes routes;

  TestDriver(ProcessEngine engine) {
    this.engine = engine;
    this.routes = new Routes(engine);
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = parseArgs(argv);
    String jdbcUrl = required(args, "jdbc-url");
    int port = Integer.parseInt(required(args, "port"));
    String address = args.getOrDefault("address", "127.0.0.1");
    String historyLevel = args.getOrDefault("history-level", ProcessEngineConfiguration.HISTORY_FULL);
    boolean jobExecutor = Boolean.parseBoolean(args.getOrDefault("job-executor", "true"));
    long clockOffset = Long.parseLong(args.getOrDefault("clock-offset-ms", "0"));

    StandaloneProcessEngineConfiguration cfg = new StandaloneProcessEngineConfiguration();
    cfg.setProcessEngineName("default");
    cfg.setJdbcUrl(jdbcUrl);
    cfg.setJdbcDriver("org.postgresql.Driver");
    cfg.setJdbcUsername(args.getOrDefault("jdbc-username", ""));
    cfg.setJdbcPassword(args.getOrDefault("jdbc-password", ""));
    cfg.setDatabaseSchemaUpdate(ProcessEngineConfiguration.DB_SCHEMA_UPDATE_TRUE);
    cfg.setHistory(historyLevel);
    cfg.setJobExecutorActivate(jobExecutor);
    ProcessEngine engine = cfg.buildProcessEngine();
    if (clockOffset != 0) {
      ClockUtil.offset(clockOffset);
    }

    HttpServer server = HttpServer.create(new InetSocketAddress(address, port), 64);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    server.setExecutor(pool);
    TestDriver driver = new TestDriver(engine);
    server.createContext("/", driver::handle);
    server.start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.stop(0);
      pool.shutdownNow();
      engine.close();
    }));
    LOG.info("CIB seven {} engine '{}' (ProcessEngine.VERSION {}), history level {}, job executor {}, on {}; test driver at http://{}:{}/engine-rest",
        ProductPropertiesUtil.getProductVersion(), engine.getName(), ProcessEngine.VERSION,
        historyLevel, jobExecutor, jdbcUrl, address, server.getAddress().getPort());
  }

  static Map<String, String> parseArgs(String[] argv) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String a : argv) {
      if (!a.startsWith("--") || !a.contains("=")) {
        throw new IllegalArgumentException("argument " + a + ": want --name=value");
      }
      String name = a.substring(2, a.indexOf('='));
      if (!List.of("port", "address", "jdbc-url", "jdbc-username", "jdbc-password", "history-level",
          "job-executor", "clock-offset-ms").contains(name)) {
        throw new IllegalArgumentException("unknown argument --" + name);
      }
      out.put(name, a.substring(a.indexOf('=') + 1));
    }
    return out;
  }

  static String required(Map<String, String> args, String name) {
    String v = args.get(name);
    if (v == null || v.isEmpty()) {
      throw new IllegalArgumentException("--" + name + " is required");
    }
    return v;
  }

  /** One request: route it, answer JSON (or text), map engine exceptions as the REST API does. */
  void handle(HttpExchange ex) throws IOException {
    try {
      String path = ex.getRequestURI().getRawPath();
      // The exporter reads a CIB seven engine from its database: it must
      // never take this driver for the engine's REST API. Its client
      // names itself, so a test that points it here fails loudly.
      String agent = ex.getRequestHeaders().getFirst("User-Agent");
      if (agent != null && agent.startsWith("workflow-exporter/")) {
        throw new Routes.HttpError(403, "TestDriverException",
            "this is the CIB seven test driver, not a REST API for the exporter: read the engine from its database (camunda[].database without url)");
      }
      if (!path.startsWith(Routes.ROOT + "/")) {
        throw new Routes.HttpError(404, "NotFound", "the test driver answers under " + Routes.ROOT + " only");
      }
      List<String> segs = new ArrayList<>();
      for (String s : path.substring(Routes.ROOT.length() + 1).split("/")) {
        if (!s.isEmpty()) {
          segs.add(URLDecoder.decode(s, StandardCharsets.UTF_8));
        }
      }
      // /engine/{name}/... is the same engine, as in the REST API.
      if (segs.size() >= 2 && segs.get(0).equals("engine")) {
        if (!segs.get(1).equals(engine.getName())) {
          throw new Routes.HttpError(404, "RestException", "No process engine available");
        }
        segs = segs.subList(2, segs.size());
      }
      Request req = new Request(ex, segs);
      Routes.Reply reply = routes.route(req);
      send(ex, reply.status, reply.contentType, reply.body);
    } catch (Routes.HttpError e) {
      sendError(ex, e.status, e.type, e.getMessage(), 0);
    } catch (NotFoundException e) {
      sendError(ex, 404, e.getClass().getSimpleName(), e.getMessage(), e.getCode());
    } catch (AuthorizationException e) {
      sendError(ex, 403, e.getClass().getSimpleName(), e.getMessage(), e.getCode());
    } catch (BadUserRequestException | ParseException e) {
      sendError(ex, 400, e.getClass().getSimpleName(), e.getMessage(), e.getCode());
    } catch (ProcessEngineException e) {
      sendError(ex, 500, e.getClass().getSimpleName(), e.getMessage(), e.getCode());
    } catch (RuntimeException e) {
      LOG.warn("{} {}: {}", ex.getRequestMethod(), ex.getRequestURI(), e.toString());
      sendError(ex, 500, e.getClass().getSimpleName(), String.valueOf(e.getMessage()), 0);
    } finally {
      ex.close();
    }
  }

  private static void sendError(HttpExchange ex, int status, String type, String message, int code) throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("type", type);
    body.put("message", message);
    body.put("code", code);
    send(ex, status, "application/json", GSON.toJson(body).getBytes(StandardCharsets.UTF_8));
  }

  private static void send(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
    if (body == null) {
      ex.sendResponseHeaders(status, -1);
      return;
    }
    ex.getResponseHeaders().set("Content-Type", contentType);
    ex.sendResponseHeaders(status, body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  /** A request as the routes see it: method, path segments below /engine-rest, query, body. */
  static final class Request {
    final HttpExchange ex;
    final String method;
    final List<String> segs;
    final Map<String, String> query = new LinkedHashMap<>();
    private byte[] body;

    Request(HttpExchange ex, List<String> segs) {
      this.ex = ex;
      this.method = ex.getRequestMethod();
      this.segs = segs;
      String raw = ex.getRequestURI().getRawQuery();
      if (raw != null) {
        for (String kv : raw.split("&")) {
          if (kv.isEmpty()) {
            continue;
          }
          int i = kv.indexOf('=');
          String k = URLDecoder.decode(i < 0 ? kv : kv.substring(0, i), StandardCharsets.UTF_8);
          String v = i < 0 ? "" : URLDecoder.decode(kv.substring(i + 1), StandardCharsets.UTF_8);
          query.put(k, v);
        }
      }
    }

    boolean is(String method, String... pattern) {
      if (!this.method.equals(method) || segs.size() != pattern.length) {
        return false;
      }
      for (int i = 0; i < pattern.length; i++) {
        if (!pattern[i].equals("*") && !pattern[i].equals(segs.get(i))) {
          return false;
        }
      }
      return true;
    }

    String seg(int i) {
      return segs.get(i);
    }

    byte[] body() throws IOException {
      if (body == null) {
        try (InputStream in = ex.getRequestBody()) {
          body = in.readAllBytes();
        }
      }
      return body;
    }

    /** The JSON body as an object; an empty body is an empty object. */
    JsonObject json() throws IOException {
      byte[] b = body();
      if (b.length == 0) {
        return new JsonObject();
      }
      try {
        JsonElement e = JsonParser.parseString(new String(b, StandardCharsets.UTF_8));
        if (!e.isJsonObject()) {
          throw new Routes.HttpError(400, "InvalidRequestException", "the body must be a JSON object");
        }
        return e.getAsJsonObject();
      } catch (com.google.gson.JsonParseException e) {
        throw new Routes.HttpError(400, "InvalidRequestException", "invalid JSON: " + e.getMessage());
      }
    }

    String header(String name) {
      return ex.getRequestHeaders().getFirst(name);
    }

    @Override
    public String toString() {
      return method + " /" + String.join("/", segs) + " " + query;
    }
  }
}
