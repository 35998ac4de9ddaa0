// Package deployment is the migrate function's work (functions/migrate,
// docs/ARCHITECTURE.md §14). On every CloudFormation create and update of the stack's
// Migration resource, and when an operator asks (`steward remote migrate`), it prepares the
// database: it reads the administrator's URL and the three roles' generated passwords,
// bootstraps the roles and the database, installs pgvector, applies the embedded migrations,
// and stores each role's URL in its secret, where the other functions read it. It answers
// the operator's commands of `steward remote` (internal/operator) with the same code the
// local CLI runs. It is the operator's tool, like cmd/steward: it may
// use internal/admin, and the runtime never imports it.
package deployment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/admin"
	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/customresource"
	"github.com/stewardhq/steward/internal/operator"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/trace"
)

// Actions an operator may ask for (Event.Action).
const (
	ActionMigrate  = "migrate"
	ActionAddOwner = "owners-add"
	// ActionOperator is a call of the operator's service (Event.Call), answered by
	// operator.Serve over steward_owner's connection: `steward remote control|owners|keys`.
	ActionOperator = "operator"
)

// PhysicalID is the Migration resource's physical id: one database per stack.
const PhysicalID = "steward-database"

// Event is one invocation: a CloudFormation custom resource request (RequestType set), or
// an operator's action.
type Event struct {
	customresource.Request
	Action string `json:"action,omitempty"`
	Name   string `json:"name,omitempty"` // the new owner's, for owners-add
	// Call is ActionOperator's call.
	Call *operator.Call `json:"call,omitempty"`
}

// Result is an action's answer.
type Result struct {
	SchemaVersion int64  `json:"schema_version,omitempty"`
	OwnerID       string `json:"owner_id,omitempty"`
	Name          string `json:"name,omitempty"`
	APIKey        string `json:"api_key,omitempty"`
	// Reply is ActionOperator's answer.
	Reply *operator.Reply `json:"reply,omitempty"`
}

// Handler handles the migrate function's invocations. Nothing it does at construction can
// fail: a Lambda init error would leave CloudFormation waiting for an answer nobody sends,
// so every problem — a malformed setting included — is an invocation's answer.
type Handler struct {
	getenv func(string) string
	http   *http.Client
	log    zerolog.Logger
}

// New is the handler of a function whose environment getenv reads, logging JSON to logOut.
func New(getenv func(string) string, logOut io.Writer) *Handler {
	return &Handler{getenv: getenv, http: &http.Client{Timeout: 30 * time.Second},
		log: zerolog.New(trace.RedactWriter(logOut)).With().Timestamp().Logger()}
}

// Handle answers one invocation. A CloudFormation request is answered at its ResponseURL
// (customresource.Handle), and its error is only a failure to answer; an action's error is
// the invocation's, which `steward remote` prints.
func (h *Handler) Handle(ctx context.Context, ev Event) (*Result, error) {
	log := h.log.With().Str("aws_request_id", requestID(ctx)).Logger()
	ctx = log.WithContext(ctx)
	if ev.RequestType != "" {
		log.Info().Str("request_type", ev.RequestType).Str("logical_id", ev.LogicalResourceID).Msg("CloudFormation request")
		return nil, customresource.Handle(ctx, h.http, ev.Request, h.resource)
	}
	var res *Result
	var err error
	switch ev.Action {
	case ActionMigrate:
		var v int64
		if v, err = h.migrate(ctx); err == nil {
			res = &Result{SchemaVersion: v}
		}
	case ActionAddOwner:
		res, err = h.addOwner(ctx, ev.Name)
	case ActionOperator:
		res, err = h.serve(ctx, ev.Call)
	default:
		err = fmt.Errorf("unknown action %q: want %s, %s or %s (or a CloudFormation request)", ev.Action, ActionMigrate, ActionAddOwner, ActionOperator)
	}
	if err != nil {
		log.Error().Str("action", ev.Action).Str("error", err.Error()).Msg("action failed")
		return nil, errors.New(customresource.OneLine(err.Error()))
	}
	return res, nil
}

