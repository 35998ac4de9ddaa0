package awsapi

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/config"
)

// Bucket is one S3 bucket's objects: PUT, GET and DELETE, signed with SigV4 (the document
// bucket, STEWARD_DOCUMENT_BUCKET). It implements document.Objects.
type Bucket struct {
	name   string
	base   string // the URL an object's escaped key is appended to
	signer *Signer
	http   *http.Client
}

// NewBucket makes a client of bucket name. endpoint empty means AWS
// (https://<bucket>.s3.<region>.amazonaws.com/<key>, virtual-hosted); otherwise it is an
// S3-compatible server's URL, addressed path-style (<endpoint>/<bucket>/<key>).
func NewBucket(a config.AWS, name, endpoint string) (*Bucket, error) {
	signer, err := NewSigner(a, "the document bucket (STEWARD_DOCUMENT_BUCKET)")
	if err != nil {
		return nil, err
	}
	b := &Bucket{name: name, signer: signer, http: &http.Client{Timeout: 60 * time.Second}}
	if endpoint == "" {
		b.base = strings.Replace(Endpoint("s3", a.Region), "https://", "https://"+name+".", 1)
	} else {
		b.base = strings.TrimSuffix(endpoint, "/") + "/" + url.PathEscape(name) + "/"
	}
	return b, nil
}

// Put stores data under key.
func (b *Bucket) Put(ctx context.Context, key, contentType string, data []byte) error {
	_, err := b.do(ctx, http.MethodPut, key, contentType, data, http.StatusOK)
	return err
}

// Get returns the object under key; a missing one is an error.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, error) {
	return b.do(ctx, http.MethodGet, key, "", nil, http.StatusOK)
}

// Delete deletes the object under key (S3 answers 204 whether or not it existed).
func (b *Bucket) Delete(ctx context.Context, key string) error {
	_, err := b.do(ctx, http.MethodDelete, key, "", nil, http.StatusNoContent)
	return err
}

// do makes one signed request for key and returns the body of a want answer.
func (b *Bucket) do(ctx context.Context, method, key, contentType string, body []byte, want int) ([]byte, error) {
	segments := strings.Split(key, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+strings.Join(segments, "/"), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	hash := PayloadHash(body)
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := b.signer.Sign(ctx, req, hash, "s3"); err != nil {
		return nil, err
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("s3 %s %s/%s: %w", method, b.name, key, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("s3 %s %s/%s: %w", method, b.name, key, err)
	}
	if resp.StatusCode != want {
		// An error body is <Error><Code>NoSuchKey</Code><Message>…</Message></Error>.
		var e struct{ Code, Message string }
		_ = xml.Unmarshal(raw, &e)
		if e.Code == "" {
			e.Code = resp.Status
		}
		return nil, fmt.Errorf("s3 %s %s/%s: %s %s", method, b.name, key, e.Code, e.Message)
	}
	return raw, nil
}
