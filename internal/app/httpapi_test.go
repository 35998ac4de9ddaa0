package app

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestProxyKeepsCommasInHeaders: a webhook-signature with commas (one or several v1
// signatures) reaches the handler whole, as one value; other headers still arrive.
func TestProxyKeepsCommasInHeaders(t *testing.T) {
	const sig = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1,bm9wZQ=="
	var got http.Header
	h := HTTPAPI(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(http.StatusAccepted)
	}))
	resp, err := h(context.Background(), events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: "/webhooks/wh_x",
		Headers: map[string]string{"webhook-signature": sig, "webhook-id": "msg_1", "content-type": "application/json"},
		Body:    "{}",
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/webhooks/wh_x"},
		},
	})
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("proxy: %d %v", resp.StatusCode, err)
	}
	if v := got.Values("Webhook-Signature"); len(v) != 1 || v[0] != sig {
		t.Errorf("webhook-signature reached the handler as %q, want [%q]", v, sig)
	}
	if got.Get("Webhook-Id") != "msg_1" || got.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", got)
	}
}
