package app

import (
	"context"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/rs/zerolog"
)

// Invocation wraps a Lambda handler so that every line it logs carries the invocation's
// aws_request_id, the id of Lambda's own START and REPORT records. HTTP functions get it from
// internal/httpapi's request middleware instead.
func Invocation[E, R any](h func(context.Context, E) (R, error)) func(context.Context, E) (R, error) {
	return func(ctx context.Context, ev E) (R, error) {
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			ctx = zerolog.Ctx(ctx).With().Str("aws_request_id", lc.AwsRequestID).Logger().WithContext(ctx)
		}
		return h(ctx, ev)
	}
}
