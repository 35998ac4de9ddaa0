package lambdatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/cloudformation/global"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/openaiapi"
)

// repoRoot is the module root, where template.yaml lives.
const repoRoot = "../.."

// functionURLOnly are routes served only through the chat function's Function URL (which
// serves the whole router), not through an HTTP API route of their own.
var functionURLOnly = []string{"POST /v1/chat", "POST /v1/chat/completions"}

// parseTemplate parses template.yaml once: goformation's YAML tag registry is global and not
// safe for concurrent use, so parallel tests share one parse (and only read it).
// goformation resolves intrinsics as it goes: a Ref to a parameter becomes the parameter's
// default, a false !If with AWS::NoValue disappears, and a GetAtt becomes null — so the tests
// see the template as deployed with default parameters.
// goformation's model of AWS::Serverless::Function predates LoggingConfig and
// AutoPublishAliasAllProperties and refuses unknown fields, so both are dropped before it
// parses; TestTemplateOperations checks LoggingConfig on the raw YAML, and
// TestTemplateEveryResource the migrate function's AutoPublishAliasAllProperties.
var parseTemplate = sync.OnceValues(func() (*cloudformation.Template, error) { return parseWith(nil) })

// parseMu serializes goformation's parses (its YAML tag registry is global).
var parseMu sync.Mutex

// parseWith parses template.yaml with options (nil: the parameters' defaults).
func parseWith(options *intrinsics.ProcessorOptions) (*cloudformation.Template, error) {
	parseMu.Lock()
	defer parseMu.Unlock()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	for _, fn := range resourcesOf(&doc, "AWS::Serverless::Function") {
		if props := mapValue(fn, "Properties"); props != nil {
			deleteKey(props, "LoggingConfig")
			deleteKey(props, "AutoPublishAliasAllProperties")
		}
	}
	if options != nil && options.EvaluateConditions && len(doc.Content) > 0 {
		// goformation evaluates a resource's or an output's Condition key into the resource
		// itself: drop the outputs and the resources' conditions.
		deleteKey(doc.Content[0], "Outputs")
		if res := mapValue(doc.Content[0], "Resources"); res != nil {
			for i := 1; i < len(res.Content); i += 2 {
				deleteKey(res.Content[i], "Condition")
			}
		}
	}
	if raw, err = yaml.Marshal(&doc); err != nil {
		return nil, err
	}
	if options != nil {
		return goformation.ParseYAMLWithOptions(raw, options)
	}
	return goformation.ParseYAML(raw)
}

// openTemplate returns the parsed template and its Globals.Function.
func openTemplate(t *testing.T) (*cloudformation.Template, *global.Function) {
	t.Helper()
	tpl, err := parseTemplate()
	if err != nil {
		t.Fatalf("parse template.yaml: %v", err)
	}
	if len(tpl.GetAllServerlessFunctionResources()) == 0 {
		t.Fatal("template.yaml declares no AWS::Serverless::Function")
	}
	g, err := tpl.GetServerlessGlobalFunction()
	if err != nil {
		g = &global.Function{}
	}
	return tpl, g
}

// effective is a function property: the function's own value, else the Globals' one.
func effective[T any](own, fromGlobals *T) (T, bool) {
	switch {
	case own != nil:
		return *own, true
	case fromGlobals != nil:
		return *fromGlobals, true
	}
	var zero T
	return zero, false
}

func TestTemplateFunctions(t *testing.T) {
	t.Parallel()
	tpl, g := openTemplate(t)
	for name, fn := range tpl.GetAllServerlessFunctionResources() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if rt, _ := effective(fn.Runtime, g.Runtime); rt != "provided.al2023" {
				t.Errorf("Runtime = %q, want provided.al2023", rt)
			}
			arch := fn.Architectures
			if arch == nil && g.Architectures != nil {
				arch = *g.Architectures
			}
			if !slices.Equal(arch, []string{"arm64"}) {
				t.Errorf("Architectures = %v, want [arm64]", arch)
			}
			if h, _ := effective(fn.Handler, g.Handler); h != "bootstrap" {
				t.Errorf("Handler = %q, want bootstrap", h)
			}
			if fn.Role == nil && fn.Policies == nil {
				// goformation turns !GetAtt into null, so check the YAML names a role.
				if !roleDeclared(t, name) {
					t.Errorf("no Role or Policies: the function could not read its secrets")
				}
			}
			if m := fn.AWSCloudFormationMetadata; m["BuildMethod"] != "makefile" || m["ProjectRootDirectory"] != "." || m["ContextPath"] != "." {
				t.Errorf("Metadata = %v, want BuildMethod makefile with ContextPath and ProjectRootDirectory \".\" (the module root, so go.mod and internal/ are in the build)", m)
			}
			dir := codeURI(t, fn)
			if _, err := os.Stat(filepath.Join(repoRoot, dir, "main.go")); err != nil {
				t.Fatalf("CodeUri %s: %v", dir, err)
			}
		})
	}
}

