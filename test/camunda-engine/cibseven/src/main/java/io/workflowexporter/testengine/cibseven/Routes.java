package io.workflowexporter.testengine.cibseven;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import org.cibseven.bpm.engine.ExternalTaskService;
import org.cibseven.bpm.engine.HistoryService;
import org.cibseven.bpm.engine.ProcessEngine;
import org.cibseven.bpm.engine.RepositoryService;
import org.cibseven.bpm.engine.RuntimeService;
import org.cibseven.bpm.engine.externaltask.ExternalTask;
import org.cibseven.bpm.engine.externaltask.ExternalTaskQuery;
import org.cibseven.bpm.engine.externaltask.ExternalTaskQueryBuilder;
import org.cibseven.bpm.engine.externaltask.ExternalTaskQueryTopicBuilder;
import org.cibseven.bpm.engine.externaltask.LockedExternalTask;
import org.cibseven.bpm.engine.history.HistoricExternalTaskLog;
import org.cibseven.bpm.engine.history.HistoricExternalTaskLogQuery;
import org.cibseven.bpm.engine.impl.util.ProductPropertiesUtil;
import org.cibseven.bpm.engine.query.Query;
import org.cibseven.bpm.engine.repository.DeploymentBuilder;
import org.cibseven.bpm.engine.repository.DeploymentWithDefinitions;
import org.cibseven.bpm.engine.repository.ProcessDefinition;
import org.cibseven.bpm.engine.runtime.Incident;
import org.cibseven.bpm.engine.runtime.IncidentQuery;
import org.cibseven.bpm.engine.runtime.ProcessInstance;
import org.cibseven.bpm.engine.runtime.ProcessInstantiationBuilder;
import org.cibseven.bpm.engine.telemetry.TelemetryData;
import org.cibseven.bpm.engine.variable.VariableMap;
import org.cibseven.bpm.engine.variable.value.TypedValue;

/**
 * The test driver's endpoints: the subset of the Camunda 7 REST API that the Go harness's Client
 * and Worker call (test/harness/camundatest/client.go, worker.go), with the same paths, parameters
 * and JSON, each one call of the engine's Java API. Not a REST API for the exporter.
 */
final class Routes {

  static final String ROOT = "/engine-rest";

  /** The REST API's date format, in the JVM's zone: yyyy-MM-dd'T'HH:mm:ss.SSSZ. */
  static final DateTimeFormatter DATE = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ");

  private final ProcessEngine engine;
  private final RepositoryService repository;
  private final RuntimeService runtime;
  private final ExternalTaskService externalTasks;
  private final HistoryService history;

  Routes(ProcessEngine engine) {
    this.engine = engine;
    this.repository = engine.getRepositoryService();
    this.runtime = engine.getRuntimeService();
    this.externalTasks = engine.getExternalTaskService();
    this.history = engine.getHistoryService();
  }

  /** An answer outside the engine's own exceptions: status, the REST API's error type, message. */
  static final class HttpError extends RuntimeException {
    final int status;
    final String type;

    HttpError(int status, String type, String message) {
      super(message);
      this.status = status;
      this.type = type;
    }
  }

  static final class Reply {
    final int status;
    final String contentType;
    final byte[] body; // null: no body (204)

    Reply(int status, String contentType, byte[] body) {
      this.status = status;
      this.contentType = contentType;
      this.body = body;
    }

    static Reply json(Object o) {
      return new Reply(200, "application/json", TestDriver.GSON.toJson(o).getBytes(StandardCharsets.UTF_8));
    }

    static Reply noContent() {
      return new Reply(204, null, null);
    }
  }

