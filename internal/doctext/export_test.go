package doctext

import (
	"context"
	"time"
)

// Sandboxed reads a document in the sandbox and says what that cost: the child's peak
// resident set (0 when it was stopped) and the time.
func Sandboxed(src Source) (Extracted, int64, time.Duration, error) {
	ex, u, err := ProcessReaders.sandboxed(context.Background(), TypeOf(src.Name, src.ContentType), src)
	return ex, u.PeakRSS, u.Wall, err
}

// ExtractHere reads a document in this process (the fuzz targets' way), bounded by ctx.
func ExtractHere(ctx context.Context, src Source) (Extracted, error) {
	return extract(ctx, TypeOf(src.Name, src.ContentType), src)
}
