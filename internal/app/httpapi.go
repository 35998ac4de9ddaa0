package app

import (
	"context"
	"net/http"
	"net/textproto"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// HTTPAPI is the HTTP API (payload 2.0) Lambda handler of h: httpadapter, except that every header
// reaches h as API Gateway sent it. httpadapter splits header values on commas (all but a few
// singletons), so the Standard Webhooks "webhook-signature: v1,<base64>" would reach the
// verifier as "v1" and every valid delivery would be refused. API Gateway has already joined
// repeated headers with commas, so its value is the one a server would have seen.
func HTTPAPI(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	adapter := httpadapter.NewV2(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if raw, ok := r.Context().Value(rawHeaders{}).(map[string]string); ok {
			for k, v := range raw {
				r.Header[textproto.CanonicalMIMEHeaderKey(k)] = []string{v}
			}
		}
		h.ServeHTTP(w, r)
	}))
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return adapter.ProxyWithContext(context.WithValue(ctx, rawHeaders{}, ev.Headers), ev)
	}
}

// rawHeaders is the context key of the event's headers.
type rawHeaders struct{}
