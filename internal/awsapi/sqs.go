package awsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/stewardhq/steward/internal/config"
)

// Queue sends messages to one SQS queue with SendMessage (awsJson1_0): the run queue
// (STEWARD_RUN_QUEUE_URL). The endpoint is the queue URL's origin
// (https://sqs.<region>.amazonaws.com, which is what SQS's queue URLs are), so a test's fake
// queue URL points the client at the fake.
type Queue struct {
	URL string
	*JSONClient
}

// NewQueue makes a client of the queue at queueURL. It fails, naming STEWARD_RUN_QUEUE_URL,
// when that is not a URL or there are no AWS credentials.
func NewQueue(a config.AWS, queueURL string) (*Queue, error) {
	u, err := url.Parse(queueURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("STEWARD_RUN_QUEUE_URL %q is not a queue URL", queueURL)
	}
	c, err := NewJSONClient(a, "sqs", u.Scheme+"://"+u.Host+"/", "application/x-amz-json-1.0", "sending to STEWARD_RUN_QUEUE_URL")
	if err != nil {
		return nil, err
	}
	return &Queue{URL: queueURL, JSONClient: c}, nil
}

// Send puts one message whose body is body on the queue.
func (q *Queue) Send(ctx context.Context, body string) error {
	raw, err := q.Do(ctx, "AmazonSQS.SendMessage", struct {
		QueueURL    string `json:"QueueUrl"`
		MessageBody string
	}{q.URL, body})
	if err != nil {
		return fmt.Errorf("SQS SendMessage: %w", err)
	}
	var out struct {
		MessageID string `json:"MessageId"`
	}
	if json.Unmarshal(raw, &out) != nil || out.MessageID == "" {
		return errors.New("SQS answered SendMessage with no MessageId")
	}
	return nil
}
