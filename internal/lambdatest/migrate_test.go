//go:build unix

package lambdatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/admin"
	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/customresource"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/migrations"
)

// fakeCloudFormation is a custom resource's ResponseURL (a presigned S3 URL in AWS): it keeps
// every answer PUT to it.
type fakeCloudFormation struct {
	URL string
	mu  sync.Mutex
	got []customresource.Response
}

func newFakeCloudFormation(t *testing.T) *fakeCloudFormation {
	cf := &fakeCloudFormation{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var resp customresource.Response
		if r.Method != http.MethodPut || json.Unmarshal(body, &resp) != nil {
			t.Errorf("fake CloudFormation: %s %q, want a PUT of a response", r.Method, body)
		}
		cf.mu.Lock()
		cf.got = append(cf.got, resp)
		cf.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	cf.URL = srv.URL + "/cloudformation-custom-resource-response-euwest1/arn%3Aaws%3Acloudformation?X-Amz-Signature=x"
	return cf
}

// answer is the one answer CloudFormation got since the last call.
func (cf *fakeCloudFormation) answer(t *testing.T) customresource.Response {
	t.Helper()
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if len(cf.got) != 1 {
		t.Fatalf("CloudFormation got %d answers, want exactly 1: %+v", len(cf.got), cf.got)
	}
	a := cf.got[0]
	cf.got = nil
	return a
}

// migrateEvent is a CloudFormation request for the Migration resource: the template passes
// the migrate function's version (the one deployed with it); an update also has the
// previous properties.
func migrateEvent(cf *fakeCloudFormation, requestType, version, oldVersion string) customresource.Request {
	arn := "arn:aws:lambda:eu-west-1:123456789012:function:steward-migrate:"
	req := customresource.Request{
		RequestType: requestType, ResponseURL: cf.URL, ResourceType: "Custom::Migration", LogicalResourceID: "Migration",
		StackID:            "arn:aws:cloudformation:eu-west-1:123456789012:stack/steward/0c1e6f0a-0000-0000-0000-000000000000",
		RequestID:          "req-" + requestType + "-" + version,
		ResourceProperties: map[string]any{"ServiceToken": arn + "live", "ServiceTimeout": "960", "FunctionVersion": arn + version},
	}
	if requestType != customresource.Create {
		req.PhysicalResourceID = "steward-database"
	}
	if oldVersion != "" {
		req.OldResourceProperties = map[string]any{"ServiceToken": arn + "live", "FunctionVersion": arn + oldVersion}
	}
	return req
}

// testDeployment is what one migrate function under test works on: a database name of its own
// on the development server, the three roles' secrets (the development roles' passwords, so
// that the bootstrap's ALTER ROLE changes nothing others rely on) in a fake Secrets Manager,
// and the administrator's URL in a fake SSM.
type testDeployment struct {
	name      string
	super     string // the superuser's URL, to the new database
	secrets   *awsapitest.SecretsManager
	ssm       *awsapitest.SSM
	roleARNs  map[string]string // role → its secret's ARN
	passwords map[string]string
}

func newDeployment(t *testing.T, ssmParams map[string]string) *testDeployment {
	t.Helper()
	urls := map[string]string{}
	for _, v := range []string{"SUPERUSER_DATABASE_URL", "DATABASE_URL", "APP_DATABASE_URL", "DOOR_DATABASE_URL"} {
		if urls[v] = os.Getenv(v); urls[v] == "" {
			t.Fatalf(`%s is not set: the migrate function's test needs the development database (eval "$(scripts/devdb env | sed 's/^/export /')")`, v)
		}
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	d := &testDeployment{name: "steward_deploy_" + hex.EncodeToString(b), roleARNs: map[string]string{}, passwords: map[string]string{}}
	values := map[string]string{}
	for role, v := range map[string]string{store.OwnerRole: "DATABASE_URL", store.AppRole: "APP_DATABASE_URL", store.DoorRole: "DOOR_DATABASE_URL"} {
		u, err := url.Parse(urls[v])
		if err != nil {
			t.Fatal(err)
		}
		d.passwords[role], _ = u.User.Password()
		d.roleARNs[role] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:steward-" + role + "-AbCdEf"
		secret, _ := json.Marshal(map[string]string{"username": role, "password": d.passwords[role], "dbname": d.name})
		values[d.roleARNs[role]] = string(secret)
	}
	d.secrets = awsapitest.NewSecretsManager(t, values)
	params := map[string]string{"/steward/database-url": urls["SUPERUSER_DATABASE_URL"]}
	for k, v := range ssmParams {
		params[k] = v
	}
	d.ssm = awsapitest.NewSSM(t, params)
	su, _ := url.Parse(urls["SUPERUSER_DATABASE_URL"])
	su.Path = "/" + d.name
	d.super = su.String()
	t.Cleanup(func() { dropDatabase(t, d.name) })
	return d
}

// dropDatabase drops a database a test created on the development server.
func dropDatabase(t *testing.T, name string) {
	conn, err := pgx.Connect(context.Background(), os.Getenv("SUPERUSER_DATABASE_URL"))
	if err != nil {
		t.Errorf("drop %s: %v", name, err)
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Errorf("drop %s: %v", name, err)
	}
}

// env is the migrate function's environment as template.yaml sets it (Database=external),
// pointing at the fakes, with adminParam as DatabaseUrlParameter.
func (d *testDeployment) env(adminParam, version string, timeout int) []string {
	return []string{
		"AWS_REGION=" + awsapitest.Creds.Region, "AWS_ACCESS_KEY_ID=" + awsapitest.Creds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + awsapitest.Creds.SecretAccessKey, "AWS_SESSION_TOKEN=" + awsapitest.Creds.SessionToken,
		"AWS_ENDPOINT_URL_SSM=" + d.ssm.URL, "AWS_ENDPOINT_URL_SECRETS_MANAGER=" + d.secrets.URL,
		"SUPERUSER_DATABASE_URL_SSM=" + adminParam,
		"DATABASE_URL_SSM=" + d.roleARNs[store.OwnerRole],
		"APP_DATABASE_URL_SSM=" + d.roleARNs[store.AppRole],
		"DOOR_DATABASE_URL_SSM=" + d.roleARNs[store.DoorRole],
		"AWS_LAMBDA_FUNCTION_VERSION=" + version,
		"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(timeout),
		"STEWARD_LOG_LEVEL=debug",
	}
}

// storedURL is the URL the migrate function stored in role's secret.
func (d *testDeployment) storedURL(t *testing.T, role string) string {
	t.Helper()
	var s struct{ Username, Password, Dbname, URL string }
	if err := json.Unmarshal([]byte(d.secrets.Value(d.roleARNs[role])), &s); err != nil || s.Username != role || s.Password != d.passwords[role] {
		t.Fatalf("%s's secret is no longer {username, password, …}: %v", role, err)
	}
	return s.URL
}

// schemaVersion is the database's goose version (-1 when it has none).
func (d *testDeployment) schemaVersion(t *testing.T) int64 {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), d.super)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v int64
	if err := conn.QueryRow(context.Background(), `SELECT coalesce(max(version_id), -1) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// latestMigration is the newest embedded migration: its version and file.
func latestMigration(t *testing.T) (latest, previous int64, file string) {
	t.Helper()
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) < 2 {
		t.Fatalf("migrations: %d, %v", len(files), err)
	}
	slices.Sort(files)
	version := func(f string) int64 {
		v, err := strconv.ParseInt(strings.SplitN(f, "_", 2)[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	last := files[len(files)-1]
	// Versions need not be consecutive (a branch's number may land after a later one's).
	return version(last), version(files[len(files)-2]), last
}

// migrateDown rolls the deployment's database back one migration, as steward_owner.
func (d *testDeployment) migrateDown(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	m, err := admin.NewMigrator(ctx, d.storedURL(t, store.OwnerRole))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Down(ctx, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateFunctionUnderTheLambdaEmulator is a stack's life as CloudFormation drives the
// built functions/migrate under the Lambda Runtime Interface Emulator, answering a fake
// response URL: a create bootstraps a fresh database and stores each role's URL in its
// secret, where a runtime function (functions/api, in its own emulator) finds it; an update
// applies a new migration; an update whose migration fails answers FAILED naming the
// migration and changes nothing, and the rollback that follows (the previous version's
// properties) answers SUCCESS without migrating; `steward remote owners add` (the CLI,
// invoking the function through the Lambda Invoke API) prints a key the deployment accepts;
// a delete answers SUCCESS and keeps the database and its owner.
func TestMigrateFunctionUnderTheLambdaEmulator(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	d := newDeployment(t, nil)
	cf := newFakeCloudFormation(t)
	bins := buildBootstraps(t, runtime.GOARCH, "functions/migrate", "functions/api")
	migrate := startRIE(t, rie, "migrate", bins["functions/migrate"], d.env("/steward/database-url", "2", 120))
	latest, previous, latestFile := latestMigration(t)

	// 1. Create: a fresh database, migrated; each role's URL is in its secret.
	migrate.invoke(t, migrateEvent(cf, customresource.Create, "2", ""))
	if a := cf.answer(t); a.Status != "SUCCESS" || a.PhysicalResourceID != "steward-database" || a.RequestID != "req-Create-2" || a.LogicalResourceID != "Migration" {
		t.Fatalf("create: %+v; want SUCCESS for steward-database", a)
	}
	if v := d.schemaVersion(t); v != latest {
		t.Fatalf("after create the schema is at %d, want %d", v, latest)
	}
	for _, role := range []string{store.OwnerRole, store.AppRole, store.DoorRole} {
		u := d.storedURL(t, role)
		c, err := pgx.ParseConfig(u)
		if err != nil || c.User != role || c.Database != d.name || c.Password != d.passwords[role] {
			t.Fatalf("%s's stored URL is not the role's connection to %s: %v", role, d.name, err)
		}
	}

	// The runtime reads its URLs from those secrets and serves.
	api := startRIE(t, rie, "api", bins["functions/api"], []string{
		"AWS_REGION=" + awsapitest.Creds.Region, "AWS_ACCESS_KEY_ID=" + awsapitest.Creds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + awsapitest.Creds.SecretAccessKey, "AWS_SESSION_TOKEN=" + awsapitest.Creds.SessionToken,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + d.secrets.URL,
		"APP_DATABASE_URL_SSM=" + d.roleARNs[store.AppRole], "DOOR_DATABASE_URL_SSM=" + d.roleARNs[store.DoorRole],
		"AWS_LAMBDA_FUNCTION_TIMEOUT=30",
	})
	if status, body := api.invokeHTTPAPI(t, apiEvent("GET", "/healthz", "")); status != http.StatusOK {
		t.Fatalf("GET /healthz through the stored URLs: %d %s", status, body)
	}

	// 2. An update with a new migration: the database is one behind; the update applies it.
	d.migrateDown(t)
	migrate.invoke(t, migrateEvent(cf, customresource.Update, "2", "1"))
	if a := cf.answer(t); a.Status != "SUCCESS" || a.PhysicalResourceID != "steward-database" {
		t.Fatalf("update: %+v", a)
	}
	if v := d.schemaVersion(t); v != latest {
		t.Fatalf("after the update the schema is at %d, want %d", v, latest)
	}

	// 3. An update whose migration fails: one line naming the migration; nothing applied.
	d.migrateDown(t)
	refuseDDL(t, d.super)
	migrate.invoke(t, migrateEvent(cf, customresource.Update, "2", "1"))
	a := cf.answer(t)
	if a.Status != "FAILED" || strings.Contains(a.Reason, "\n") || !strings.Contains(a.Reason, latestFile) || !strings.Contains(a.Reason, "refuses schema changes") {
		t.Fatalf("a failing migration: %+v; want FAILED with one line naming %s and the database's refusal", a, latestFile)
	}
	t.Logf("a failing migration: %s", a.Reason)
	if v := d.schemaVersion(t); v != previous {
		t.Fatalf("after the failed migration the schema is at %d, want %d (its transaction rolled back)", v, previous)
	}
	// CloudFormation rolls back: the previous version's properties, through the alias that
	// still runs version 2. Nothing is migrated (the failing migration would fail again).
	migrate.invoke(t, migrateEvent(cf, customresource.Update, "1", "2"))
	if a := cf.answer(t); a.Status != "SUCCESS" {
		t.Fatalf("the rollback's update: %+v; want SUCCESS without migrating", a)
	}
	if v := d.schemaVersion(t); v != previous {
		t.Fatalf("the rollback migrated: the schema is at %d", v)
	}
	allowDDL(t, d.super)
	migrate.invoke(t, migrateEvent(cf, customresource.Update, "2", "1"))
	if a := cf.answer(t); a.Status != "SUCCESS" || d.schemaVersion(t) != latest {
		t.Fatalf("the next deploy: %+v at %d", a, d.schemaVersion(t))
	}

	// 4. The first owner, from the operator's machine: the CLI invokes the function.
	steward := buildCLI(t)
	cmd := exec.Command(steward, "remote", "owners", "add", "alice", "--function", "function")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "AWS_REGION=" + awsapitest.Creds.Region, "AWS_ACCESS_KEY_ID=" + awsapitest.Creds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + awsapitest.Creds.SecretAccessKey, "AWS_ENDPOINT_URL_LAMBDA=" + strings.TrimSuffix(migrate.url, "2015-03-31/functions/function/invocations")}
	out, err := cmd.Output()
	key := regexp.MustCompile(`API key: (stw_\S+)`).FindStringSubmatch(string(out))
	if err != nil || key == nil || !strings.Contains(string(out), `Created owner "alice"`) {
		t.Fatalf("steward remote owners add alice: %v\n%s", err, out)
	}
	if status, body := api.invokeHTTPAPI(t, apiEvent("GET", "/v1/approvals", key[1])); status != http.StatusOK {
		t.Fatalf("GET /v1/approvals with the new owner's key: %d %s", status, body)
	}
	cmd = exec.Command(steward, "remote", "owners", "add", "", "--function", "function")
	cmd.Env = cmd.Env[:0]
	cmd.Env = append(cmd.Env, "PATH=/usr/bin:/bin", "AWS_REGION="+awsapitest.Creds.Region, "AWS_ACCESS_KEY_ID="+awsapitest.Creds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY="+awsapitest.Creds.SecretAccessKey, "AWS_ENDPOINT_URL_LAMBDA="+strings.TrimSuffix(migrate.url, "2015-03-31/functions/function/invocations"))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "steward: remote owners: owners add:") {
		t.Errorf("steward remote owners add with an empty name: %v\n%s; want the refusal in words", err, out)
	}

	// 5. Delete: SUCCESS, and the database and its owner stay.
	migrate.invoke(t, migrateEvent(cf, customresource.Delete, "2", ""))
	if a := cf.answer(t); a.Status != "SUCCESS" || a.PhysicalResourceID != "steward-database" {
		t.Fatalf("delete: %+v", a)
	}
	door, err := store.OpenDoor(context.Background(), d.storedURL(t, store.OwnerRole))
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	owners, err := door.ListOwners(context.Background())
	if err != nil || len(owners) != 1 || owners[0].Name != "alice" || d.schemaVersion(t) != latest {
		t.Fatalf("after delete: owners %v (%v), schema %d; want alice and the schema kept", owners, err, d.schemaVersion(t))
	}
}

// TestMigrateFunctionRefusesBadInput: a wrong database URL, a database without pgvector, a
// missing parameter or secret, and a database that never answers each stop the deploy with
// one line naming the problem (and never the password), answered before the function's
// deadline.
func TestMigrateFunctionRefusesBadInput(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	bins := buildBootstraps(t, runtime.GOARCH, "functions/migrate")
	super := os.Getenv("SUPERUSER_DATABASE_URL")
	wrong, err := url.Parse(super)
	if err != nil || super == "" {
		t.Fatalf("SUPERUSER_DATABASE_URL %q: %v", super, err)
	}
	wrong.User = url.UserPassword(wrong.User.Username(), "not-the-password-7731")
	hole := blackHole(t)
	cases := []struct {
		name    string
		param   string
		value   string
		setup   func(d *testDeployment)
		timeout int
		want    []string
	}{
		{"a wrong password", "/steward/database-url", wrong.String(), nil, 60,
			[]string{"cannot connect to the database at 127.0.0.1:", "password authentication failed"}},
		{"a database without pgvector", "/steward/database-url", testdb.WithoutVector(t), nil, 60,
			[]string{"has no pgvector", "install pgvector"}},
		{"a missing parameter", "/steward/not-there", "", nil, 60,
			[]string{"SSM parameter /steward/not-there", "ParameterNotFound"}},
		{"a missing role secret", "/steward/database-url", super, func(d *testDeployment) { d.roleARNs[store.AppRole] += "-gone" }, 60,
			[]string{"steward_app role's secret", "ResourceNotFoundException"}},
		{"a database that never answers", "/steward/database-url", "postgres://postgres:pw@" + hole + "/postgres?sslmode=disable", nil, customresource.MarginSeconds + 4,
			[]string{"timed out after", "while connecting to the database at " + hole}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			params := map[string]string{}
			if c.value != "" {
				params[c.param] = c.value
			}
			d := newDeployment(t, params)
			if c.setup != nil {
				c.setup(d)
			}
			cf := newFakeCloudFormation(t)
			fn := startRIE(t, rie, "migrate", bins["functions/migrate"], d.env(c.param, "1", c.timeout))
			start := time.Now()
			fn.invoke(t, migrateEvent(cf, customresource.Create, "1", ""))
			took := time.Since(start)
			a := cf.answer(t)
			t.Logf("%s: %s (after %s)", c.name, a.Reason, took.Round(time.Millisecond))
			if a.Status != "FAILED" || strings.Contains(a.Reason, "\n") || a.PhysicalResourceID != "Migration" {
				t.Errorf("%+v; want FAILED, one line, and a physical id", a)
			}
			for _, w := range c.want {
				if !strings.Contains(a.Reason, w) {
					t.Errorf("the reason %q does not say %q", a.Reason, w)
				}
			}
			for _, secret := range []string{"not-the-password-7731", d.passwords[store.AppRole] + "@", "pw@"} {
				if strings.Contains(a.Reason, secret) {
					t.Errorf("the reason %q holds a password", a.Reason)
				}
			}
			if took >= time.Duration(c.timeout)*time.Second {
				t.Errorf("answered after %s, past the function's %d s timeout", took, c.timeout)
			}
		})
	}
}

// blackHole is a loopback address that accepts connections and never answers, as a
// database behind a firewall that drops packets does.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// refuseDDL makes the database refuse every schema change steward_owner tries (an event
// trigger): the next migration fails, whatever it is.
func refuseDDL(t *testing.T, superURL string) {
	t.Helper()
	exec1(t, superURL, `CREATE FUNCTION refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  IF session_user = 'steward_owner' THEN
    RAISE EXCEPTION 'this database refuses schema changes (a test)';
  END IF;
END $$`)
	exec1(t, superURL, `CREATE EVENT TRIGGER refuse_ddl ON ddl_command_start EXECUTE FUNCTION refuse_ddl()`)
}

func allowDDL(t *testing.T, superURL string) {
	t.Helper()
	exec1(t, superURL, `DROP EVENT TRIGGER refuse_ddl`)
	exec1(t, superURL, `DROP FUNCTION refuse_ddl()`)
}

func exec1(t *testing.T, dbURL, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// apiEvent is an HTTP API (payload 2.0) event of method path, with key as its Bearer key.
func apiEvent(method, path, key string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{"accept": "application/json"}
	if key != "" {
		headers["authorization"] = "Bearer " + key
	}
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: method + " " + path, RawPath: path, Headers: headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: method + " " + path, Stage: "$default", RequestID: "api-" + path, DomainName: "api.execute-api.test.amazonaws.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "127.0.0.1"},
		},
	}
}

// buildCLI builds cmd/steward for this machine.
func buildCLI(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "steward")
	cmd := exec.Command(goTool(t), "build", "-tags", "grpcnotrace", "-o", out, "./cmd/steward")
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/steward: %v\n%s", err, b)
	}
	return out
}