// maxBootstrapBytes caps each function's bootstrap: a cold start loads the whole binary, and
// every byte is paid again by each function that ships it (docs/DEPLOY.md, "The functions").
// Built from the module as it is, they are 31.1–31.3 MB with passkeys' WebAuthn library (2.2 MB),
// mail and calendar's IMAP, SMTP, MIME, CalDAV, iCalendar and RRULE libraries (1.2 MB, with
// the MIME charsets' tables), the skills (0.6 MB: the YAML parser, the archive readers, the
// scanner), run_code's Starlark interpreter (0.9 MB), and voice, two-way Telegram and trading
// (0.6 MB together), and OAuth sign-in (golang.org/x/oauth2), reminders and automations, the
// work spine, delete and export (1.0–1.2 MB together) (docs/ARCHITECTURE.md §11: the Gemini SDK's credential discovery links
// Google's auth stack, gRPC and protobuf, 4.8 MB of them).
const maxBootstrapBytes = 32_000_000

// TestTemplateCodeBuilds builds every function's CodeUri the way `make lambda` and `sam build`
// do (CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc,grpcnotrace, stripped),
// and each bootstrap stays under maxBootstrapBytes.
func TestTemplateCodeBuilds(t *testing.T) {
	t.Parallel()
	tpl, _ := openTemplate(t)
	var dirs []string
	for _, fn := range tpl.GetAllServerlessFunctionResources() {
		dirs = append(dirs, codeURI(t, fn))
	}
	for dir, bin := range buildBootstraps(t, "arm64", dirs...) {
		fi, err := os.Stat(bin)
		switch {
		case err != nil || fi.Size() == 0:
			t.Errorf("%s: no bootstrap built (%v)", dir, err)
		case fi.Size() > maxBootstrapBytes:
			t.Errorf("%s: bootstrap is %.1f MB, over the %.1f MB limit", dir, float64(fi.Size())/1e6, float64(maxBootstrapBytes)/1e6)
		default:
			t.Logf("%s: bootstrap is %.1f MB", dir, float64(fi.Size())/1e6)
		}
	}
}

