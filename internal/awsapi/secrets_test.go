package awsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/config"
)

const appSecret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:steward-app-AbCdEf"

// TestSecretsByReference: a reference is an SSM parameter name or a Secrets Manager ARN, and
// each goes to its own service (signed for it, at the endpoint config gives); a put replaces
// the secret; a missing one names itself and AWS's reason, never a value.
func TestSecretsByReference(t *testing.T) {
	t.Parallel()
	ssm := awsapitest.NewSSM(t, map[string]string{"/steward/database-url": "postgres://admin:pw@db/postgres"})
	sm := awsapitest.NewSecretsManager(t, map[string]string{appSecret: `{"username":"steward_app","password":"pw"}`})
	a := awsapitest.Creds
	a.Endpoints = map[string]string{"ssm": ssm.URL + "/", "secretsmanager": sm.URL + "/"}
	s := awsapi.NewSecrets(a)
	s.Backoff = time.Millisecond
	ctx := context.Background()
	if v, err := s.Get(ctx, "/steward/database-url"); err != nil || v != "postgres://admin:pw@db/postgres" {
		t.Errorf("SSM parameter: %q, %v", v, err)
	}
	if v, err := s.Get(ctx, appSecret); err != nil || !strings.Contains(v, "steward_app") {
		t.Errorf("secret: %q, %v", v, err)
	}
	if err := s.Put(ctx, appSecret, `{"url":"postgres://x"}`); err != nil || sm.Value(appSecret) != `{"url":"postgres://x"}` {
		t.Errorf("put: %v, now %q", err, sm.Value(appSecret))
	}
	_, err := s.Get(ctx, "/steward/missing")
	if err == nil || !strings.Contains(err.Error(), "SSM parameter /steward/missing") || !strings.Contains(err.Error(), "ParameterNotFound") {
		t.Errorf("missing parameter: %v", err)
	}
	missing := strings.Replace(appSecret, "app", "gone", 1)
	_, err = s.Get(ctx, missing)
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "ResourceNotFoundException") || strings.Contains(err.Error(), "pw") {
		t.Errorf("missing secret: %v", err)
	}
	if len(ssm.Asked()) != 2 || len(sm.Bodies()) != 3 {
		t.Errorf("SSM asked %d times, Secrets Manager %d; want 2 and 3", len(ssm.Asked()), len(sm.Bodies()))
	}
	if _, err := awsapi.NewSecrets(config.AWS{Region: "eu-west-1"}).Get(ctx, appSecret); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("without credentials: %v", err)
	}
}

// TestFunctionInvoke: Invoke posts the payload to the function's invocations path, signed
// for lambda; what the function returned comes back, an error it returned is a
// FunctionError with its message, and a service error names the function and AWS's code.
func TestFunctionInvoke(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := awsapitest.CheckSigV4(r, body, "lambda"); err != nil {
			t.Errorf("fake Lambda: %v", err)
		}
		if r.Header.Get("X-Amz-Invocation-Type") != "RequestResponse" {
			t.Errorf("invocation type %q", r.Header.Get("X-Amz-Invocation-Type"))
		}
		var in struct{ Action string }
		_ = json.Unmarshal(body, &in)
		switch {
		case r.URL.EscapedPath() == "/2015-03-31/functions/nope/invocations":
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.awslambda/")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"Type":"User","message":"Function not found: arn:aws:lambda:eu-west-1:123456789012:function:nope"}`)
		case r.URL.EscapedPath() != "/2015-03-31/functions/steward-migrate%3Alive/invocations":
			t.Errorf("path %q", r.URL.EscapedPath())
		case in.Action == "fail":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			_, _ = io.WriteString(w, `{"errorMessage":"the owner name is taken","errorType":"errorString"}`)
		default:
			_, _ = io.WriteString(w, `{"ok":true}`)
		}
	}))
	defer srv.Close()
	a := awsapitest.Creds
	a.Endpoints = map[string]string{"lambda": srv.URL + "/"}
	f, err := awsapi.NewFunction(a, "steward-migrate:live")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if out, err := f.Invoke(ctx, []byte(`{"action":"migrate"}`)); err != nil || string(out) != `{"ok":true}` {
		t.Errorf("invoke: %s, %v", out, err)
	}
	_, err = f.Invoke(ctx, []byte(`{"action":"fail"}`))
	var fe *awsapi.FunctionError
	if !errors.As(err, &fe) || fe.Message != "the owner name is taken" {
		t.Errorf("a function error: %v", err)
	}
	nope, _ := awsapi.NewFunction(a, "nope")
	if _, err := nope.Invoke(ctx, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "invoke nope: ResourceNotFoundException: Function not found") {
		t.Errorf("no such function: %v", err)
	}
	if _, err := awsapi.NewFunction(config.AWS{}, "steward-migrate"); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Errorf("without credentials: %v", err)
	}
}
