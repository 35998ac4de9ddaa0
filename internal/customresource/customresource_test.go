package customresource_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/customresource"
)

// cloudFormation is a fake response URL: it keeps every answer PUT to it, and refuses the
// first Refuse of them with a 500.
type cloudFormation struct {
	URL    string
	Refuse int
	mu     sync.Mutex
	got    []customresource.Response
	tries  int
}

func newCloudFormation(t *testing.T) *cloudFormation {
	cf := &cloudFormation{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cf.mu.Lock()
		defer cf.mu.Unlock()
		cf.tries++
		if r.Method != http.MethodPut || r.Header.Get("Content-Type") != "" {
			t.Errorf("answer: %s with Content-Type %q; want a PUT without one (the URL is presigned without it)", r.Method, r.Header.Get("Content-Type"))
		}
		if cf.tries <= cf.Refuse {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var resp customresource.Response
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Errorf("answer %q: %v", body, err)
		}
		cf.got = append(cf.got, resp)
	}))
	t.Cleanup(srv.Close)
	cf.URL = srv.URL + "/cloudformation-custom-resource-response?X-Amz-Signature=x"
	return cf
}

func (cf *cloudFormation) answers() []customresource.Response {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	return append([]customresource.Response(nil), cf.got...)
}

func request(cf *cloudFormation, typ string) customresource.Request {
	r := customresource.Request{RequestType: typ, ResponseURL: cf.URL, StackID: "arn:aws:cloudformation:eu-west-1:123456789012:stack/steward/x",
		RequestID: "req-1", LogicalResourceID: "Migration", PhysicalResourceID: "steward-database"}
	if typ == customresource.Create {
		r.PhysicalResourceID = "" // CloudFormation sends none: the first answer names it
	}
	return r
}

// TestHandleAnswersEveryPath: CloudFormation gets exactly one answer however the work ends —
// success (with the physical id), an error (one line), a panic — and a refused PUT is tried
// again.
func TestHandleAnswersEveryPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		work   customresource.Work
		status string
		reason string
		id     string
	}{
		{"success", func(context.Context, customresource.Request) (string, error) { return "db-1", nil }, "SUCCESS", "", "db-1"},
		{"an error on lines", func(context.Context, customresource.Request) (string, error) {
			return "", errors.Join(errors.New("the database at db:5432 has no pgvector"), errors.New("second\nline"))
		}, "FAILED", "the database at db:5432 has no pgvector; second; line", "steward-database"},
		{"a panic", func(ctx context.Context, _ customresource.Request) (string, error) {
			customresource.Step(ctx, "migrating")
			panic("a bug in the work")
		}, "FAILED", "the function failed unexpectedly while migrating: a bug in the work", "steward-database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cf := newCloudFormation(t)
			cf.Refuse = 1
			if err := customresource.Handle(context.Background(), http.DefaultClient, request(cf, customresource.Update), c.work); err != nil {
				t.Fatal(err)
			}
			got := cf.answers()
			if len(got) != 1 || got[0].Status != c.status || got[0].Reason != c.reason || got[0].PhysicalResourceID != c.id ||
				got[0].RequestID != "req-1" || got[0].LogicalResourceID != "Migration" || !strings.HasPrefix(got[0].StackID, "arn:aws:cloudformation:") {
				t.Errorf("answers %+v; want one %s with reason %q and physical id %s", got, c.status, c.reason, c.id)
			}
		})
	}
}

// TestHandleAnswersBeforeTheDeadline: work still running Margin before the invocation's
// deadline is given up on: CloudFormation hears FAILED, naming the last step, while the
// function still has time to say it.
func TestHandleAnswersBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	cf := newCloudFormation(t)
	deadline := time.Now().Add(customresource.Margin + 1500*time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	err := customresource.Handle(ctx, http.DefaultClient, request(cf, customresource.Create), func(ctx context.Context, _ customresource.Request) (string, error) {
		customresource.Step(ctx, "connecting to the database at db.example.com:5432")
		<-release // ignores ctx, as a stuck call would
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := cf.answers()
	if len(got) != 1 || got[0].Status != "FAILED" || !strings.Contains(got[0].Reason, "timed out after") ||
		!strings.Contains(got[0].Reason, "while connecting to the database at db.example.com:5432") || got[0].PhysicalResourceID != "Migration" {
		t.Fatalf("answers %+v; want FAILED, timed out, naming the step, with the logical id as a Create's physical id", got)
	}
	if left := time.Until(deadline); left < customresource.Margin/2 {
		t.Errorf("answered %s before the deadline; want about Margin (%s)", left, customresource.Margin)
	}
}

// TestHandleWithoutResponseURL: a request nobody can be told about is the invocation's
// error (Lambda retries it), and the work never runs.
func TestHandleWithoutResponseURL(t *testing.T) {
	t.Parallel()
	ran := false
	err := customresource.Handle(context.Background(), http.DefaultClient, customresource.Request{RequestType: customresource.Create},
		func(context.Context, customresource.Request) (string, error) { ran = true; return "", nil })
	if err == nil || ran {
		t.Fatalf("err %v, ran %v", err, ran)
	}
}
