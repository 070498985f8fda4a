package camunda

import (
	"testing"
	"time"
)

func TestDecodeFixtures(t *testing.T) {
	f := newFakeEngine(t)
	registerAll(t, f, "")
	c := newTestClient(t, f.url(), nil)
	ctx := ctxT(t)
	cet := time.FixedZone("", 3600)

	v, err := c.Version(ctx)
	if err != nil || v != "7.24.0" {
		t.Fatalf("Version = %q, %v", v, err)
	}
	info, err := c.EngineInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info != (EngineInfo{Version: "7.24.0", ProductName: "Camunda BPM Runtime", Flavor: FlavorCamunda}) {
		t.Errorf("EngineInfo = %+v", info)
	}

	n, err := c.CountExternalTasks(ctx, ExternalTaskQuery{})
	if err != nil || n != 42 {
		t.Errorf("CountExternalTasks = %d, %v", n, err)
	}
	tasks, err := c.ListExternalTasks(ctx, ExternalTaskQuery{}, Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 {
		t.Fatalf("got %d tasks", len(tasks))
	}
	waiting, locked, failed := tasks[0], tasks[1], tasks[2]
	if waiting.LockExpirationTime != nil || waiting.Retries != nil || waiting.WorkerID != "" {
		t.Errorf("never-fetched task: lock %v retries %v worker %q, want nil, nil, empty", waiting.LockExpirationTime, waiting.Retries, waiting.WorkerID)
	}
	if waiting.CreateTime == nil || !waiting.CreateTime.Equal(time.Date(2026, 1, 25, 13, 33, 42, 165_000_000, cet)) {
		t.Errorf("createTime = %v", waiting.CreateTime)
	}
	if waiting.TopicName != "fulfillment.submit-command" || waiting.BusinessKey != "order-1001" || waiting.ProcessDefinitionKey != "fulfillment" {
		t.Errorf("waiting task = %+v", waiting)
	}
	if locked.LockExpirationTime == nil || !locked.LockExpirationTime.Equal(time.Date(2026, 1, 25, 13, 40, 0, 0, cet)) || locked.WorkerID != "worker-a" {
		t.Errorf("locked task lock = %v worker %q", locked.LockExpirationTime, locked.WorkerID)
	}
	if locked.Priority != 10 || locked.ProcessDefinitionVersionTag != "v3" {
		t.Errorf("locked task = %+v", locked)
	}
	if failed.Retries == nil || *failed.Retries != 0 || failed.ErrorMessage != "payment gateway returned 502" || failed.TenantID != "tenant-1" {
		t.Errorf("failed task = %+v", failed)
	}

	topics, err := c.TopicNames(ctx, false, false, false)
	if err != nil || len(topics) != 2 || topics[1] != "payment.capture" {
		t.Errorf("TopicNames = %v, %v", topics, err)
	}

	incs, err := c.ListIncidents(ctx, IncidentQuery{}, Page{})
	if err != nil || len(incs) != 2 {
		t.Fatalf("ListIncidents = %v, %v", incs, err)
	}
	if incs[0].IncidentType != IncidentFailedExternalTask || incs[0].Configuration != failed.ID {
		t.Errorf("incident 0 = %+v (configuration should be the external task id)", incs[0])
	}
	if !incs[1].IncidentTimestamp.Equal(time.Date(2026, 1, 25, 12, 1, 59, 0, cet)) || incs[1].JobDefinitionID == "" {
		t.Errorf("incident 1 = %+v", incs[1])
	}
	if n, err := c.CountIncidents(ctx, IncidentQuery{}); err != nil || n != 2 {
		t.Errorf("CountIncidents = %d, %v", n, err)
	}

	jobs, err := c.ListJobs(ctx, JobQuery{}, Page{})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("ListJobs = %v, %v", jobs, err)
	}
	if jobs[0].Retries != 0 || jobs[0].DueDate != nil || jobs[0].CreateTime == nil || jobs[0].ProcessDefinitionKey != "fulfillment" {
		t.Errorf("job = %+v", jobs[0])
	}
	if n, err := c.CountJobs(ctx, JobQuery{}); err != nil || n != 1 {
		t.Errorf("CountJobs = %d, %v", n, err)
	}
	if n, err := c.CountExternalTaskLog(ctx, HistoryLogQuery{}); err != nil || n != 17 {
		t.Errorf("CountExternalTaskLog = %d, %v", n, err)
	}

	keys, err := c.ProcessDefinitionKeys(ctx, []string{incs[0].ProcessDefinitionID, incs[1].ProcessDefinitionID})
	if err != nil {
		t.Fatal(err)
	}
	if keys[incs[0].ProcessDefinitionID] != "payment" || keys[incs[1].ProcessDefinitionID] != "fulfillment" {
		t.Errorf("keys = %v", keys)
	}
}

func TestUnexpectedJSON(t *testing.T) {
	f := newFakeEngine(t)
	f.handle("/external-task/count", jsonStatus(200, []byte(`<html>login page</html>`)))
	c := newTestClient(t, f.url(), nil)
	_, err := c.CountExternalTasks(ctxT(t), ExternalTaskQuery{})
	if err == nil {
		t.Fatal("want error for a non-JSON 200")
	}
	if !IsStatus(err, 200) {
		t.Errorf("err = %v, want an APIError with status 200", err)
	}
}
