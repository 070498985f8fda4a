package io.workflowexporter.relay;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;

/**
 * A change-data-capture outbox relay for tests: Debezium's embedded engine with the PostgreSQL
 * connector (pgoutput) reads a logical replication slot and "publishes" each outbox event by
 * printing one JSON line to stdout, then marks it processed so that Debezium commits its offset
 * (to a file) and confirms the LSN to the slot. Logs go to stderr. See test/relays/README.md.
 *
 * <p>Settings are {@code --name=value} arguments, each with an environment variable
 * {@code RELAY_NAME} (upper case, dashes as underscores) as fallback; the password only from
 * RELAY_PASSWORD or PGPASSWORD. {@code --debezium.KEY=VALUE} passes any Debezium property.
 *
 * <p>SIGTERM (or SIGINT) stops the engine: it commits the offsets of what was printed, confirms
 * the LSN to the slot, closes the replication connection, and the process exits 0. An engine
 * that fails on its own makes the process exit 1.
 */
public final class DebeziumRelay {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Where the JSON lines go; flushed before a record is marked processed. */
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

    private DebeziumRelay() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = parseArgs(argv);
        String slot = required(args, "slot");
        String database = required(args, "database");
        String tables = setting(args, "tables", "public.event_outbox");
        boolean router = Boolean.parseBoolean(setting(args, "router", "true"));

        String offsetDirSetting = setting(args, "offset-dir", null);
        Path offsetDir = offsetDirSetting != null ? Path.of(offsetDirSetting) : Files.createTempDirectory("debezium-relay-");
        boolean removeOffsetDir = offsetDirSetting == null;
        Files.createDirectories(offsetDir);