// roleDeclared reports whether the function's Role is its own, `!GetAtt <Name>Role.Arn` for
// <Name>Function (docs/DEPLOY.md, Roles), in the raw YAML
// (goformation resolves a GetAtt to null, so the parsed template cannot tell).
func roleDeclared(t *testing.T, function string) bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Properties struct {
				Role yaml.Node `yaml:"Role"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	role := doc.Resources[function].Properties.Role
	want := strings.TrimSuffix(function, "Function") + "Role.Arn"
	return role.Tag == "!GetAtt" && role.Value == want
}

func codeURI(t *testing.T, fn *serverless.Function) string {
	t.Helper()
	if fn.CodeUri == nil || fn.CodeUri.String == nil {
		t.Fatal("CodeUri must be a directory of this repository")
	}
	return filepath.Clean(*fn.CodeUri.String)
}

func TestTemplateChatIsAStreamingFunctionURL(t *testing.T) {
	t.Parallel()
	tpl, _ := openTemplate(t)
	fn, err := tpl.GetServerlessFunctionWithName("ChatFunction")
	if err != nil {
		t.Fatal(err)
	}
	u := fn.FunctionUrlConfig
	if u == nil || u.AuthType != "NONE" || u.InvokeMode == nil || *u.InvokeMode != "RESPONSE_STREAM" {
		t.Fatalf("ChatFunction FunctionUrlConfig = %+v, want AuthType NONE (the router checks API keys) and InvokeMode RESPONSE_STREAM", u)
	}
	if codeURI(t, fn) != "functions/chat" {
		t.Errorf("ChatFunction CodeUri = %s", codeURI(t, fn))
	}
}

// TestTemplateRoutes checks the template against the router both ways: every HTTP API route
// exists in internal/httpapi, and every route of the router is reachable in AWS.
func TestTemplateRoutes(t *testing.T) {
	t.Parallel()
	tpl, _ := openTemplate(t)
	// Every optional face mounted (its routes only are walked): the OpenAI-compatible API.
	router, ok := httpapi.New(httpapi.Deps{OpenAI: &openaiapi.Service{}}).(chi.Routes)
	if !ok {
		t.Fatal("httpapi.New does not return a chi router")
	}
	served := map[string]bool{}
	err := chi.Walk(router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served[method+" "+strings.TrimSuffix(route, "/")] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	deployed := map[string]string{} // route → function
	for name, fn := range tpl.GetAllServerlessFunctionResources() {
		for event, src := range fn.Events {
			if src.Type != "HttpApi" {
				continue
			}
			if src.Properties == nil || src.Properties.HttpApiEvent == nil {
				t.Errorf("%s event %s: no HttpApi properties", name, event)
				continue
			}
			ev := src.Properties.HttpApiEvent
			if ev.Method == nil || ev.Path == nil {
				t.Errorf("%s event %s: HttpApi needs Method and Path (no catch-all routes)", name, event)
				continue
			}
			route := strings.ToUpper(*ev.Method) + " " + *ev.Path
			if prev, dup := deployed[route]; dup {
				t.Errorf("%s is routed to both %s and %s", route, prev, name)
			}
			deployed[route] = name
			if !served[route] {
				t.Errorf("%s event %s: %s is not a route of internal/httpapi", name, event, route)
			}
		}
	}
	if deployed["POST /v1/turns/{id}/confirm"] != "ConfirmFunction" {
		t.Errorf("POST /v1/turns/{id}/confirm goes to %q, want ConfirmFunction", deployed["POST /v1/turns/{id}/confirm"])
	}
	for route := range served {
		if deployed[route] == "" && !slices.Contains(functionURLOnly, route) {
			t.Errorf("router route %s is in no function of template.yaml", route)
		}
	}
	for _, route := range functionURLOnly {
		if !served[route] {
			t.Errorf("%s is not a route of internal/httpapi", route)
		}
	}
}

// lambdaTags are the build tags of `make lambda`: lambda.norpc (aws-lambda-go without the
// net/rpc entry point only the retired go1.x runtime used) and grpcnotrace (see the Makefile).
const lambdaTags = "lambda.norpc,grpcnotrace"

// buildBootstraps builds the main packages in dirs (relative to the module root) as Lambda
// bootstraps for linux/goarch, with the flags of `make lambda`, in one go command so shared
// packages compile once. It returns each dir's <tmp>/<name>/bootstrap.
func buildBootstraps(t testing.TB, goarch string, dirs ...string) map[string]string {
	t.Helper()
	out := t.TempDir()
	args := []string{"build", "-tags", lambdaTags, "-trimpath", "-ldflags", "-s -w", "-o", out + string(filepath.Separator)}
	for _, d := range dirs {
		args = append(args, "./"+filepath.ToSlash(d))
	}
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 GOOS=linux GOARCH=%s go %s: %v\n%s", goarch, strings.Join(args, " "), err, b)
	}
	bins := map[string]string{}
	for _, d := range dirs {
		name := filepath.Base(d)
		if err := os.Mkdir(filepath.Join(out, name+".d"), 0o755); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(out, name+".d", "bootstrap")
		if err := os.Rename(filepath.Join(out, name), bin); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		bins[d] = bin
	}
	return bins
}

// goTool finds the go command that runs this test.
func goTool(t testing.TB) string {
	t.Helper()
	for _, p := range []string{filepath.Join(os.Getenv("GOROOT"), "bin", "go"), "/usr/local/go/bin/go"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(fmt.Errorf("the go command is needed to build the functions: %w", err))
	}
	return p
}

// rawFunctions reads the functions of template.yaml as plain YAML, for what goformation does
// not model (ScheduleV2 events) or resolves away.
func rawFunctions(t *testing.T) map[string]rawFunction {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Type       string      `yaml:"Type"`
			Properties rawFunction `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	out := map[string]rawFunction{}
	for name, r := range doc.Resources {
		if r.Type == "AWS::Serverless::Function" {
			out[name] = r.Properties
		}
	}
	return out
}

