package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/stewardhq/steward/internal/config"
)

// ssmSettings adjust the SSM client; tests point it at a fake endpoint.
type ssmSettings struct {
	// endpoint replaces https://ssm.<region>.amazonaws.com.
	endpoint string
	// backoff is the wait before the first retry (doubled for each next one); 0: 200ms.
	backoff time.Duration
}

// ssmSecret is one value that may come from an SSM parameter instead of the environment.
type ssmSecret struct {
	env   string  // the environment variable the value otherwise comes from
	param string  // the SSM parameter name; empty: keep the environment's value
	dst   *string // where the value goes
}

// resolveSecrets replaces each secret whose *_SSM parameter name is set with the
// parameter's decrypted value (GetParameter WithDecryption, so SecureStrings work). Nothing
// is asked of AWS when no name is set, which is the local case. Values never appear in
// errors or logs; names do.
func resolveSecrets(ctx context.Context, cfg config.Config, s ssmSettings) (config.Config, error) {
	var secretKey string
	secrets := []ssmSecret{
		{"DOOR_DATABASE_URL", cfg.DoorDatabaseURLParam, &cfg.DoorDatabaseURL},
		{"APP_DATABASE_URL", cfg.AppDatabaseURLParam, &cfg.AppDatabaseURL},
		{"GEMINI_API_KEY", cfg.GeminiAPIKeyParam, &cfg.GeminiAPIKey},
		{"STEWARD_SECRET_KEY", cfg.SecretKeyParam, &secretKey},
	}
	var wanted []ssmSecret
	for _, sc := range secrets {
		if sc.param != "" {
			wanted = append(wanted, sc)
		}
	}
	if len(wanted) == 0 {
		return cfg, nil
	}
	client, err := newSSMClient(cfg.AWS, s)
	if err != nil {
		return cfg, fmt.Errorf("%s_SSM is set: %w", wanted[0].env, err)
	}
	var errs []error
	for _, sc := range wanted {
		value, err := client.getParameter(ctx, sc.param)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("read %s from SSM parameter %s (%s_SSM): %w", sc.env, sc.param, sc.env, err))
		case value == "":
			errs = append(errs, fmt.Errorf("SSM parameter %s (%s_SSM) is empty", sc.param, sc.env))
		default:
			*sc.dst = value
		}
	}
	if secretKey != "" {
		k, err := config.DecodeKey(secretKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("STEWARD_SECRET_KEY from SSM parameter %s %w", cfg.SecretKeyParam, err))
		}
		cfg.SecretKey = k
	}
	return cfg, errors.Join(errs...)
}

// ssmClient calls SSM's GetParameter over its JSON API (awsJson1_1), signed with the AWS SDK's
// SigV4 signer. It is not the SDK's service/ssm client, which brings every SSM operation and
// the SDK's credential chain into each Lambda bootstrap (3.5 MB of the 20 MB each may weigh,
// see internal/lambdatest) for this one call at cold start.
type ssmClient struct {
	endpoint string
	region   string
	creds    aws.Credentials
	signer   *v4.Signer
	http     *http.Client
	backoff  time.Duration
}

// ssmAttempts bounds the tries of one GetParameter: throttling and 5xx are retried, as the
// SDK's standard retryer does, within the cold start's openTimeout.
const ssmAttempts = 3

func newSSMClient(a config.AWS, s ssmSettings) (*ssmClient, error) {
	var missing []string
	for _, v := range []struct{ name, value string }{
		{"AWS_REGION", a.Region}, {"AWS_ACCESS_KEY_ID", a.AccessKeyID}, {"AWS_SECRET_ACCESS_KEY", a.SecretAccessKey},
	} {
		if v.value == "" {
			missing = append(missing, v.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("reading SSM needs AWS credentials; not set: %s (Lambda sets them; elsewhere: eval \"$(aws configure export-credentials --format env)\" and export AWS_REGION)",
			strings.Join(missing, ", "))
	}
	c := &ssmClient{
		endpoint: s.endpoint,
		region:   a.Region,
		creds:    aws.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, SessionToken: a.SessionToken},
		signer:   v4.NewSigner(),
		http:     &http.Client{Timeout: 10 * time.Second},
		backoff:  s.backoff,
	}
	if c.endpoint == "" {
		domain := "amazonaws.com"
		if strings.HasPrefix(a.Region, "cn-") {
			domain = "amazonaws.com.cn"
		}
		c.endpoint = "https://ssm." + a.Region + "." + domain + "/"
	}
	if c.backoff == 0 {
		c.backoff = 200 * time.Millisecond
	}
	return c, nil
}

// getParameter returns the decrypted value of the parameter name.
func (c *ssmClient) getParameter(ctx context.Context, name string) (string, error) {
	body, err := json.Marshal(struct {
		Name           string
		WithDecryption bool
	}{name, true})
	if err != nil {
		return "", err
	}
	wait := c.backoff
	for attempt := 1; ; attempt++ {
		value, retry, err := c.call(ctx, body)
		if err == nil || !retry || attempt == ssmAttempts {
			return value, err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w (retrying: %w)", err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// call makes one signed GetParameter request. retry reports whether the failure is worth
// another try (a network error, throttling, or an error of SSM's own).
func (c *ssmClient) call(ctx context.Context, body []byte) (value string, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AmazonSSM.GetParameter")
	sum := sha256.Sum256(body)
	if err := c.signer.SignHTTP(ctx, c.creds, req, hex.EncodeToString(sum[:]), "ssm", c.region, time.Now()); err != nil {
		return "", false, fmt.Errorf("sign the request: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", true, err
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
		return "", retry, fmt.Errorf("%s: %s", code, e.Message)
	}
	var out struct {
		Parameter *struct{ Value string }
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Parameter == nil {
		// Never the body: it may hold the secret.
		return "", false, errors.New("SSM answered GetParameter with no parameter")
	}
	return out.Parameter.Value, false, nil
}