  Reply route(TestDriver.Request r) throws IOException {
    if (r.is("GET", "version")) {
      return Reply.json(Map.of("version", ProductPropertiesUtil.getProductVersion()));
    }
    if (r.is("GET", "engine")) {
      return Reply.json(List.of(Map.of("name", engine.getName())));
    }
    if (r.is("GET", "test-driver", "info")) {
      return info();
    }
    if (r.is("POST", "deployment", "create")) {
      return deploy(r);
    }
    if (r.is("POST", "process-definition", "key", "*", "start")) {
      return start(r, r.seg(2), null);
    }
    if (r.is("POST", "process-definition", "key", "*", "tenant-id", "*", "start")) {
      return start(r, r.seg(2), r.seg(4));
    }
    if (r.is("PUT", "process-definition", "key", "*", "suspended")) {
      JsonObject b = r.json();
      var builder = repository.updateProcessDefinitionSuspensionState().byProcessDefinitionKey(r.seg(2))
          .includeProcessInstances(bool(b, "includeProcessInstances"));
      if (bool(b, "suspended")) {
        builder.suspend();
      } else {
        builder.activate();
      }
      return Reply.noContent();
    }
    if (r.is("PUT", "process-instance", "*", "suspended")) {
      var builder = runtime.updateProcessInstanceSuspensionState().byProcessInstanceId(r.seg(1));
      if (bool(r.json(), "suspended")) {
        builder.suspend();
      } else {
        builder.activate();
      }
      return Reply.noContent();
    }
    if (r.is("GET", "external-task")) {
      return list(externalTaskQuery(r), r, Routes::externalTask);
    }
    if (r.is("GET", "external-task", "count")) {
      return count(externalTaskQuery(r));
    }
    if (r.is("GET", "external-task", "topic-names")) {
      return Reply.json(externalTasks.getTopicNames(trueParam(r, "withLockedTasks"),
          trueParam(r, "withUnlockedTasks"), trueParam(r, "withRetriesLeft")));
    }
    if (r.is("POST", "external-task", "fetchAndLock")) {
      return fetchAndLock(r);
    }
    if (r.is("GET", "external-task", "*")) {
      ExternalTask t = externalTasks.createExternalTaskQuery().externalTaskId(r.seg(1)).singleResult();
      if (t == null) {
        throw new HttpError(404, "InvalidRequestException", "External task with id " + r.seg(1) + " does not exist");
      }
      return Reply.json(externalTask(t));
    }
    if (r.is("GET", "external-task", "*", "errorDetails")) {
      String accept = r.header("Accept");
      if (accept != null && !accept.contains("text/plain") && !accept.contains("*/*")) {
        throw new HttpError(406, "NotAcceptable", "errorDetails is text/plain");
      }
      String details = externalTasks.getExternalTaskErrorDetails(r.seg(1));
      return details == null ? Reply.noContent()
          : new Reply(200, "text/plain", details.getBytes(StandardCharsets.UTF_8));
    }
    if (r.segs.size() == 3 && r.seg(0).equals("external-task")) {
      return externalTaskAction(r, r.seg(1), r.seg(2));
    }
    if (r.is("GET", "incident")) {
      return list(incidentQuery(r), r, Routes::incident);
    }
    if (r.is("GET", "incident", "count")) {
      return count(incidentQuery(r));
    }
    if (r.is("GET", "history", "external-task-log")) {
      return list(externalTaskLogQuery(r), r, Routes::externalTaskLog);
    }
    if (r.is("GET", "history", "external-task-log", "count")) {
      return count(externalTaskLogQuery(r));
    }
    Reply more = jobsAndInstances(r);
    if (more != null) {
      return more;
    }
    throw new HttpError(404, "NotFound", "the test driver has no " + r.method + " /" + String.join("/", r.segs)
        + " (it answers only what test/harness/camundatest's Client and Worker call)");
  }

  // ---- jobs, process instances, messages: what the engine scenarios of collectors/engine call
  // through Client.Get/Do/Count on the REST flavors

  private Reply jobsAndInstances(TestDriver.Request r) throws IOException {
    if (r.is("GET", "job")) {
      return list(jobQuery(r), r, Routes::job);
    }
    if (r.is("GET", "job", "count")) {
      return count(jobQuery(r));
    }
    if (r.is("PUT", "job", "*", "retries")) {
      engine.getManagementService().setJobRetries(r.seg(1), r.json().get("retries").getAsInt());
      return Reply.noContent();
    }
    if (r.is("POST", "job", "*", "execute")) {
      engine.getManagementService().executeJob(r.seg(1));
      return Reply.noContent();
    }
    if (r.is("GET", "history", "job-log")) {
      return list(jobLogQuery(r), r, Routes::jobLog);
    }
    if (r.is("GET", "history", "job-log", "count")) {
      return count(jobLogQuery(r));
    }
    if (r.is("GET", "process-instance", "count")) {
      var q = runtime.createProcessInstanceQuery();
      str(r.query, "processDefinitionKey", q::processDefinitionKey);
      return count(q);
    }
    if (r.is("DELETE", "process-instance", "*")) {
      runtime.deleteProcessInstance(r.seg(1), null);
      return Reply.noContent();
    }
    if (r.is("GET", "process-instance", "*", "activity-instances")) {
      var tree = runtime.getActivityInstance(r.seg(1));
      if (tree == null) {
        throw new HttpError(404, "InvalidRequestException", "Process instance with id " + r.seg(1) + " does not exist");
      }
      return Reply.json(activityInstance(tree));
    }
    if (r.is("POST", "process-instance", "*", "modification")) {
      var m = runtime.createProcessInstanceModification(r.seg(1));
      for (JsonElement e : r.json().getAsJsonArray("instructions")) {
        JsonObject i = e.getAsJsonObject();
        switch (string(i, "type")) {
          case "cancel" -> m.cancelActivityInstance(string(i, "activityInstanceId"));
          case "startBeforeActivity" -> m.startBeforeActivity(string(i, "activityId"));
          default -> throw new HttpError(400, "InvalidRequestException", "the test driver has no modification " + string(i, "type"));
        }
      }
      m.execute();
      return Reply.noContent();
    }
    if (r.is("POST", "message")) {
      JsonObject b = r.json();
      var c = runtime.createMessageCorrelation(string(b, "messageName"));
      if (b.has("processInstanceId")) {
        c.processInstanceId(string(b, "processInstanceId"));
      }
      c.correlate();
      return Reply.noContent();
    }
    return null;
  }

