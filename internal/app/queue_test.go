package app

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
)

// TestRunQueueNeedsCredentials: STEWARD_RUN_QUEUE_URL without a region and role credentials
// is a cold-start error naming what is missing, not a send that fails on every webhook.
func TestRunQueueNeedsCredentials(t *testing.T) {
	t.Parallel()
	_, err := newSpine(config.Config{RunQueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/steward-RunQueue",
		AWS: config.AWS{Region: "eu-west-1"}}, &App{}, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "STEWARD_RUN_QUEUE_URL") || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("err = %v, want one naming STEWARD_RUN_QUEUE_URL and AWS_ACCESS_KEY_ID", err)
	}
}