// resource is the Migration resource's work: create and update migrate, delete keeps
// everything (the database outlives the stack: tearing down never drops data), and an
// update for another version of this function — CloudFormation rolling a failed update back —
// changes nothing.
func (h *Handler) resource(ctx context.Context, req customresource.Request) (string, error) {
	log := zerolog.Ctx(ctx)
	switch {
	case req.RequestType == customresource.Delete:
		log.Info().Msg("delete: the database and its data are kept")
		return "", nil
	case req.RequestType == customresource.Update && rollingBack(req):
		log.Info().Str("for_version", req.Property("FunctionVersion", false)).Str("running", lambdacontext.FunctionVersion).
			Msg("an update for another version of the migrate function (a rollback): nothing to do, migrations only go forward")
		return "", nil
	case req.RequestType != customresource.Create && req.RequestType != customresource.Update:
		return "", fmt.Errorf("unknown request type %q", req.RequestType)
	}
	if _, err := h.migrate(ctx); err != nil {
		return "", err
	}
	return PhysicalID, nil
}

// rollingBack reports whether req asks for a version of this function other than the one
// running. The template passes the function's published version (FunctionVersion, an ARN
// ending in :N) and invokes it through its alias, so on an update the two agree; when
// CloudFormation rolls a failed update back, the request carries the previous version's
// properties while the alias still points at the new code, which must not migrate again
// (the migration that failed would fail again, and the rollback with it).
func rollingBack(req customresource.Request) bool {
	want := req.Property("FunctionVersion", false)
	running := lambdacontext.FunctionVersion
	if want == "" || running == "" || running == "$LATEST" {
		return false
	}
	return want[strings.LastIndexByte(want, ':')+1:] != running
}

// migrate prepares the database and returns its schema version.
func (h *Handler) migrate(ctx context.Context) (int64, error) {
	log := zerolog.Ctx(ctx)
	cfg, secrets, err := h.load()
	if err != nil {
		return 0, err
	}
	db, err := resolve(ctx, cfg, secrets)
	if err != nil {
		return 0, err
	}
	customresource.Step(ctx, "connecting to the database at "+db.where)
	vector, err := admin.VectorAvailable(ctx, db.admin)
	switch {
	case errors.Is(err, store.ErrNoVector):
		return 0, fmt.Errorf("the database at %s has no pgvector: %w", db.where, err)
	case err != nil:
		return 0, fmt.Errorf("cannot connect to the database at %s as %s: %w", db.where, db.adminUser, innermost(err))
	}
	customresource.Step(ctx, "bootstrapping the roles and the database "+db.name)
	if err := admin.Bootstrap(ctx, db.admin, admin.RoleURLs{Owner: db.owner.url, App: db.app.url, Door: db.door.url}); err != nil {
		return 0, fmt.Errorf("bootstrap the database %s at %s: %w", db.name, db.where, store.VectorError(err))
	}
	customresource.Step(ctx, "applying the migrations")
	m, err := admin.NewMigrator(ctx, db.owner.url)
	if err != nil {
		return 0, fmt.Errorf("connect to %s as %s: %w", db.name, store.OwnerRole, innermost(store.VectorError(err)))
	}
	defer m.Close()
	if err := m.Up(ctx, logLines{log}); err != nil {
		return 0, err
	}
	v, err := m.Version(ctx)
	if err != nil {
		return 0, err
	}
	if err := applyCostCap(ctx, cfg, db.owner.url); err != nil {
		return 0, err
	}
	customresource.Step(ctx, "storing the roles' URLs in their secrets")
	for _, r := range []*role{&db.owner, &db.app, &db.door} {
		if err := r.store(ctx, secrets); err != nil {
			return 0, err
		}
	}
	log.Info().Str("database", db.name).Str("at", db.where).Str("pgvector", vector).Int64("schema_version", v).Msg("database ready")
	return v, nil
}

