package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/stewardhq/steward/internal/config"
)

// fakeSSM is an httptest fake of the SSM JSON API (awsJson1_1): it answers GetParameter
// from a map and records what it was asked. Its first `throttle` requests are answered with
// a ThrottlingException, as SSM does when a burst of cold starts exceeds its rate.
type fakeSSM struct {
	t        *testing.T
	srv      *httptest.Server
	params   map[string]string
	throttle int

	mu    sync.Mutex
	asked []ssmRequest
}

type ssmRequest struct {
	Name           string
	WithDecryption bool
}

func newFakeSSM(t *testing.T, params map[string]string) *fakeSSM {
	f := &fakeSSM{t: t, params: params}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSSM) serve(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("X-Amz-Target"); got != "AmazonSSM.GetParameter" {
		f.t.Errorf("X-Amz-Target = %q, want AmazonSSM.GetParameter", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/x-amz-json-1.1" {
		f.t.Errorf("Content-Type = %q", got)
	}
	if got := r.Header.Get("Authorization"); !strings.HasPrefix(got, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(got, "/eu-west-1/ssm/aws4_request") {
		f.t.Errorf("request is not SigV4-signed for ssm in eu-west-1: %q", got)
	}
	if got := r.Header.Get("X-Amz-Security-Token"); got != testAWS.SessionToken {
		f.t.Errorf("X-Amz-Security-Token = %q, want the role's session token", got)
	}
	raw, _ := io.ReadAll(r.Body)
	if err := checkSigV4(r, raw); err != nil {
		f.t.Error(err)
	}
	var req ssmRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		f.t.Errorf("decode %s: %v", raw, err)
	}
	f.mu.Lock()
	f.asked = append(f.asked, req)
	throttled := len(f.asked) <= f.throttle
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if throttled {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"ThrottlingException","message":"Rate exceeded"}`)
		return
	}
	value, ok := f.params[req.Name]
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"ParameterNotFound","message":"Parameter %s not found."}`, req.Name)
		return
	}
	out, _ := json.Marshal(map[string]any{"Parameter": map[string]any{
		"Name": req.Name, "Type": "SecureString", "Value": value, "Version": 3,
		"ARN": "arn:aws:ssm:eu-west-1:123456789012:parameter" + req.Name,
	}})
	w.Write(out)
}

// checkSigV4 signs again what arrived (method, host, path, the signed headers, the body's
// hash) with testAWS at the request's X-Amz-Date, as SSM would, and compares signatures.
func checkSigV4(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: testAWS.AccessKeyID, SecretAccessKey: testAWS.SecretAccessKey, SessionToken: testAWS.SessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "ssm", testAWS.Region, when); err != nil {
		return err
	}
	if want := again.Header.Get("Authorization"); auth != want {
		return fmt.Errorf("SigV4 signature does not match the request as received:\n got %s\nwant %s", auth, want)
	}
	return nil
}

func (f *fakeSSM) requests() []ssmRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ssmRequest(nil), f.asked...)
}

// settings points the SSM client at the fake.
func (f *fakeSSM) settings() ssmSettings {
	return ssmSettings{endpoint: f.srv.URL, backoff: time.Millisecond}
}