// rawFunction is the part of an AWS::Serverless::Function the raw-YAML tests read.
type rawFunction struct {
	CodeUri     string `yaml:"CodeUri"`
	Timeout     int    `yaml:"Timeout"`
	Environment struct {
		Variables map[string]yaml.Node `yaml:"Variables"`
	} `yaml:"Environment"`
	EventInvokeConfig *struct {
		MaximumRetryAttempts     *int `yaml:"MaximumRetryAttempts"`
		MaximumEventAgeInSeconds *int `yaml:"MaximumEventAgeInSeconds"`
	} `yaml:"EventInvokeConfig"`
	Events map[string]struct {
		Type       string `yaml:"Type"`
		Properties struct {
			ScheduleExpression         string `yaml:"ScheduleExpression"`
			ScheduleExpressionTimezone string `yaml:"ScheduleExpressionTimezone"`
			State                      string `yaml:"State"`
			FlexibleTimeWindow         *struct {
				Mode yaml.Node `yaml:"Mode"`
			} `yaml:"FlexibleTimeWindow"`
			Input       string `yaml:"Input"`
			RetryPolicy *struct {
				MaximumRetryAttempts     *int `yaml:"MaximumRetryAttempts"`
				MaximumEventAgeInSeconds *int `yaml:"MaximumEventAgeInSeconds"`
			} `yaml:"RetryPolicy"`
			DeadLetterConfig *struct {
				Type string    `yaml:"Type"`
				Arn  yaml.Node `yaml:"Arn"`
			} `yaml:"DeadLetterConfig"`
		} `yaml:"Properties"`
	} `yaml:"Events"`
}

// TestTemplateSchedulerIsAScheduleV2Tick: functions/scheduler runs on an EventBridge
// Scheduler (ScheduleV2) rule whose input carries the scheduled time — the idempotency key,
// never the execution id — in the shape autonomy.Event decodes (strictly, as the function
// does), with a retry policy and a dead-letter queue.
func TestTemplateSchedulerIsAScheduleV2Tick(t *testing.T) {
	t.Parallel()
	var found bool
	for name, fn := range rawFunctions(t) {
		if filepath.Clean(fn.CodeUri) != "functions/scheduler" {
			continue
		}
		found = true
		if fn.Timeout < 300 {
			t.Errorf("%s Timeout = %d s: a tick runs every due job and the drains; give it minutes", name, fn.Timeout)
		}
		if c := fn.EventInvokeConfig; c == nil || c.MaximumRetryAttempts == nil || c.MaximumEventAgeInSeconds == nil {
			t.Errorf("%s: no EventInvokeConfig bounding Lambda's asynchronous retries of a failed tick", name)
		}
		var ticks int
		for event, ev := range fn.Events {
			if ev.Type != "ScheduleV2" {
				t.Errorf("%s event %s: type %s, want ScheduleV2 (EventBridge Scheduler)", name, event, ev.Type)
				continue
			}
			p := ev.Properties
			if p.ScheduleExpression == "" {
				t.Errorf("%s event %s: no ScheduleExpression", name, event)
			}
			if p.ScheduleExpressionTimezone != "" {
				if _, err := time.LoadLocation(p.ScheduleExpressionTimezone); err != nil {
					t.Errorf("%s event %s: ScheduleExpressionTimezone: %v", name, event, err)
				}
			}
			if w := p.FlexibleTimeWindow; w == nil || w.Mode.Value != "OFF" || w.Mode.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
				t.Errorf("%s event %s: FlexibleTimeWindow.Mode must be the quoted string \"OFF\" (unquoted, YAML 1.1 reads a boolean)", name, event)
			}
			if !strings.Contains(p.Input, "<aws.scheduler.scheduled-time>") || strings.Contains(p.Input, "execution-id") {
				t.Errorf("%s event %s: Input %q must carry <aws.scheduler.scheduled-time> as the idempotency key, not the execution id", name, event, p.Input)
			}
			at := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
			dec := json.NewDecoder(strings.NewReader(strings.ReplaceAll(p.Input, "<aws.scheduler.scheduled-time>", at.Format(time.RFC3339))))
			dec.DisallowUnknownFields()
			var got autonomy.Event
			if err := dec.Decode(&got); err != nil {
				t.Errorf("%s event %s: Input %q is not an autonomy.Event: %v", name, event, p.Input, err)
			} else if !got.ScheduledTime.Equal(at) && (got.ScheduledFor == nil || !got.ScheduledFor.Equal(at)) {
				t.Errorf("%s event %s: Input %q does not put the scheduled time in scheduled_time", name, event, p.Input)
			}
			if got.Job == "" && got.RunID == uuid.Nil {
				ticks++
			}
			if r := p.RetryPolicy; r == nil || r.MaximumRetryAttempts == nil || *r.MaximumRetryAttempts < 1 || r.MaximumEventAgeInSeconds == nil {
				t.Errorf("%s event %s: RetryPolicy needs MaximumRetryAttempts ≥ 1 and MaximumEventAgeInSeconds", name, event)
			}
			if d := p.DeadLetterConfig; d == nil || (d.Type != "SQS" && d.Arn.Value == "" && d.Arn.Tag == "") {
				t.Errorf("%s event %s: no DeadLetterConfig (Type SQS, or an Arn)", name, event)
			}
		}
		if ticks == 0 {
			t.Errorf("%s: no ScheduleV2 tick event (Input {\"scheduled_time\": …} without a job)", name)
		}
	}
	if !found {
		t.Fatal("no function of template.yaml has CodeUri functions/scheduler")
	}
}

