package awsapitest

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
)

// JSON is a fake AWS JSON-protocol service (awsJson1_0 or 1_1, e.g. SSM or SQS): it checks
// each request's X-Amz-Target, Content-Type, session token and SigV4 signature (signed again
// with Creds, as AWS would) and answers with its answer function. Its first Throttle
// requests are answered with a ThrottlingException, as AWS does when a burst of cold starts
// exceeds its rate.
type JSON struct {
	URL      string
	Throttle int

	t           *testing.T
	service     string
	contentType string
	answer      func(target string, body []byte) (status int, out string)
	mu          sync.Mutex
	bodies      [][]byte
}

// NewJSON starts a fake of service (its SigV4 signing name) speaking contentType; it stops
// when t ends.
func NewJSON(t *testing.T, service, contentType string, answer func(target string, body []byte) (status int, out string)) *JSON {
	f := &JSON{t: t, service: service, contentType: contentType, answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *JSON) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if got := r.Header.Get("Content-Type"); got != f.contentType {
		f.t.Errorf("fake %s: Content-Type = %q, want %q", f.service, got, f.contentType)
	}
	if got := r.Header.Get("X-Amz-Security-Token"); got != Creds.SessionToken {
		f.t.Errorf("fake %s: X-Amz-Security-Token = %q, want the role's session token", f.service, got)
	}
	if err := f.checkSigV4(r, raw); err != nil {
		f.t.Errorf("fake %s: %v", f.service, err)
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, raw)
	throttled := len(f.bodies) <= f.Throttle
	f.mu.Unlock()
	w.Header().Set("Content-Type", f.contentType)
	if throttled {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ThrottlingException","message":"Rate exceeded"}`)
		return
	}
	status, out := f.answer(r.Header.Get("X-Amz-Target"), raw)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}

// checkSigV4 checks a request to the fake's service (CheckSigV4).
func (f *JSON) checkSigV4(r *http.Request, body []byte) error { return CheckSigV4(r, body, f.service) }

// CheckSigV4 signs again what arrived (method, host, path, the signed headers, the body's
// hash) with Creds at the request's X-Amz-Date, for service, and compares: a fake's proof that
// the client signs what AWS would check.
func CheckSigV4(r *http.Request, body []byte, service string) error {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+Creds.AccessKeyID+"/") || !strings.Contains(auth, "/"+Creds.Region+"/"+service+"/aws4_request") {
		return fmt.Errorf("request is not SigV4-signed for %s in %s: %q", service, Creds.Region, auth)
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.EscapedPath(), bytes.NewReader(body))
	again.URL.RawQuery = r.URL.RawQuery
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: Creds.AccessKeyID, SecretAccessKey: Creds.SecretAccessKey, SessionToken: Creds.SessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), service, Creds.Region, when); err != nil {
		return err
	}
	if want := again.Header.Get("Authorization"); auth != want {
		return fmt.Errorf("SigV4 signature does not match the request as received:\n got %s\nwant %s", auth, want)
	}
	return nil
}

// Bodies returns the body of every request so far, throttled ones included.
func (f *JSON) Bodies() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

// SSM is a fake of SSM answering GetParameter from a map.
type SSM struct{ *JSON }

// GetParameterInput is what a GetParameter request asks.
type GetParameterInput struct {
	Name           string
	WithDecryption bool
}

// NewSSM starts a fake SSM holding params (name → value); it stops when t ends.
func NewSSM(t *testing.T, params map[string]string) *SSM {
	return &SSM{NewJSON(t, "ssm", "application/x-amz-json-1.1", func(target string, body []byte) (int, string) {
		var in GetParameterInput
		if target != "AmazonSSM.GetParameter" || json.Unmarshal(body, &in) != nil {
			t.Errorf("fake SSM: %s %s, want AmazonSSM.GetParameter", target, body)
			return http.StatusBadRequest, `{"__type":"InvalidAction","message":"not GetParameter"}`
		}
		value, ok := params[in.Name]
		if !ok {
			return http.StatusBadRequest, fmt.Sprintf(`{"__type":"ParameterNotFound","message":"Parameter %s not found."}`, in.Name)
		}
		out, _ := json.Marshal(map[string]any{"Parameter": map[string]any{
			"Name": in.Name, "Type": "SecureString", "Value": value, "Version": 3,
			"ARN": "arn:aws:ssm:eu-west-1:123456789012:parameter" + in.Name,
		}})
		return http.StatusOK, string(out)
	})}
}

// Asked returns every GetParameter request so far.
func (f *SSM) Asked() []GetParameterInput {
	var out []GetParameterInput
	for _, b := range f.Bodies() {
		var in GetParameterInput
		_ = json.Unmarshal(b, &in)
		out = append(out, in)
	}
	return out
}

// SecretsManager is a fake of Secrets Manager holding secrets by ARN: GetSecretValue answers
// from them, PutSecretValue replaces one (an unknown id is ResourceNotFoundException, as AWS
// answers for a secret that does not exist or was deleted).
type SecretsManager struct {
	*JSON
	mu     sync.Mutex
	values map[string]string
}

// NewSecretsManager starts a fake of Secrets Manager holding values (ARN → SecretString); it
// stops when t ends.
func NewSecretsManager(t *testing.T, values map[string]string) *SecretsManager {
	f := &SecretsManager{values: map[string]string{}}
	for k, v := range values {
		f.values[k] = v
	}
	f.JSON = NewJSON(t, "secretsmanager", "application/x-amz-json-1.1", func(target string, body []byte) (int, string) {
		var in struct{ SecretId, SecretString string }
		if json.Unmarshal(body, &in) != nil {
			return http.StatusBadRequest, `{"__type":"InvalidRequestException","message":"not JSON"}`
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		value, ok := f.values[in.SecretId]
		if !ok {
			return http.StatusBadRequest, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`
		}
		switch target {
		case "secretsmanager.GetSecretValue":
			out, _ := json.Marshal(map[string]any{"ARN": in.SecretId, "Name": in.SecretId, "SecretString": value, "VersionId": "v1"})
			return http.StatusOK, string(out)
		case "secretsmanager.PutSecretValue":
			f.values[in.SecretId] = in.SecretString
			out, _ := json.Marshal(map[string]any{"ARN": in.SecretId, "Name": in.SecretId, "VersionId": "v2"})
			return http.StatusOK, string(out)
		}
		t.Errorf("fake Secrets Manager: %s, want GetSecretValue or PutSecretValue", target)
		return http.StatusBadRequest, `{"__type":"InvalidAction","message":"not supported"}`
	})
	return f
}

// Value is the secret id's current SecretString ("" when there is none).
func (f *SecretsManager) Value(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.values[id]
}

// Set makes value the secret id's SecretString, as an operator's put-secret-value would.
func (f *SecretsManager) Set(id, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values[id] = value
}
