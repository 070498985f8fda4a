package camunda_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
)

// A collector's view: count tasks per state of one topic, and list the
// locked ones with a hard cap.
func Example() {
	c, err := camunda.New(camunda.Config{
		BaseURL:  "http://localhost:8080/engine-rest",
		Username: "exporter",
		Password: "read from password_file, never from a flag",
		Timeout:  10 * time.Second,
		Logger:   slog.Default(),
		Version:  "1.0.0",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	topic := "fulfillment.submit-command"
	exhausted, err := c.CountExternalTasks(ctx, camunda.ExternalTaskQuery{TopicName: topic, Retries: camunda.RetriesNone})
	if err != nil {
		fmt.Println(err) // e.g. camunda: GET /external-task/count: HTTP 401 Unauthorized: ...
		return
	}
	locked, truncated, err := camunda.Collect(ctx,
		camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}}, 200, 5000,
		func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
			return c.ListExternalTasks(ctx, camunda.ExternalTaskQuery{TopicName: topic, Lock: camunda.LockLocked}, p)
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(exhausted, len(locked), truncated)
}