// testAWS is the region and role credentials the tests' Lambda runtime would set.
var testAWS = config.AWS{Region: "eu-west-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "not-a-secret", SessionToken: "session-token"}

func TestResolveSecrets(t *testing.T) {
	t.Parallel()
	params := map[string]string{
		"/steward/door-database-url": "postgres://steward_door:pw1@db.internal:5432/steward",
		"/steward/app-database-url":  "postgres://steward_app:pw2@db.internal:5432/steward",
		"/steward/gemini-api-key":    "AIza-from-ssm",
		"/steward/empty":             "",
	}
	tests := []struct {
		name    string
		in      config.Config
		want    config.Config // the three secrets
		asked   []string
		wantErr []string // substrings of the error
	}{
		{
			name: "every secret from SSM, decrypted",
			in: config.Config{DoorDatabaseURLParam: "/steward/door-database-url", AppDatabaseURLParam: "/steward/app-database-url",
				GeminiAPIKeyParam: "/steward/gemini-api-key"},
			want: config.Config{DoorDatabaseURL: params["/steward/door-database-url"], AppDatabaseURL: params["/steward/app-database-url"],
				GeminiAPIKey: "AIza-from-ssm"},
			asked: []string{"/steward/door-database-url", "/steward/app-database-url", "/steward/gemini-api-key"},
		},
		{
			name:  "a parameter name wins over the environment; unnamed secrets keep theirs",
			in:    config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y", GeminiAPIKey: "env-key", GeminiAPIKeyParam: "/steward/gemini-api-key"},
			want:  config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y", GeminiAPIKey: "AIza-from-ssm"},
			asked: []string{"/steward/gemini-api-key"},
		},
		{
			name: "no names: AWS is never asked",
			in:   config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y"},
			want: config.Config{DoorDatabaseURL: "postgres://local/x", AppDatabaseURL: "postgres://local/y"},
		},
		{
			name:    "a missing parameter names itself and its variable",
			in:      config.Config{DoorDatabaseURLParam: "/steward/nope", AppDatabaseURLParam: "/steward/app-database-url"},
			asked:   []string{"/steward/nope", "/steward/app-database-url"},
			wantErr: []string{"/steward/nope", "DOOR_DATABASE_URL_SSM", "ParameterNotFound"},
		},
		{
			name:    "an empty parameter is an error, not an empty secret",
			in:      config.Config{GeminiAPIKeyParam: "/steward/empty"},
			asked:   []string{"/steward/empty"},
			wantErr: []string{"/steward/empty", "GEMINI_API_KEY_SSM", "empty"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeSSM(t, params)
			in := tt.in
			in.AWS = testAWS
			got, err := resolveSecrets(context.Background(), in, fake.settings())
			var names []string
			for _, r := range fake.requests() {
				if !r.WithDecryption {
					t.Errorf("GetParameter %s without WithDecryption: SecureStrings would come back encrypted", r.Name)
				}
				names = append(names, r.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.asked, ",") {
				t.Errorf("asked SSM for %v, want %v", names, tt.asked)
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatal("no error")
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				for _, v := range params {
					if v != "" && strings.Contains(err.Error(), v) {
						t.Errorf("error %q leaks a secret value", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.DatabaseURL != tt.want.DatabaseURL || got.AppDatabaseURL != tt.want.AppDatabaseURL || got.GeminiAPIKey != tt.want.GeminiAPIKey {
				t.Errorf("secrets = %q %q %q, want %q %q %q", got.DatabaseURL, got.AppDatabaseURL, got.GeminiAPIKey,
					tt.want.DatabaseURL, tt.want.AppDatabaseURL, tt.want.GeminiAPIKey)
			}
		})
	}
}

// TestResolveTelegramSecret: STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM names the Telegram
// callback's secret (template.yaml's TelegramWebhookSecretParameter); a value that is not a
// valid secret_token fails the start without quoting it.
func TestResolveTelegramSecret(t *testing.T) {
	t.Parallel()
	fake := newFakeSSM(t, map[string]string{"/steward/telegram": "tg_secret-123", "/steward/bad": "not valid!"})
	got, err := resolveSecrets(context.Background(), config.Config{AWS: testAWS, TelegramWebhookSecretParam: "/steward/telegram"}, fake.settings())
	if err != nil || got.TelegramWebhookSecret != "tg_secret-123" {
		t.Fatalf("resolve = %q, %v; want the parameter's value", got.TelegramWebhookSecret, err)
	}
	got, err = resolveSecrets(context.Background(), config.Config{AWS: testAWS, TelegramWebhookSecretParam: "/steward/bad"}, fake.settings())
	if err == nil || !strings.Contains(err.Error(), "/steward/bad") || strings.Contains(err.Error(), "not valid!") || got.TelegramWebhookSecret != "" {
		t.Fatalf("resolve an invalid secret = %q, %v; want an error naming the parameter, not the value", got.TelegramWebhookSecret, err)
	}
}

// TestResolveSecretsRetriesThrottling: a burst of cold starts is throttled by SSM; a throttled
// GetParameter is tried again (up to awsAttempts), not a failed cold start.
func TestResolveSecretsRetriesThrottling(t *testing.T) {
	t.Parallel()
	fake := newFakeSSM(t, map[string]string{"/steward/gemini-api-key": "AIza-from-ssm"})
	fake.throttle = awsAttempts - 1
	got, err := resolveSecrets(context.Background(), config.Config{AWS: testAWS, GeminiAPIKeyParam: "/steward/gemini-api-key"}, fake.settings())
	if err != nil {
		t.Fatal(err)
	}
	if got.GeminiAPIKey != "AIza-from-ssm" || len(fake.requests()) != awsAttempts {
		t.Errorf("key %q after %d requests, want the parameter's value after %d", got.GeminiAPIKey, len(fake.requests()), awsAttempts)
	}

	fake = newFakeSSM(t, map[string]string{"/steward/gemini-api-key": "AIza-from-ssm"})
	fake.throttle = awsAttempts
	_, err = resolveSecrets(context.Background(), config.Config{AWS: testAWS, GeminiAPIKeyParam: "/steward/gemini-api-key"}, fake.settings())
	if err == nil || !strings.Contains(err.Error(), "ThrottlingException") || len(fake.requests()) != awsAttempts {
		t.Errorf("throttled %d times: error %v after %d requests, want ThrottlingException after %d", awsAttempts, err, len(fake.requests()), awsAttempts)
	}
}

// TestResolveSecretsNeedsCredentials: a parameter name without the AWS_* variables Lambda
// sets fails before any request, naming what is missing.
func TestResolveSecretsNeedsCredentials(t *testing.T) {
	t.Parallel()
	fake := newFakeSSM(t, nil)
	_, err := resolveSecrets(context.Background(), config.Config{AppDatabaseURLParam: "/steward/app-database-url", AWS: config.AWS{Region: "eu-west-1"}}, fake.settings())
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"APP_DATABASE_URL_SSM", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	if n := len(fake.requests()); n != 0 {
		t.Errorf("SSM was asked %d times without credentials", n)
	}
}