        Properties p = new Properties();
        p.setProperty("name", setting(args, "name", "outbox-relay"));
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("topic.prefix", setting(args, "topic-prefix", "relay"));
        p.setProperty("database.hostname", setting(args, "host", "127.0.0.1"));
        p.setProperty("database.port", setting(args, "port", "5432"));
        p.setProperty("database.user", setting(args, "user", "postgres"));
        p.setProperty("database.password", firstNonNull(System.getenv("RELAY_PASSWORD"), System.getenv("PGPASSWORD"), ""));
        p.setProperty("database.dbname", database);
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", slot);
        p.setProperty("publication.name", setting(args, "publication", "dbz_publication"));
        // Create the publication for the included tables only when it does not exist (the default,
        // all_tables, needs a superuser for FOR ALL TABLES).
        p.setProperty("publication.autocreate.mode", "filtered");
        p.setProperty("table.include.list", tables);
        // The outbox's rows are inserted and deleted in one transaction: there is nothing to snapshot.
        p.setProperty("snapshot.mode", "no_data");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        p.setProperty("offset.storage.file.filename", offsetDir.resolve("offsets.dat").toString());
        p.setProperty("offset.flush.interval.ms", setting(args, "offset-flush-ms", "60000"));
        p.setProperty("heartbeat.interval.ms", setting(args, "heartbeat-ms", "0"));
        p.setProperty("status.update.interval.ms", setting(args, "status-ms", "10000"));
        if (router) {
            p.setProperty("transforms", "outbox");
            p.setProperty("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
            // The type and the aggregate type travel as headers, next to the event id the SMT puts there.
            p.setProperty("transforms.outbox.table.fields.additional.placement", "type:header:type,aggregatetype:header:aggregatetype");
        }
        for (Map.Entry<String, String> e : args.entrySet()) {
            if (e.getKey().startsWith("debezium.")) {
                p.setProperty(e.getKey().substring("debezium.".length()), e.getValue());
            }
        }
        log("starting: slot=" + slot + " database=" + database + " tables=" + tables + " router=" + router
                + " offset.flush.interval.ms=" + p.getProperty("offset.flush.interval.ms")
                + " heartbeat.interval.ms=" + p.getProperty("heartbeat.interval.ms")
                + " offsets=" + offsetDir);

        AtomicReference<String> failure = new AtomicReference<>();
        AtomicBoolean stopping = new AtomicBoolean();
        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(p)
                .using((success, message, error) -> {
                    if (!success) {
                        failure.set(message + (error != null ? ": " + error : ""));
                    }
                    log("engine stopped: success=" + success + " " + message + (error != null ? " (" + error + ")" : ""));
                })
                .notifying(DebeziumRelay::handleBatch)
                .build();

        CountDownLatch closed = new CountDownLatch(1);
        sun.misc.SignalHandler stop = sig -> {
            if (!stopping.compareAndSet(false, true)) {
                return;
            }
            log("SIG" + sig.getName() + ": stopping");
            Thread t = new Thread(() -> {
                try {
                    // The engine refuses to stop while it starts its tasks: try again until it can.
                    for (int attempt = 0;; attempt++) {
                        try {
                            engine.close();
                            break;
                        }
                        catch (IllegalStateException e) {
                            // Stopping or stopped already (it failed on its own): nothing to do.
                            if (attempt >= 300 || e.getMessage() == null || !e.getMessage().contains("tasks are starting")) {
                                throw e;
                            }
                            Thread.sleep(200);
                        }
                    }
                }
                catch (IOException | RuntimeException | InterruptedException e) {
                    log("closing the engine: " + e);
                }
                finally {
                    closed.countDown();
                }
            }, "relay-stop");
            t.start();
        };
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), stop);
        sun.misc.Signal.handle(new sun.misc.Signal("INT"), stop);

        engine.run(); // returns when the engine has stopped, by close() or by a failure
        if (stopping.get()) {
            closed.await();
        }
        OUT.flush();
        if (removeOffsetDir) {
            deleteTree(offsetDir);
        }
        if (failure.get() != null && !stopping.get()) {
            log("failed: " + failure.get());
            System.exit(1);
        }
        log("stopped");
        System.exit(0);
    }

    /** Prints each record of the batch, flushes stdout, then marks the records processed. */
    private static void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
                                    DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException {
        for (RecordChangeEvent<SourceRecord> r : records) {
            String line = toJson(r.record());
            if (line != null) {
                OUT.println(line);
            }
        }
        OUT.flush();
        for (RecordChangeEvent<SourceRecord> r : records) {
            committer.markProcessed(r);
        }
        committer.markBatchFinished();
    }

    /** The JSON line of a record: an outbox event, a change event (router off) or a heartbeat. */
    static String toJson(SourceRecord r) {
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, ?> offset = r.sourceOffset();
        Object value = r.value();
        if (r.topic().startsWith("__debezium-heartbeat")) {
            m.put("kind", "heartbeat");
        }
        else if (value instanceof Struct s && s.schema().field("op") != null) {
            // A plain change event (router off): the operation and the row's id.
            m.put("kind", "change");
            m.put("op", s.getString("op"));
            Struct row = s.getStruct("d".equals(s.getString("op")) ? "before" : "after");
            if (row != null && row.schema().field("id") != null) {
                m.put("id", String.valueOf(row.get("id")));
            }
            m.put("table", r.topic());
        }
        else {
            m.put("kind", "event");
            m.put("id", headerString(r, "id"));
            m.put("aggregatetype", headerString(r, "aggregatetype"));
            m.put("aggregateid", r.key() == null ? null : String.valueOf(r.key()));
            m.put("type", headerString(r, "type"));
            m.put("topic", r.topic());
            Object payload = value instanceof Struct s && s.schema().field("payload") != null ? s.get("payload") : value;
            m.put("payload", payloadJson(payload));
        }
        m.put("lsn", lsnText(offset.get("lsn")));
        m.put("lsn_commit", lsnText(offset.get("lsn_commit")));
        m.put("txid", offset.get("txId"));
        m.put("ts_ms", r.timestamp());
        try {
            return JSON.writeValueAsString(m);
        }
        catch (IOException e) {
            log("cannot encode " + r + ": " + e);
            return null;
        }
    }

    private static Object payloadJson(Object payload) {
        if (payload instanceof String s) {
            try {
                JsonNode n = JSON.readTree(s);
                return n;
            }
            catch (IOException e) {
                return s;
            }
        }
        return payload == null ? null : String.valueOf(payload);
    }

    private static String headerString(SourceRecord r, String key) {
        Header h = r.headers().lastWithName(key);
        return h == null || h.value() == null ? null : String.valueOf(h.value());
    }

    /** An LSN in PostgreSQL's text form (X/X, hex), as pg_lsn prints it; null stays null. */
    static String lsnText(Object v) {
        if (!(v instanceof Number n)) {
            return null;
        }
        long l = n.longValue();
        return Long.toHexString(l >>> 32).toUpperCase() + "/" + Long.toHexString(l & 0xFFFFFFFFL).toUpperCase();
    }

    private static Map<String, String> parseArgs(String[] argv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String a : argv) {
            if (!a.startsWith("--") || !a.contains("=")) {
                System.err.println("relay: arguments are --name=value, got " + a);
                System.exit(2);
            }
            int eq = a.indexOf('=');
            m.put(a.substring(2, eq), a.substring(eq + 1));
        }
        return m;
    }

    private static String setting(Map<String, String> args, String name, String def) {
        String v = args.get(name);
        if (v == null) {
            v = System.getenv("RELAY_" + name.toUpperCase().replace('-', '_'));
        }
        return v == null || v.isEmpty() ? def : v;
    }

    private static String required(Map<String, String> args, String name) {
        String v = setting(args, name, null);
        if (v == null) {
            System.err.println("relay: --" + name + " (or RELAY_" + name.toUpperCase().replace('-', '_') + ") is required");
            System.exit(2);
        }
        return v;
    }

    private static String firstNonNull(String... vs) {
        for (String v : vs) {
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
        catch (IOException e) {
            log("removing " + dir + ": " + e);
        }
    }

    private static void log(String msg) {
        System.err.println("relay: " + msg);
        System.err.flush();
    }
}
