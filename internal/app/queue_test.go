package app

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/config"
)

// TestRunQueueNeedsCredentials: STEWARD_RUN_QUEUE_URL without a region and role credentials
// is a cold-start error naming what is missing, not a send that fails on every webhook.
func TestRunQueueNeedsCredentials(t *testing.T) {
	t.Parallel()
	_, err := newRunQueue(config.Config{RunQueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/steward-RunQueue",
		AWS: config.AWS{Region: "eu-west-1"}})
	if err == nil || !strings.Contains(err.Error(), "STEWARD_RUN_QUEUE_URL") || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("err = %v, want one naming STEWARD_RUN_QUEUE_URL and AWS_ACCESS_KEY_ID", err)
	}
}

// TestRunMessageNamesOneThing: a run queue record with both run_id and turn_id, or neither,
// fails alone (reported in BatchItemFailures), with nothing run and no panic.
func TestRunMessageNamesOneThing(t *testing.T) {
	t.Parallel()
	owner, id := uuid.New(), uuid.New()
	bodies := map[string]string{
		"both":     `{"owner_id":"` + owner.String() + `","run_id":"` + id.String() + `","turn_id":"` + id.String() + `"}`,
		"neither":  `{"owner_id":"` + owner.String() + `"}`,
		"no owner": `{"turn_id":"` + id.String() + `"}`,
		"unknown":  `{"owner_id":"` + owner.String() + `","turn_id":"` + id.String() + `","x":1}`,
	}
	var ev events.SQSEvent
	for name, body := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: name, Body: body})
	}
	resp, err := (&App{}).HandleRunMessages(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != len(bodies) {
		t.Fatalf("failures %+v, %v; want every one of %d records", resp.BatchItemFailures, err, len(bodies))
	}
}
