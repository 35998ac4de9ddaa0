package app

import (
	"context"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/trace"
)

// Invocation wraps a Lambda handler of a so that every line it logs carries the invocation's
// aws_request_id, the id of Lambda's own START and REPORT records (HTTP functions get it from
// internal/httpapi's request middleware instead), and so that it runs only once a's database
// check passed (App.Ready): a failed check is logged and is the invocation's error.
func Invocation[E, R any](a *App, h func(context.Context, E) (R, error)) func(context.Context, E) (R, error) {
	return func(ctx context.Context, ev E) (R, error) {
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			ctx = zerolog.Ctx(ctx).With().Str("aws_request_id", lc.AwsRequestID).Logger().WithContext(ctx)
		}
		if err := a.Ready(ctx); err != nil {
			zerolog.Ctx(ctx).Error().Str("error", trace.Redact(err.Error())).Msg("invocation refused: the database check failed")
			var none R
			return none, err
		}
		return h(ctx, ev)
	}
}
