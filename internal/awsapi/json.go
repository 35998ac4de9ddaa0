package awsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/config"
)

// JSONClient calls one AWS service's JSON API (awsJson1_0 or awsJson1_1: a POST of a JSON
// body naming the operation in X-Amz-Target), signed by Signer — not the SDK's service
// clients, which bring every operation of a service and the SDK's credential chain into each
// Lambda bootstrap (3.5 MB for SSM alone, see internal/lambdatest) for the one or two calls
// Steward makes: SSM's GetParameter at cold start (SSM) and SQS's SendMessage after a
// webhook (Queue). The credentials are the ones the Lambda runtime sets for the function's
// role.
type JSONClient struct {
	service     string // the SigV4 signing name: ssm, sqs
	endpoint    string
	contentType string // application/x-amz-json-1.0 or 1.1, as the service's protocol says
	signer      *Signer
	http        *http.Client
	// Backoff is the wait before the first retry, doubled for each next one (200ms).
	Backoff time.Duration
}

// NewJSONClient makes a client of service at endpoint (empty: the one a.Endpoints names for
// service, else https://<service>.<region>.amazonaws.com/). It fails, naming what is missing and why (the feature that needs AWS),
// without a region and credentials.
func NewJSONClient(a config.AWS, service, endpoint, contentType, why string) (*JSONClient, error) {
	signer, err := NewSigner(a, why)
	if err != nil {
		return nil, err
	}
	c := &JSONClient{
		service:     service,
		endpoint:    endpoint,
		contentType: contentType,
		signer:      signer,
		http:        &http.Client{Timeout: 10 * time.Second},
		Backoff:     200 * time.Millisecond,
	}
	if c.endpoint == "" {
		c.endpoint = a.Endpoints[service]
	}
	if c.endpoint == "" {
		c.endpoint = Endpoint(service, a.Region)
	}
	return c, nil
}

// Attempts bounds the tries of one call: throttling and 5xx are retried, as the SDK's
// standard retryer does.
const Attempts = 3

// Do calls target (e.g. AmazonSSM.GetParameter) with in as the JSON body, retrying what is
// worth retrying with a doubling backoff, and returns the raw answer of a 200.
func (c *JSONClient) Do(ctx context.Context, target string, in any) ([]byte, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	wait := c.Backoff
	for attempt := 1; ; attempt++ {
		raw, retry, err := c.call(ctx, target, body)
		if err == nil || !retry || attempt == Attempts {
			return raw, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (retrying: %w)", err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// call makes one signed request. retry reports whether the failure is worth another try (a
// network error, throttling, or an error of the service's own).
func (c *JSONClient) call(ctx context.Context, target string, body []byte) (raw []byte, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", c.contentType)
	req.Header.Set("X-Amz-Target", target)
	if err := c.signer.Sign(ctx, req, PayloadHash(body), c.service); err != nil {
		return nil, false, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	raw, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, true, err
	}
	if resp.StatusCode != http.StatusOK {
		// An error body is {"__type": "[namespace#]Code", "message": "…"}; it holds no value.
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(raw, &e)
		code := e.Type[strings.LastIndexByte(e.Type, '#')+1:]
		if code == "" {
			code = resp.Status
		}
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || strings.Contains(code, "Throttl")
		return nil, retry, fmt.Errorf("%s: %s", code, e.Message)
	}
	return raw, false, nil
}