// TestTemplateFunctionsReachTheRunQueue: every function but migrate runs turns (the scheduler runs jobs
// and drains continuing turns; the API function resumes turns), and a turn about to outlive
// its function's timeout continues in the worker only through the run queue: each function
// has STEWARD_RUN_QUEUE_URL = !Ref RunQueue (without it the app wires no Continue and the
// turn dies at the timeout).
func TestTemplateFunctionsReachTheRunQueue(t *testing.T) {
	t.Parallel()
	fns := rawFunctions(t)
	if len(fns) == 0 {
		t.Fatal("template.yaml has no functions")
	}
	for name, fn := range fns {
		if filepath.Clean(fn.CodeUri) == "functions/migrate" {
			continue // the operator's function runs no turns
		}
		v, ok := fn.Environment.Variables["STEWARD_RUN_QUEUE_URL"]
		if !ok || v.Tag != "!Ref" || v.Value != "RunQueue" {
			t.Errorf("%s (%s): STEWARD_RUN_QUEUE_URL is not !Ref RunQueue (got %q %q)", name, fn.CodeUri, v.Tag, v.Value)
		}
	}
}

// TestTemplateMakefileTargets: `sam build` (BuildMethod makefile) runs the Makefile's
// build-<LogicalId> target of each function; each must build that function's CodeUri the way
// `make lambda` does, into $(ARTIFACTS_DIR)/bootstrap (checked with make -n).
func TestTemplateMakefileTargets(t *testing.T) {
	t.Parallel()
	tpl, _ := openTemplate(t)
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make is needed to check the build-<LogicalId> targets: %v", err)
	}
	artifacts := t.TempDir()
	for name, fn := range tpl.GetAllServerlessFunctionResources() {
		cmd := exec.Command(mk, "--no-print-directory", "-n", "build-"+name, "ARTIFACTS_DIR="+artifacts)
		cmd.Dir = repoRoot
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("make -n build-%s: %v\n%s", name, err, out)
			continue
		}
		recipe := string(out)
		if strings.Contains(recipe, "-modfile") || strings.Contains(recipe, "-overlay") {
			t.Errorf("make build-%s builds another module than this one (-modfile or -overlay):\n%s", name, recipe)
		}
		for _, want := range []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64", "-tags " + lambdaTags, `-ldflags "-s -w"`,
			`-o "` + artifacts + `/bootstrap"`, "./" + codeURI(t, fn)} {
			if !strings.Contains(recipe, want) {
				t.Errorf("make build-%s does not contain %q:\n%s", name, want, recipe)
			}
		}
	}
}

// TestBootstrapsLeaveTheShellOut: run_command runs only under `steward serve`; its sandbox
// (internal/shell) and tool are not built into any Lambda bootstrap (internal/app's
// shell_lambda.go), so no function can run a command whatever its configuration says.
func TestBootstrapsLeaveTheShellOut(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(goTool(t), "list", "-deps", "-tags", lambdaTags, "./functions/...")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasSuffix(pkg, "/internal/shell") || strings.HasSuffix(pkg, "/internal/tools/shelltools") {
			t.Errorf("a Lambda bootstrap links %s", pkg)
		}
	}
	if !strings.Contains(string(out), "/internal/app") {
		t.Fatal("go list found no internal/app among the functions' dependencies: the check is broken")
	}
}