// applyCostCap stores STEWARD_DAILY_COST_CAP_USD (the DailyCostCapUsd parameter) as the
// deployment's daily cost cap, when it is set, as steward_owner (`steward control cap`).
func applyCostCap(ctx context.Context, cfg config.Config, ownerURL string) error {
	if cfg.DailyCostCapMicros == nil {
		return nil
	}
	customresource.Step(ctx, "setting the deployment's daily cost cap (STEWARD_DAILY_COST_CAP_USD)")
	door, err := store.OpenDoor(ctx, ownerURL)
	if err != nil {
		return fmt.Errorf("connect as %s to set the daily cost cap: %w", store.OwnerRole, innermost(err))
	}
	defer door.Close()
	if err := door.SetGlobalCostCap(ctx, *cfg.DailyCostCapMicros); err != nil {
		return fmt.Errorf("STEWARD_DAILY_COST_CAP_USD: %w", err)
	}
	return nil
}

// addOwner creates an owner and its first API key: the owners-add action of a CLI from
// before internal/operator, answered by the operator's service.
func (h *Handler) addOwner(ctx context.Context, name string) (*Result, error) {
	res, err := h.serve(ctx, &operator.Call{Method: operator.MethodCreateOwner, Name: name})
	if err != nil {
		return nil, fmt.Errorf("owners add: %w", err)
	}
	o := res.Reply.Owner
	return &Result{OwnerID: o.ID.String(), Name: o.Name, APIKey: res.Reply.Secret}, nil
}

// serve answers a call of the operator's service as steward_owner, and a job's as
// steward_app (the scheduler works under row-level security): the same work the local CLI
// does with a database connection (internal/operator).
func (h *Handler) serve(ctx context.Context, call *operator.Call) (*Result, error) {
	if call == nil {
		return nil, fmt.Errorf("the %s action has no call", ActionOperator)
	}
	db, err := h.database(ctx)
	if err != nil {
		return nil, err
	}
	door, err := db.openDoor(ctx)
	if err != nil {
		return nil, err
	}
	defer door.Close()
	local := operator.Local{Door: door}
	if operator.NeedsJobs(call.Method) {
		st, err := store.Open(ctx, db.app.url, 2)
		if err != nil {
			return nil, fmt.Errorf("connect to %s at %s as %s: %w", db.name, db.where, store.AppRole, innermost(store.VectorError(err)))
		}
		defer st.Close()
		runner := &autonomy.Runner{Recorder: autonomy.Recorder{Store: st}}
		local.Jobs = &autonomy.Scheduler{Runner: runner, Webhooks: &autonomy.Webhooks{Runner: runner}}
	}
	reply, err := operator.Serve(ctx, operator.LocalService(local), *call)
	if err != nil {
		return nil, err
	}
	zerolog.Ctx(ctx).Info().Str("method", call.Method).Msg("operator call served")
	return &Result{Reply: &reply}, nil
}

// database reads the configuration and the roles' secrets.
func (h *Handler) database(ctx context.Context) (database, error) {
	cfg, secrets, err := h.load()
	if err != nil {
		return database{}, err
	}
	return resolve(ctx, cfg, secrets)
}

// openDoor connects as steward_owner, with the URL made from its secret.
func (db database) openDoor(ctx context.Context) (*store.Door, error) {
	door, err := store.OpenDoor(ctx, db.owner.url)
	if err != nil {
		return nil, fmt.Errorf("connect to %s at %s as %s: %w (has a deploy migrated it? steward remote migrate)", db.name, db.where, store.OwnerRole, innermost(store.VectorError(err)))
	}
	return door, nil
}

// load reads the configuration and makes the secrets' client.
func (h *Handler) load() (config.Config, *awsapi.Secrets, error) {
	cfg, err := config.Load(h.getenv)
	if err != nil {
		return cfg, nil, fmt.Errorf("the migrate function's configuration: %w", err)
	}
	return cfg, awsapi.NewSecrets(cfg.AWS), nil
}

// innermost is the error at the bottom of err's chain: the refusal itself ("password
// authentication failed for user …", "connect: connection refused") without the layers
// that repeat the host and user the message names already.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// requestID is the invocation's id, for the log.
func requestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}

// logLines logs each line written to it (the migrations goose applied).
type logLines struct{ log *zerolog.Logger }

func (l logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if line != "" {
			l.log.Info().Str("migration", line).Msg("applied")
		}
	}
	return len(p), nil
}
