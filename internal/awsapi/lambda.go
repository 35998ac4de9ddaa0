package awsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/config"
)

// Function invokes one Lambda function synchronously (Invoke, RequestResponse) with the
// caller's credentials: `steward remote` reaches the migrate function this way, so an
// operator needs AWS credentials, not a connection to the database.
type Function struct {
	name     string
	endpoint string
	signer   *Signer
	http     *http.Client
}

// NewFunction makes a client of the function name (a name or an ARN, optionally
// :qualified) at a.Endpoints' lambda endpoint, else the region's.
func NewFunction(a config.AWS, name string) (*Function, error) {
	signer, err := NewSigner(a, "invoking the function "+name)
	if err != nil {
		return nil, err
	}
	endpoint := a.Endpoints["lambda"]
	if endpoint == "" {
		endpoint = Endpoint("lambda", a.Region)
	}
	// A migration of a cold Aurora Serverless cluster takes a while; the function's own
	// timeout (15 minutes at most) bounds the call.
	return &Function{name: name, endpoint: endpoint, signer: signer, http: &http.Client{Timeout: 16 * time.Minute}}, nil
}

// FunctionError is the error a function returned (its errorMessage), as opposed to a
// failure to invoke it.
type FunctionError struct{ Message string }

func (e *FunctionError) Error() string { return e.Message }

// Invoke calls the function with payload and returns what it returned. An error the function
// returned is a *FunctionError with its message; anything else (no such function, no
// permission) names the function.
func (f *Function) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	// An ARN's or a qualifier's colons are escaped too, as the SDK does.
	u := f.endpoint + "2015-03-31/functions/" + strings.ReplaceAll(url.PathEscape(f.name), ":", "%3A") + "/invocations"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amz-Invocation-Type", "RequestResponse")
	if err := f.signer.Sign(ctx, req, PayloadHash(payload), "lambda"); err != nil {
		return nil, err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", f.name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 6<<20)) // Invoke's response limit
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", f.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		// A service error: {"Type": "User", "message": "Function not found: …"}, its code in
		// X-Amzn-ErrorType.
		var e struct {
			Message  string `json:"message"`
			Message2 string `json:"Message"`
		}
		_ = json.Unmarshal(raw, &e)
		code, _, _ := strings.Cut(resp.Header.Get("X-Amzn-ErrorType"), ":")
		if code == "" {
			code = resp.Status
		}
		return nil, fmt.Errorf("invoke %s: %s: %s", f.name, code, e.Message+e.Message2)
	}
	// Lambda marks a function's error with X-Amz-Function-Error; the Runtime Interface
	// Emulator (sam local, tests) answers the same payload without it.
	var e struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}
	isError := json.Unmarshal(raw, &e) == nil && e.ErrorMessage != "" && e.ErrorType != ""
	if resp.Header.Get("X-Amz-Function-Error") != "" || isError {
		if e.ErrorMessage == "" {
			e.ErrorMessage = fmt.Sprintf("the function %s failed: %.300s", f.name, raw)
		}
		return nil, &FunctionError{Message: e.ErrorMessage}
	}
	return raw, nil
}
