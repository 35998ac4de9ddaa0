// Package awsapitest fakes the AWS services Steward calls, for tests: S3 (an httptest server
// that refuses a request whose SigV4 Authorization header or payload hash is malformed, and
// keeps objects in memory) and the JSON-protocol services, SSM, SQS and Secrets Manager
// (fakejson.go), whose requests' signatures CheckSigV4 verifies.
package awsapitest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/config"
)

// Creds are the region and role credentials the fakes expect, as the Lambda runtime would
// set them (the S3 fake checks the key id and region in the credential scope; the JSON fakes
// check the whole signature).
var Creds = config.AWS{Region: "eu-west-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", SessionToken: "session-token"}

var authShape = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDTEST/\d{8}/eu-west-1/s3/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$`)

// S3 is a fake bucket named Bucket, served path-style at URL.
type S3 struct {
	URL, Bucket string
	mu          sync.Mutex
	objects     map[string][]byte
	types       map[string]string
	// Refused counts requests refused for their signature's shape; Puts the objects put.
	Refused, Puts int
}

// NewS3 starts a fake S3 holding bucket; it stops when t ends.
func NewS3(t *testing.T, bucket string) *S3 {
	f := &S3{Bucket: bucket, objects: map[string][]byte{}, types: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *S3) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	sum := sha256.Sum256(body)
	m := authShape.FindStringSubmatch(r.Header.Get("Authorization"))
	signed := ""
	if m != nil {
		signed = ";" + m[1] + ";"
	}
	if m == nil || !strings.Contains(signed, ";host;") || !strings.Contains(signed, ";x-amz-date;") ||
		!strings.Contains(signed, ";x-amz-content-sha256;") || r.Header.Get("X-Amz-Date") == "" ||
		r.Header.Get("X-Amz-Content-Sha256") != hex.EncodeToString(sum[:]) {
		f.mu.Lock()
		f.Refused++
		f.mu.Unlock()
		http.Error(w, "<Error><Code>SignatureDoesNotMatch</Code></Error>", http.StatusForbidden)
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, "/"+f.Bucket+"/")
	if !ok || key == "" {
		http.Error(w, "<Error><Code>NoSuchBucket</Code></Error>", http.StatusNotFound)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		f.objects[key], f.types[key] = body, r.Header.Get("Content-Type")
		f.Puts++
	case http.MethodGet:
		data, ok := f.objects[key]
		if !ok {
			http.Error(w, "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>", http.StatusNotFound)
			return
		}
		_, _ = w.Write(data)
	case http.MethodDelete:
		delete(f.objects, key)
		delete(f.types, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// Objects returns a copy of the stored objects by key.
func (f *S3) Objects() map[string][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string][]byte, len(f.objects))
	for k, v := range f.objects {
		out[k] = v
	}
	return out
}

// ContentType is the Content-Type key was put with.
func (f *S3) ContentType(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.types[key]
}