  private org.cibseven.bpm.engine.runtime.JobQuery jobQuery(TestDriver.Request r) {
    var q = engine.getManagementService().createJobQuery();
    Map<String, String> p = r.query;
    str(p, "processDefinitionKey", q::processDefinitionKey);
    str(p, "processInstanceId", q::processInstanceId);
    flag(p, "noRetriesLeft", q::noRetriesLeft);
    flag(p, "withRetriesLeft", q::withRetriesLeft);
    flag(p, "executable", q::executable);
    flag(p, "active", q::active);
    flag(p, "suspended", q::suspended);
    sort(p, Map.of("jobId", q::orderByJobId, "jobDueDate", q::orderByJobDuedate), q);
    return q;
  }

  private static Map<String, Object> job(org.cibseven.bpm.engine.runtime.Job j) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", j.getId());
    m.put("jobDefinitionId", j.getJobDefinitionId());
    m.put("processInstanceId", j.getProcessInstanceId());
    m.put("processDefinitionId", j.getProcessDefinitionId());
    m.put("processDefinitionKey", j.getProcessDefinitionKey());
    m.put("executionId", j.getExecutionId());
    m.put("exceptionMessage", j.getExceptionMessage());
    m.put("failedActivityId", j.getFailedActivityId());
    m.put("retries", j.getRetries());
    m.put("dueDate", date(j.getDuedate()));
    m.put("suspended", j.isSuspended());
    m.put("priority", j.getPriority());
    m.put("tenantId", j.getTenantId());
    m.put("createTime", date(j.getCreateTime()));
    return m;
  }

  private org.cibseven.bpm.engine.history.HistoricJobLogQuery jobLogQuery(TestDriver.Request r) {
    var q = history.createHistoricJobLogQuery();
    Map<String, String> p = r.query;
    str(p, "processDefinitionKey", q::processDefinitionKey);
    str(p, "jobId", q::jobId);
    flag(p, "creationLog", q::creationLog);
    flag(p, "failureLog", q::failureLog);
    flag(p, "successLog", q::successLog);
    flag(p, "deletionLog", q::deletionLog);
    sort(p, Map.of("timestamp", q::orderByTimestamp, "jobId", q::orderByJobId), q);
    return q;
  }

  private static Map<String, Object> jobLog(org.cibseven.bpm.engine.history.HistoricJobLog l) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", l.getId());
    m.put("timestamp", date(l.getTimestamp()));
    m.put("jobId", l.getJobId());
    m.put("jobExceptionMessage", l.getJobExceptionMessage());
    m.put("processDefinitionKey", l.getProcessDefinitionKey());
    m.put("processInstanceId", l.getProcessInstanceId());
    m.put("hostname", l.getHostname());
    m.put("creationLog", l.isCreationLog());
    m.put("failureLog", l.isFailureLog());
    m.put("successLog", l.isSuccessLog());
    m.put("deletionLog", l.isDeletionLog());
    return m;
  }

  private static Map<String, Object> activityInstance(org.cibseven.bpm.engine.runtime.ActivityInstance a) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", a.getId());
    m.put("activityId", a.getActivityId());
    m.put("activityType", a.getActivityType());
    List<Map<String, Object>> children = new ArrayList<>();
    for (var c : a.getChildActivityInstances()) {
      children.add(activityInstance(c));
    }
    m.put("childActivityInstances", children);
    return m;
  }

  // ---- engine facts

  private Reply info() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("productVersion", ProductPropertiesUtil.getProductVersion());
    out.put("processEngineVersion", ProcessEngine.VERSION);
    out.put("engineName", engine.getName());
    out.put("historyLevel", engine.getManagementService().getHistoryLevel());
    out.put("databaseProperties", engine.getManagementService().getProperties());
    try {
      TelemetryData t = engine.getManagementService().getTelemetryData();
      Map<String, Object> product = new LinkedHashMap<>();
      product.put("name", t.getProduct().getName());
      product.put("version", t.getProduct().getVersion());
      product.put("edition", t.getProduct().getEdition());
      out.put("telemetryProduct", product);
    } catch (RuntimeException e) {
      out.put("telemetryProduct", e.toString());
    }
    return Reply.json(out);
  }

  // ---- deployments and process instances

  private Reply deploy(TestDriver.Request r) throws IOException {
    String ct = r.header("Content-Type");
    List<Multipart.Part> parts = Multipart.parse(ct, r.body());
    DeploymentBuilder b = repository.createDeployment();
    boolean duplicateFiltering = false, changedOnly = false;
    int files = 0;
    for (Multipart.Part p : parts) {
      if (p.filename != null) {
        b.addInputStream(p.filename, new ByteArrayInputStream(p.data));
        files++;
        continue;
      }
      String v = new String(p.data, StandardCharsets.UTF_8);
      switch (p.name) {
        case "deployment-name" -> b.name(v);
        case "deployment-source" -> b.source(v);
        case "tenant-id" -> b.tenantId(v);
        case "enable-duplicate-filtering" -> duplicateFiltering = Boolean.parseBoolean(v);
        case "deploy-changed-only" -> changedOnly = Boolean.parseBoolean(v);
        default -> {
        }
      }
    }
    if (files == 0) {
      throw new HttpError(400, "InvalidRequestException", "No deployment resources contained in the form upload.");
    }
    if (duplicateFiltering || changedOnly) {
      b.enableDuplicateFiltering(changedOnly);
    }
    DeploymentWithDefinitions d = b.deployWithResult();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("links", List.of());
    out.put("id", d.getId());
    out.put("name", d.getName());
    out.put("source", d.getSource());
    out.put("deploymentTime", date(d.getDeploymentTime()));
    out.put("tenantId", d.getTenantId());
    Map<String, Object> defs = null;
    if (d.getDeployedProcessDefinitions() != null && !d.getDeployedProcessDefinitions().isEmpty()) {
      defs = new LinkedHashMap<>();
      for (ProcessDefinition pd : d.getDeployedProcessDefinitions()) {
        defs.put(pd.getId(), processDefinition(pd));
      }
    }
    out.put("deployedProcessDefinitions", defs);
    out.put("deployedCaseDefinitions", null);
    out.put("deployedDecisionDefinitions", null);
    out.put("deployedDecisionRequirementsDefinitions", null);
    return Reply.json(out);
  }

  private static Map<String, Object> processDefinition(ProcessDefinition pd) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", pd.getId());
    m.put("key", pd.getKey());
    m.put("category", pd.getCategory());
    m.put("description", pd.getDescription());
    m.put("name", pd.getName());
    m.put("version", pd.getVersion());
    m.put("resource", pd.getResourceName());
    m.put("deploymentId", pd.getDeploymentId());
    m.put("diagram", pd.getDiagramResourceName());
    m.put("suspended", pd.isSuspended());
    m.put("tenantId", pd.getTenantId());
    m.put("versionTag", pd.getVersionTag());
    m.put("historyTimeToLive", pd.getHistoryTimeToLive());
    m.put("startableInTasklist", pd.isStartableInTasklist());
    return m;
  }

  private Reply start(TestDriver.Request r, String key, String tenant) throws IOException {
    JsonObject b = r.json();
    ProcessInstantiationBuilder pb = runtime.createProcessInstanceByKey(key);
    if (tenant != null) {
      pb.processDefinitionTenantId(tenant);
    } else {
      pb.processDefinitionWithoutTenantId();
    }
    if (b.has("businessKey") && !b.get("businessKey").isJsonNull()) {
      pb.businessKey(b.get("businessKey").getAsString());
    }
    pb.setVariables(variablesIn(b, "variables"));
    ProcessInstance pi = pb.execute();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("links", List.of());
    out.put("id", pi.getId());
    out.put("definitionId", pi.getProcessDefinitionId());
    out.put("businessKey", pi.getBusinessKey());
    out.put("caseInstanceId", pi.getCaseInstanceId());
    out.put("ended", pi.isEnded());
    out.put("suspended", pi.isSuspended());
    out.put("tenantId", pi.getTenantId());
    return Reply.json(out);
  }

  // ---- external tasks

  private ExternalTaskQuery externalTaskQuery(TestDriver.Request r) {
    ExternalTaskQuery q = externalTasks.createExternalTaskQuery();
    Map<String, String> p = r.query;
    str(p, "externalTaskId", q::externalTaskId);
    str(p, "externalTaskIdIn", v -> q.externalTaskIdIn(new HashSet<>(List.of(v.split(",")))));
    str(p, "topicName", q::topicName);
    str(p, "workerId", q::workerId);
    str(p, "executionId", q::executionId);
    str(p, "processInstanceId", q::processInstanceId);
    str(p, "processInstanceIdIn", v -> q.processInstanceIdIn(v.split(",")));
    str(p, "processDefinitionId", q::processDefinitionId);
    str(p, "activityId", q::activityId);
    str(p, "activityIdIn", v -> q.activityIdIn(v.split(",")));
    str(p, "tenantIdIn", v -> q.tenantIdIn(v.split(",")));
    dateParam(p, "lockExpirationBefore", q::lockExpirationBefore);
    dateParam(p, "lockExpirationAfter", q::lockExpirationAfter);
    longParam(p, "priorityHigherThanOrEquals", q::priorityHigherThanOrEquals);
    longParam(p, "priorityLowerThanOrEquals", q::priorityLowerThanOrEquals);
    flag(p, "locked", q::locked);
    flag(p, "notLocked", q::notLocked);
    flag(p, "active", q::active);
    flag(p, "suspended", q::suspended);
    flag(p, "withRetriesLeft", q::withRetriesLeft);
    flag(p, "noRetriesLeft", q::noRetriesLeft);
    sort(p, Map.of(
        "id", q::orderById,
        "lockExpirationTime", q::orderByLockExpirationTime,
        "processInstanceId", q::orderByProcessInstanceId,
        "processDefinitionId", q::orderByProcessDefinitionId,
        "processDefinitionKey", q::orderByProcessDefinitionKey,
        "tenantId", q::orderByTenantId,
        "taskPriority", q::orderByPriority,
        "createTime", q::orderByCreateTime), q);
    return q;
  }

  private static Map<String, Object> externalTask(ExternalTask t) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("activityId", t.getActivityId());
    m.put("activityInstanceId", t.getActivityInstanceId());
    m.put("errorMessage", t.getErrorMessage());
    m.put("executionId", t.getExecutionId());
    m.put("id", t.getId());
    m.put("lockExpirationTime", date(t.getLockExpirationTime()));
    m.put("createTime", date(t.getCreateTime()));
    m.put("processDefinitionId", t.getProcessDefinitionId());
    m.put("processDefinitionKey", t.getProcessDefinitionKey());
    m.put("processDefinitionVersionTag", t.getProcessDefinitionVersionTag());
    m.put("processInstanceId", t.getProcessInstanceId());
    m.put("retries", t.getRetries());
    m.put("suspended", t.isSuspended());
    m.put("workerId", t.getWorkerId());
    m.put("topicName", t.getTopicName());
    m.put("tenantId", t.getTenantId());
    m.put("priority", t.getPriority());
    m.put("businessKey", t.getBusinessKey());
    return m;
  }

  private Reply fetchAndLock(TestDriver.Request r) throws IOException {
    JsonObject b = r.json();
    String workerId = string(b, "workerId");
    if (workerId == null) {
      throw new HttpError(400, "InvalidRequestException", "workerId is required");
    }
    int maxTasks = b.has("maxTasks") ? b.get("maxTasks").getAsInt() : 10;
    boolean usePriority = bool(b, "usePriority");
    long asyncTimeout = b.has("asyncResponseTimeout") && !b.get("asyncResponseTimeout").isJsonNull()
        ? b.get("asyncResponseTimeout").getAsLong() : 0;
    JsonArray topics = b.has("topics") && b.get("topics").isJsonArray() ? b.getAsJsonArray("topics") : new JsonArray();
    long deadline = System.currentTimeMillis() + asyncTimeout;
    while (true) {
      ExternalTaskQueryBuilder qb = externalTasks.fetchAndLock(maxTasks, workerId, usePriority);
      for (JsonElement te : topics) {
        JsonObject t = te.getAsJsonObject();
        ExternalTaskQueryTopicBuilder tb = qb.topic(string(t, "topicName"), t.get("lockDuration").getAsLong());
        if (t.has("variables") && t.get("variables").isJsonArray()) {
          List<String> names = new ArrayList<>();
          t.getAsJsonArray("variables").forEach(v -> names.add(v.getAsString()));
          tb.variables(names);
        }
        if (bool(t, "localVariables")) {
          tb.localVariables();
        }
        if (bool(t, "includeExtensionProperties")) {
          tb.includeExtensionProperties();
        }
        if (string(t, "businessKey") != null) {
          tb.businessKey(string(t, "businessKey"));
        }
        if (string(t, "processDefinitionKey") != null) {
          tb.processDefinitionKey(string(t, "processDefinitionKey"));
        }
        if (bool(t, "withoutTenantId")) {
          tb.withoutTenantId();
        }
        if (t.has("tenantIdIn") && t.get("tenantIdIn").isJsonArray()) {
          List<String> ids = new ArrayList<>();
          t.getAsJsonArray("tenantIdIn").forEach(v -> ids.add(v.getAsString()));
          tb.tenantIdIn(ids.toArray(new String[0]));
        }
        qb = tb;
      }
      List<LockedExternalTask> locked = topics.isEmpty() ? List.of() : qb.execute();
      long left = deadline - System.currentTimeMillis();
      if (!locked.isEmpty() || left <= 0) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (LockedExternalTask t : locked) {
          out.add(lockedExternalTask(t));
        }
        return Reply.json(out);
      }
      try {
        Thread.sleep(Math.min(left, 200));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Reply.json(List.of());
      }
    }
  }

  private static Map<String, Object> lockedExternalTask(LockedExternalTask t) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("activityId", t.getActivityId());
    m.put("activityInstanceId", t.getActivityInstanceId());
    m.put("errorMessage", t.getErrorMessage());
    m.put("errorDetails", t.getErrorDetails());
    m.put("executionId", t.getExecutionId());
    m.put("id", t.getId());
    m.put("lockExpirationTime", date(t.getLockExpirationTime()));
    m.put("createTime", date(t.getCreateTime()));
    m.put("processDefinitionId", t.getProcessDefinitionId());
    m.put("processDefinitionKey", t.getProcessDefinitionKey());
    m.put("processDefinitionVersionTag", t.getProcessDefinitionVersionTag());
    m.put("processInstanceId", t.getProcessInstanceId());
    m.put("retries", t.getRetries());
    m.put("workerId", t.getWorkerId());
    m.put("topicName", t.getTopicName());
    m.put("tenantId", t.getTenantId());
    m.put("variables", variablesOut(t.getVariables()));
    m.put("priority", t.getPriority());
    m.put("businessKey", t.getBusinessKey());
    m.put("extensionProperties", t.getExtensionProperties());
    return m;
  }

  private Reply externalTaskAction(TestDriver.Request r, String id, String action) throws IOException {
    String m = r.method;
    if (m.equals("PUT") && action.equals("retries")) {
      externalTasks.setRetries(id, r.json().get("retries").getAsInt());
      return Reply.noContent();
    }
    if (!m.equals("POST")) {
      throw new HttpError(404, "NotFound", "the test driver has no " + m + " /external-task/{id}/" + action);
    }
    JsonObject b = r.json();
    String worker = string(b, "workerId");
    switch (action) {
      case "complete" -> externalTasks.complete(id, worker, variablesIn(b, "variables"), variablesIn(b, "localVariables"));
      case "failure" -> externalTasks.handleFailure(id, worker, string(b, "errorMessage"), string(b, "errorDetails"),
          b.get("retries").getAsInt(), b.has("retryTimeout") ? b.get("retryTimeout").getAsLong() : 0,
          variablesIn(b, "variables"), variablesIn(b, "localVariables"));
      case "bpmnError" -> externalTasks.handleBpmnError(id, worker, string(b, "errorCode"), string(b, "errorMessage"),
          variablesIn(b, "variables"));
      case "extendLock" -> externalTasks.extendLock(id, worker, b.get("newDuration").getAsLong());
      case "unlock" -> externalTasks.unlock(id);
      case "lock" -> externalTasks.lock(id, worker, b.get("lockDuration").getAsLong());
      default -> throw new HttpError(404, "NotFound", "the test driver has no POST /external-task/{id}/" + action);
    }
    return Reply.noContent();
  }

  // ---- incidents and history

  private IncidentQuery incidentQuery(TestDriver.Request r) {
    IncidentQuery q = runtime.createIncidentQuery();
    Map<String, String> p = r.query;
    str(p, "incidentId", q::incidentId);
    str(p, "incidentType", q::incidentType);
    str(p, "incidentMessage", q::incidentMessage);
    str(p, "processDefinitionId", q::processDefinitionId);
    str(p, "processInstanceId", q::processInstanceId);
    str(p, "executionId", q::executionId);
    str(p, "activityId", q::activityId);
    str(p, "failedActivityId", q::failedActivityId);
    str(p, "causeIncidentId", q::causeIncidentId);
    str(p, "rootCauseIncidentId", q::rootCauseIncidentId);
    str(p, "configuration", q::configuration);
    str(p, "tenantIdIn", v -> q.tenantIdIn(v.split(",")));
    str(p, "processDefinitionKeyIn", v -> q.processDefinitionKeyIn(v.split(",")));
    sort(p, Map.of(
        "incidentId", q::orderByIncidentId,
        "incidentMessage", q::orderByIncidentMessage,
        "incidentTimestamp", q::orderByIncidentTimestamp,
        "incidentType", q::orderByIncidentType,
        "executionId", q::orderByExecutionId,
        "activityId", q::orderByActivityId,
        "processInstanceId", q::orderByProcessInstanceId,
        "processDefinitionId", q::orderByProcessDefinitionId,
        "configuration", q::orderByConfiguration,
        "tenantId", q::orderByTenantId), q);
    return q;
  }

  private static Map<String, Object> incident(Incident i) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", i.getId());
    m.put("processDefinitionId", i.getProcessDefinitionId());
    m.put("processInstanceId", i.getProcessInstanceId());
    m.put("executionId", i.getExecutionId());
    m.put("incidentTimestamp", date(i.getIncidentTimestamp()));
    m.put("incidentType", i.getIncidentType());
    m.put("activityId", i.getActivityId());
    m.put("failedActivityId", i.getFailedActivityId());
    m.put("causeIncidentId", i.getCauseIncidentId());
    m.put("rootCauseIncidentId", i.getRootCauseIncidentId());
    m.put("configuration", i.getConfiguration());
    m.put("tenantId", i.getTenantId());
    m.put("incidentMessage", i.getIncidentMessage());
    m.put("jobDefinitionId", i.getJobDefinitionId());
    m.put("annotation", i.getAnnotation());
    return m;
  }

  private HistoricExternalTaskLogQuery externalTaskLogQuery(TestDriver.Request r) {
    HistoricExternalTaskLogQuery q = history.createHistoricExternalTaskLogQuery();
    Map<String, String> p = r.query;
    str(p, "logId", q::logId);
    str(p, "externalTaskId", q::externalTaskId);
    str(p, "topicName", q::topicName);
    str(p, "workerId", q::workerId);
    str(p, "errorMessage", q::errorMessage);
    str(p, "processInstanceId", q::processInstanceId);
    str(p, "processDefinitionId", q::processDefinitionId);
    str(p, "processDefinitionKey", q::processDefinitionKey);
    str(p, "activityIdIn", v -> q.activityIdIn(v.split(",")));
    flag(p, "creationLog", q::creationLog);
    flag(p, "failureLog", q::failureLog);
    flag(p, "successLog", q::successLog);
    flag(p, "deletionLog", q::deletionLog);
    sort(p, Map.of(
        "timestamp", q::orderByTimestamp,
        "externalTaskId", q::orderByExternalTaskId,
        "retries", q::orderByRetries,
        "priority", q::orderByPriority,
        "topicName", q::orderByTopicName,
        "workerId", q::orderByWorkerId,
        "processInstanceId", q::orderByProcessInstanceId), q);
    return q;
  }

  private static Map<String, Object> externalTaskLog(HistoricExternalTaskLog l) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", l.getId());
    m.put("timestamp", date(l.getTimestamp()));
    m.put("removalTime", date(l.getRemovalTime()));
    m.put("externalTaskId", l.getExternalTaskId());
    m.put("topicName", l.getTopicName());
    m.put("workerId", l.getWorkerId());
    m.put("priority", l.getPriority());
    m.put("retries", l.getRetries());
    m.put("errorMessage", l.getErrorMessage());
    m.put("activityId", l.getActivityId());
    m.put("activityInstanceId", l.getActivityInstanceId());
    m.put("executionId", l.getExecutionId());
    m.put("processInstanceId", l.getProcessInstanceId());
    m.put("processDefinitionId", l.getProcessDefinitionId());
    m.put("processDefinitionKey", l.getProcessDefinitionKey());
    m.put("tenantId", l.getTenantId());
    m.put("rootProcessInstanceId", l.getRootProcessInstanceId());
    m.put("creationLog", l.isCreationLog());
    m.put("failureLog", l.isFailureLog());
    m.put("successLog", l.isSuccessLog());
    m.put("deletionLog", l.isDeletionLog());
    return m;
  }

  // ---- query helpers: the REST API's parameter rules

  private static <Q extends Query<Q, T>, T> Reply list(Q q, TestDriver.Request r, java.util.function.Function<T, Map<String, Object>> dto) {
    Integer first = intParam(r.query, "firstResult");
    Integer max = intParam(r.query, "maxResults");
    List<T> items;
    if (first == null && max == null) {
      items = q.list();
    } else {
      items = q.listPage(first == null ? 0 : first, max == null ? Integer.MAX_VALUE : max);
    }
    List<Map<String, Object>> out = new ArrayList<>(items.size());
    for (T t : items) {
      out.add(dto.apply(t));
    }
    return Reply.json(out);
  }

  private static Reply count(Query<?, ?> q) {
    return Reply.json(Map.of("count", q.count()));
  }

  /** sortBy and sortOrder go together (400 otherwise), as in the REST API. */
  private static void sort(Map<String, String> p, Map<String, Runnable> keys, Query<?, ?> q) {
    String by = p.get("sortBy"), order = p.get("sortOrder");
    if (by == null && order == null) {
      return;
    }
    if (by == null || order == null) {
      throw new HttpError(400, "InvalidRequestException", "Only a single sorting parameter specified. sortBy and sortOrder required");
    }
    Runnable r = keys.get(by);
    if (r == null) {
      throw new HttpError(400, "InvalidRequestException", "Cannot set query parameter 'sortBy' to value '" + by + "'");
    }
    r.run();
    switch (order) {
      case "asc" -> q.asc();
      case "desc" -> q.desc();
      default -> throw new HttpError(400, "InvalidRequestException", "Cannot set query parameter 'sortOrder' to value '" + order + "'");
    }
  }

  private static void str(Map<String, String> p, String name, Consumer<String> set) {
    String v = p.get(name);
    if (v != null && !v.isEmpty()) {
      set.accept(v);
    }
  }

  /** A boolean filter: "true" applies it, "false" means no filter, anything else is refused. */
  private static void flag(Map<String, String> p, String name, Runnable set) {
    String v = p.get(name);
    if (v == null) {
      return;
    }
    if (v.equals("true")) {
      set.run();
    } else if (!v.equals("false")) {
      throw new HttpError(400, "InvalidRequestException", "Cannot set query parameter '" + name + "' to value '" + v + "'");
    }
  }

  private static boolean trueParam(TestDriver.Request r, String name) {
    return "true".equals(r.query.get(name));
  }

  private static void dateParam(Map<String, String> p, String name, Consumer<Date> set) {
    String v = p.get(name);
    if (v == null) {
      return;
    }
    try {
      set.accept(Date.from(OffsetDateTime.parse(v, DATE).toInstant()));
    } catch (DateTimeParseException e) {
      throw new HttpError(400, "InvalidRequestException", "Cannot set query parameter '" + name + "' to value '" + v
          + "': cannot convert value \"" + v + "\" to java type java.util.Date");
    }
  }

  private static void longParam(Map<String, String> p, String name, Consumer<Long> set) {
    String v = p.get(name);
    if (v != null) {
      try {
        set.accept(Long.parseLong(v));
      } catch (NumberFormatException e) {
        throw new HttpError(400, "InvalidRequestException", "Cannot set query parameter '" + name + "' to value '" + v + "'");
      }
    }
  }

  private static Integer intParam(Map<String, String> p, String name) {
    String v = p.get(name);
    if (v == null) {
      return null;
    }
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new HttpError(400, "InvalidRequestException", "Cannot set query parameter '" + name + "' to value '" + v + "'");
    }
  }

  static String date(Date d) {
    return d == null ? null : DATE.format(d.toInstant().atZone(ZoneId.systemDefault()));
  }

  // ---- JSON helpers

  private static String string(JsonObject o, String name) {
    JsonElement e = o.get(name);
    return e == null || e.isJsonNull() ? null : e.getAsString();
  }

  private static boolean bool(JsonObject o, String name) {
    JsonElement e = o.get(name);
    return e != null && !e.isJsonNull() && e.getAsBoolean();
  }

  /** {"name": {"value": v}} to a map of Java values; JSON numbers become Integer, Long or Double. */
  private static Map<String, Object> variablesIn(JsonObject body, String field) {
    Map<String, Object> out = new LinkedHashMap<>();
    JsonElement vars = body.get(field);
    if (vars == null || !vars.isJsonObject()) {
      return out;
    }
    for (Map.Entry<String, JsonElement> e : vars.getAsJsonObject().entrySet()) {
      JsonElement v = e.getValue().isJsonObject() ? e.getValue().getAsJsonObject().get("value") : null;
      out.put(e.getKey(), javaValue(v));
    }
    return out;
  }

  private static Object javaValue(JsonElement v) {
    if (v == null || v.isJsonNull()) {
      return null;
    }
    if (!v.isJsonPrimitive()) {
      return v.toString(); // objects and arrays: kept as their JSON text
    }
    JsonPrimitive p = v.getAsJsonPrimitive();
    if (p.isBoolean()) {
      return p.getAsBoolean();
    }
    if (p.isString()) {
      return p.getAsString();
    }
    double d = p.getAsDouble();
    if (d == Math.rint(d) && !p.getAsString().contains(".")) {
      long l = p.getAsLong();
      return l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE ? (Object) (int) l : (Object) l;
    }
    return d;
  }

  /** The REST API's {"name": {"type", "value", "valueInfo"}} for primitive values. */
  private static Map<String, Object> variablesOut(VariableMap vars) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (vars == null) {
      return out;
    }
    for (String name : vars.keySet()) {
      TypedValue tv = vars.getValueTyped(name);
      Map<String, Object> v = new LinkedHashMap<>();
      String type = tv.getType() == null ? "Null" : tv.getType().getName();
      v.put("type", type.isEmpty() ? type : Character.toUpperCase(type.charAt(0)) + type.substring(1));
      Object value = tv.getValue();
      v.put("value", value instanceof Date dv ? date(dv) : value);
      v.put("valueInfo", Map.of());
      out.put(name, v);
    }
    return out;
  }
}
