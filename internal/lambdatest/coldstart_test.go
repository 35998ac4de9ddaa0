//go:build unix

package lambdatest

import (
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stewardhq/steward/internal/testdb"
)

// initReport is the emulator's record of a function's init phase.
var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// BenchmarkColdStart measures a cold start of the api bootstrap under the Runtime Interface
// Emulator, against the dev PostgreSQL: each iteration starts a fresh emulator and function
// and sends GET /healthz. init-ms is the emulator's INIT REPORT (the process start, reading
// the configuration, both pools connecting and checking their roles, building the App);
// first-ms is the first request, init included, as the client sees it. `make bench-lambda`.
func BenchmarkColdStart(b *testing.B) {
	rie := findRIE(b)
	db := testdb.New(b)
	env := []string{"APP_DATABASE_URL=" + db.AppURL, "DOOR_DATABASE_URL=" + db.DoorURL, "AWS_LAMBDA_FUNCTION_TIMEOUT=30"}
	bin := buildBootstraps(b, runtime.GOARCH, "functions/api")["functions/api"]
	health := events.APIGatewayV2HTTPRequest{RawPath: "/healthz",
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodGet, Path: "/healthz"}}}
	var initMs, firstMs float64
	b.ResetTimer()
	for i := range b.N {
		e := startRIE(b, rie, "api-"+strconv.Itoa(i), bin, env)
		start := time.Now()
		if status, body := e.invokeHTTPAPI(b, health); status != http.StatusOK {
			b.Fatalf("healthz: %d %s", status, body)
		}
		firstMs += float64(time.Since(start).Microseconds()) / 1000
		m := initReport.FindStringSubmatch(e.logs.String())
		if m == nil {
			b.Fatalf("no INIT REPORT in the emulator's log:\n%s", e.logs.String())
		}
		ms, _ := strconv.ParseFloat(m[1], 64)
		initMs += ms
	}
	b.ReportMetric(initMs/float64(b.N), "init-ms")
	b.ReportMetric(firstMs/float64(b.N), "first-ms")
}
