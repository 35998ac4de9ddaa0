package awsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/config"
)

// TestGetParameterRetriesThrottling: a burst of cold starts is throttled by SSM; a throttled
// GetParameter is tried again (up to Attempts), and only then fails, naming the throttling.
func TestGetParameterRetriesThrottling(t *testing.T) {
	t.Parallel()
	for _, throttle := range []int{awsapi.Attempts - 1, awsapi.Attempts} {
		fake := awsapitest.NewSSM(t, map[string]string{"/steward/gemini-api-key": "AIza-from-ssm"})
		fake.Throttle = throttle
		ssm, err := awsapi.NewSSM(awsapitest.Creds, fake.URL)
		if err != nil {
			t.Fatal(err)
		}
		ssm.Backoff = time.Millisecond
		value, err := ssm.GetParameter(context.Background(), "/steward/gemini-api-key")
		if n := len(fake.Asked()); n != awsapi.Attempts {
			t.Errorf("throttled %d times: %d requests, want %d", throttle, n, awsapi.Attempts)
		}
		if throttle < awsapi.Attempts && (err != nil || value != "AIza-from-ssm") {
			t.Errorf("throttled %d times: %q, %v; want the parameter's value", throttle, value, err)
		}
		if throttle == awsapi.Attempts && (err == nil || !strings.Contains(err.Error(), "ThrottlingException")) {
			t.Errorf("throttled %d times: %q, %v; want ThrottlingException", throttle, value, err)
		}
	}
}

// TestQueueSendsToTheQueueURLsOrigin: SendMessage goes to the queue URL's origin, signed for
// sqs, naming the queue and carrying the body; a queue URL that is not one, or missing
// credentials, is an error naming STEWARD_RUN_QUEUE_URL and what is missing.
func TestQueueSendsToTheQueueURLsOrigin(t *testing.T) {
	t.Parallel()
	fake := awsapitest.NewJSON(t, "sqs", "application/x-amz-json-1.0", func(target string, body []byte) (int, string) {
		if target != "AmazonSQS.SendMessage" {
			return http.StatusBadRequest, `{"__type":"InvalidAction","message":"not SendMessage"}`
		}
		return http.StatusOK, `{"MessageId":"m-1","MD5OfMessageBody":"x"}`
	})
	queueURL := fake.URL + "/123456789012/steward-RunQueue"
	q, err := awsapi.NewQueue(awsapitest.Creds, queueURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Send(context.Background(), `{"owner_id":"x"}`); err != nil {
		t.Fatal(err)
	}
	var sent struct{ QueueUrl, MessageBody string }
	if b := fake.Bodies(); len(b) != 1 || json.Unmarshal(b[0], &sent) != nil || sent.QueueUrl != queueURL || sent.MessageBody != `{"owner_id":"x"}` {
		t.Errorf("sent %q; want one SendMessage of the body to %s", b, queueURL)
	}

	for _, c := range []struct {
		url  string
		aws  config.AWS
		want []string
	}{
		{"not a url", awsapitest.Creds, []string{"STEWARD_RUN_QUEUE_URL", "not a queue URL"}},
		{queueURL, config.AWS{Region: "eu-west-1"}, []string{"STEWARD_RUN_QUEUE_URL", "AWS_ACCESS_KEY_ID"}},
	} {
		_, err := awsapi.NewQueue(c.aws, c.url)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("NewQueue(%q): %v; want an error naming %s", c.url, err, w)
			}
		}
	}
}
