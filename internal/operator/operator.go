// Package operator is an operator's work on a deployment: owners, their keys and budgets,
// the kill switches, households and job schedules (docs/ARCHITECTURE.md §14, docs/DEPLOY.md "Day two"). It is one
// service that every face calls: the local CLI with Local, over a database connection;
// `steward remote` with Remote, which sends each call to the deployment's migrate function;
// and that function answers the call with Local (Serve). So a command does the same work
// whether the database is on the operator's machine or in a VPC they cannot reach.
package operator

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Owners are the owners, their keys and budgets.
type Owners interface {
	// CreateOwner creates an owner and its first API key (returned once).
	CreateOwner(ctx context.Context, name string) (store.Owner, string, error)
	ListOwners(ctx context.Context) ([]store.Owner, error)
	// SetBudget changes an owner's daily limits (nil keeps one) and returns both.
	SetBudget(ctx context.Context, owner uuid.UUID, messages *int32, costMicros *int64) (store.DailyLimits, error)
	// AddKey creates another API key for an owner (returned once).
	AddKey(ctx context.Context, owner uuid.UUID, name string) (string, store.APIKey, error)
	ListKeys(ctx context.Context, owner uuid.UUID) ([]store.APIKey, error)
	RevokeKey(ctx context.Context, owner, key uuid.UUID) error
}

// Switches are the kill switches.
type Switches interface {
	// SetKill engages or releases a kill switch: the deployment's (owner uuid.Nil) or an
	// owner's.
	SetKill(ctx context.Context, owner uuid.UUID, engaged bool, reason string) error
	// SetCostCap sets the deployment's daily cost cap (millionths of a dollar).
	SetCostCap(ctx context.Context, micros int64) error
	Status(ctx context.Context) (store.ControlStatus, error)
}

// Households are the households of owners and their approval policies.
type Households interface {
	CreateHousehold(ctx context.Context, name string) (store.HouseholdInfo, error)
	// SetHouseholdMember adds an owner to a household (add) or takes them out.
	SetHouseholdMember(ctx context.Context, household string, owner uuid.UUID, add bool) error
	ListHouseholds(ctx context.Context) ([]store.HouseholdInfo, error)
	AddHouseholdPolicy(ctx context.Context, p store.HouseholdPolicy) (store.HouseholdPolicy, error)
	ListHouseholdPolicies(ctx context.Context, household string) ([]store.HouseholdPolicy, error)
	RemoveHouseholdPolicy(ctx context.Context, household string, id uuid.UUID) error
}

// Jobs are an owner's job schedules (morning briefings, weekly reviews, inbox scans) and
// incoming webhooks.
type Jobs interface {
	ListJobs(ctx context.Context, owner uuid.UUID) ([]autonomy.ScheduleView, error)
	// AddJob schedules a job; with allowNotify it also adds the standing rule "allow notify"
	// (the owner's explicit opt-in, autonomy.Setup) and returns it, nil when one existed.
	AddJob(ctx context.Context, owner uuid.UUID, job, cron, tz string, payload json.RawMessage, allowNotify bool) (autonomy.ScheduleView, *steward.Rule, error)
	RemoveJob(ctx context.Context, owner uuid.UUID, job string) error
	// CreateWebhook creates an incoming webhook; its secret is returned once.
	CreateWebhook(ctx context.Context, owner uuid.UUID, source string) (autonomy.NewHook, error)
}

// Service is what an operator may do, one port per concern; Local and Remote implement
// every one.
type Service struct {
	Owners
	Switches
	Households
	Jobs
}

// LocalService is l's service.
func LocalService(l Local) Service { return Service{l, l, l, l} }

// RemoteService is r's service.
func RemoteService(r Remote) Service { return Service{r, r, r, r} }

// Local is the service over a database connection as steward_owner (Door), and for the
// jobs, the scheduler over steward_app's (Jobs; nil refuses them).
type Local struct {
	Door *store.Door
	Jobs *autonomy.Scheduler
}

func (l Local) CreateOwner(ctx context.Context, name string) (store.Owner, string, error) {
	return l.Door.CreateOwner(ctx, name)
}

func (l Local) ListOwners(ctx context.Context) ([]store.Owner, error) { return l.Door.ListOwners(ctx) }

func (l Local) SetBudget(ctx context.Context, owner uuid.UUID, messages *int32, costMicros *int64) (store.DailyLimits, error) {
	return control.Operator{Door: l.Door}.SetBudget(ctx, owner, messages, costMicros)
}

func (l Local) SetKill(ctx context.Context, owner uuid.UUID, engaged bool, reason string) error {
	op := control.Operator{Door: l.Door}
	if owner == uuid.Nil {
		return op.SetDeploymentKill(ctx, engaged, reason)
	}
	return op.SetOwnerKill(ctx, owner, engaged, reason)
}

func (l Local) SetCostCap(ctx context.Context, micros int64) error {
	return control.Operator{Door: l.Door}.SetDailyCostCap(ctx, micros)
}

func (l Local) Status(ctx context.Context) (store.ControlStatus, error) {
	return control.Operator{Door: l.Door}.Status(ctx)
}

func (l Local) AddKey(ctx context.Context, owner uuid.UUID, name string) (string, store.APIKey, error) {
	return l.Door.AddKey(ctx, owner, name)
}

func (l Local) ListKeys(ctx context.Context, owner uuid.UUID) ([]store.APIKey, error) {
	return l.Door.ListKeys(ctx, owner)
}

func (l Local) RevokeKey(ctx context.Context, owner, key uuid.UUID) error {
	return l.Door.RevokeKey(ctx, owner, key)
}

func (l Local) CreateHousehold(ctx context.Context, name string) (store.HouseholdInfo, error) {
	return l.Door.CreateHousehold(ctx, name)
}

func (l Local) SetHouseholdMember(ctx context.Context, household string, owner uuid.UUID, add bool) error {
	if add {
		return l.Door.AddHouseholdMember(ctx, household, owner)
	}
	return l.Door.RemoveHouseholdMember(ctx, household, owner)
}

func (l Local) ListHouseholds(ctx context.Context) ([]store.HouseholdInfo, error) {
	return l.Door.ListHouseholds(ctx)
}

func (l Local) AddHouseholdPolicy(ctx context.Context, p store.HouseholdPolicy) (store.HouseholdPolicy, error) {
	return l.Door.AddHouseholdPolicy(ctx, p)
}

func (l Local) ListHouseholdPolicies(ctx context.Context, household string) ([]store.HouseholdPolicy, error) {
	return l.Door.ListHouseholdPolicies(ctx, household)
}

func (l Local) RemoveHouseholdPolicy(ctx context.Context, household string, id uuid.UUID) error {
	return l.Door.RemoveHouseholdPolicy(ctx, household, id)
}

// scheduler is l.Jobs, or an error when l has none.
func (l Local) scheduler() (*autonomy.Scheduler, error) {
	if l.Jobs == nil {
		return nil, fmt.Errorf("jobs need the scheduler, which this service was built without")
	}
	return l.Jobs, nil
}

func (l Local) ListJobs(ctx context.Context, owner uuid.UUID) ([]autonomy.ScheduleView, error) {
	s, err := l.scheduler()
	if err != nil {
		return nil, err
	}
	return s.ListSchedules(ctx, owner)
}

func (l Local) AddJob(ctx context.Context, owner uuid.UUID, job, cron, tz string, payload json.RawMessage, allowNotify bool) (autonomy.ScheduleView, *steward.Rule, error) {
	s, err := l.scheduler()
	if err != nil {
		return autonomy.ScheduleView{}, nil, err
	}
	v, err := s.AddSchedule(ctx, owner, job, cron, tz, payload)
	if err != nil || !allowNotify {
		return v, nil, err
	}
	rule, err := autonomy.Setup(ctx, s.Runner.Store, owner)
	if err != nil {
		return v, nil, fmt.Errorf("the notify rule: %w", err)
	}
	return v, rule, nil
}

func (l Local) RemoveJob(ctx context.Context, owner uuid.UUID, job string) error {
	s, err := l.scheduler()
	if err != nil {
		return err
	}
	return s.RemoveSchedule(ctx, owner, job)
}

func (l Local) CreateWebhook(ctx context.Context, owner uuid.UUID, source string) (autonomy.NewHook, error) {
	s, err := l.scheduler()
	if err != nil {
		return autonomy.NewHook{}, err
	}
	if s.Webhooks == nil {
		return autonomy.NewHook{}, fmt.Errorf("webhooks are not configured")
	}
	return s.Webhooks.Create(ctx, owner, source)
}

// The methods of a Call.
const (
	MethodCreateOwner = "create-owner"
	MethodListOwners  = "list-owners"
	MethodSetBudget   = "set-budget"
	MethodSetKill     = "set-kill"
	MethodSetCostCap  = "set-cost-cap"
	MethodStatus      = "status"
	MethodAddKey      = "add-key"
	MethodListKeys    = "list-keys"
	MethodRevokeKey   = "revoke-key"

	MethodCreateHousehold       = "create-household"
	MethodSetHouseholdMember    = "set-household-member"
	MethodListHouseholds        = "list-households"
	MethodAddHouseholdPolicy    = "add-household-policy"
	MethodListHouseholdPolicies = "list-household-policies"
	MethodRemoveHouseholdPolicy = "remove-household-policy"

	MethodListJobs  = "list-jobs"
	MethodAddJob    = "add-job"
	MethodRemoveJob = "remove-job"

	MethodCreateWebhook = "create-webhook"
)

// NeedsJobs reports whether method needs Local's Jobs.
func NeedsJobs(method string) bool {
	return method == MethodListJobs || method == MethodAddJob || method == MethodRemoveJob || method == MethodCreateWebhook
}

// Call is one method call sent to the migrate function: the method and its arguments.
type Call struct {
	Method     string    `json:"method"`
	Owner      uuid.UUID `json:"owner"`
	Key        uuid.UUID `json:"key"`
	Name       string    `json:"name,omitempty"`
	Engaged    bool      `json:"engaged,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Messages   *int32    `json:"messages,omitempty"`
	CostMicros *int64    `json:"cost_micros,omitempty"`
	// Household is the household's name; Policy a new household policy.
	Household string                 `json:"household,omitempty"`
	Policy    *store.HouseholdPolicy `json:"policy,omitempty"`
	// Job is a job's name, with its schedule (Cron in the IANA zone TZ) and Payload.
	Job     string          `json:"job,omitempty"`
	Cron    string          `json:"cron,omitempty"`
	TZ      string          `json:"tz,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	// AllowNotify also adds the standing rule "allow notify" (jobs add --allow-notify).
	AllowNotify bool `json:"allow_notify,omitempty"`
}

// Reply is a call's answer: the fields its method returns.
type Reply struct {
	Owner  *store.Owner         `json:"owner,omitempty"`
	Owners []store.Owner        `json:"owners,omitempty"`
	Secret string               `json:"secret,omitempty"` // an API key, shown once
	Key    *store.APIKey        `json:"key,omitempty"`
	Keys   []store.APIKey       `json:"keys,omitempty"`
	Limits *store.DailyLimits   `json:"limits,omitempty"`
	Status *store.ControlStatus `json:"status,omitempty"`

	Household  *store.HouseholdInfo    `json:"household,omitempty"`
	Households []store.HouseholdInfo   `json:"households,omitempty"`
	Policy     *store.HouseholdPolicy  `json:"policy,omitempty"`
	Policies   []store.HouseholdPolicy `json:"policies,omitempty"`

	Schedule  *autonomy.ScheduleView  `json:"schedule,omitempty"`
	Schedules []autonomy.ScheduleView `json:"schedules,omitempty"`
	Rule      *steward.Rule           `json:"rule,omitempty"`
	Hook      *autonomy.NewHook       `json:"hook,omitempty"`
}

// Serve answers c with s: the migrate function's side of Remote.
func Serve(ctx context.Context, s Service, c Call) (Reply, error) {
	m, ok := methods[c.Method]
	if !ok {
		return Reply{}, fmt.Errorf("unknown operator method %q (is the CLI newer than the deployment? upgrade it)", c.Method)
	}
	return m(ctx, s, c)
}

// ptr is v's address, or nil with err: a reply's field only when the call succeeded.
func ptr[T any](v T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// methods answer each method of a Call.
var methods = map[string]func(context.Context, Service, Call) (Reply, error){
	MethodCreateOwner: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		o, key, err := s.CreateOwner(ctx, c.Name)
		r.Owner, err = ptr(o, err)
		r.Secret = key
		return r, err
	},
	MethodListOwners: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Owners, err = s.ListOwners(ctx)
		return r, err
	},
	MethodSetBudget: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Limits, err = ptr(s.SetBudget(ctx, c.Owner, c.Messages, c.CostMicros))
		return r, err
	},
	MethodSetKill: func(ctx context.Context, s Service, c Call) (Reply, error) {
		return Reply{}, s.SetKill(ctx, c.Owner, c.Engaged, c.Reason)
	},
	MethodSetCostCap: func(ctx context.Context, s Service, c Call) (Reply, error) {
		if c.CostMicros == nil {
			return Reply{}, fmt.Errorf("%s: no cap given", MethodSetCostCap)
		}
		return Reply{}, s.SetCostCap(ctx, *c.CostMicros)
	},
	MethodStatus: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Status, err = ptr(s.Status(ctx))
		return r, err
	},
	MethodAddKey: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		key, meta, err := s.AddKey(ctx, c.Owner, c.Name)
		r.Key, err = ptr(meta, err)
		r.Secret = key
		return r, err
	},
	MethodListKeys: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Keys, err = s.ListKeys(ctx, c.Owner)
		return r, err
	},
	MethodRevokeKey: func(ctx context.Context, s Service, c Call) (Reply, error) {
		return Reply{}, s.RevokeKey(ctx, c.Owner, c.Key)
	},
	MethodCreateHousehold: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Household, err = ptr(s.CreateHousehold(ctx, c.Household))
		return r, err
	},
	MethodSetHouseholdMember: func(ctx context.Context, s Service, c Call) (Reply, error) {
		return Reply{}, s.SetHouseholdMember(ctx, c.Household, c.Owner, c.Engaged)
	},
	MethodListHouseholds: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Households, err = s.ListHouseholds(ctx)
		return r, err
	},
	MethodAddHouseholdPolicy: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		if c.Policy == nil {
			return r, fmt.Errorf("%s: no policy", MethodAddHouseholdPolicy)
		}
		r.Policy, err = ptr(s.AddHouseholdPolicy(ctx, *c.Policy))
		return r, err
	},
	MethodListHouseholdPolicies: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Policies, err = s.ListHouseholdPolicies(ctx, c.Household)
		return r, err
	},
	MethodRemoveHouseholdPolicy: func(ctx context.Context, s Service, c Call) (Reply, error) {
		return Reply{}, s.RemoveHouseholdPolicy(ctx, c.Household, c.Key)
	},
	MethodListJobs: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Schedules, err = s.ListJobs(ctx, c.Owner)
		return r, err
	},
	MethodAddJob: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		v, rule, err := s.AddJob(ctx, c.Owner, c.Job, c.Cron, c.TZ, c.Payload, c.AllowNotify)
		r.Schedule, err = ptr(v, err)
		r.Rule = rule
		return r, err
	},
	MethodRemoveJob: func(ctx context.Context, s Service, c Call) (Reply, error) {
		return Reply{}, s.RemoveJob(ctx, c.Owner, c.Job)
	},
	MethodCreateWebhook: func(ctx context.Context, s Service, c Call) (r Reply, err error) {
		r.Hook, err = ptr(s.CreateWebhook(ctx, c.Owner, c.Name))
		return r, err
	},
}

// Remote is the service of a deployment reached through Invoke, which sends a call to its
// migrate function and returns the function's reply (or its error).
type Remote struct {
	Invoke func(ctx context.Context, c Call) (Reply, error)
}

// answer is r's field, or an error naming the method when the function left it out (a
// deployment older than the CLI).
func answer[T any](method string, v *T) (T, error) {
	if v == nil {
		var zero T
		return zero, fmt.Errorf("the migrate function answered %s with nothing (is the deployment older than this CLI? upgrade it)", method)
	}
	return *v, nil
}

func (r Remote) CreateOwner(ctx context.Context, name string) (store.Owner, string, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodCreateOwner, Name: name})
	if err != nil {
		return store.Owner{}, "", err
	}
	o, err := answer(MethodCreateOwner, rep.Owner)
	return o, rep.Secret, err
}

func (r Remote) ListOwners(ctx context.Context) ([]store.Owner, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodListOwners})
	return rep.Owners, err
}

func (r Remote) SetBudget(ctx context.Context, owner uuid.UUID, messages *int32, costMicros *int64) (store.DailyLimits, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodSetBudget, Owner: owner, Messages: messages, CostMicros: costMicros})
	if err != nil {
		return store.DailyLimits{}, err
	}
	return answer(MethodSetBudget, rep.Limits)
}

func (r Remote) SetKill(ctx context.Context, owner uuid.UUID, engaged bool, reason string) error {
	_, err := r.Invoke(ctx, Call{Method: MethodSetKill, Owner: owner, Engaged: engaged, Reason: reason})
	return err
}

func (r Remote) SetCostCap(ctx context.Context, micros int64) error {
	_, err := r.Invoke(ctx, Call{Method: MethodSetCostCap, CostMicros: &micros})
	return err
}

func (r Remote) Status(ctx context.Context) (store.ControlStatus, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodStatus})
	if err != nil {
		return store.ControlStatus{}, err
	}
	return answer(MethodStatus, rep.Status)
}

func (r Remote) AddKey(ctx context.Context, owner uuid.UUID, name string) (string, store.APIKey, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodAddKey, Owner: owner, Name: name})
	if err != nil {
		return "", store.APIKey{}, err
	}
	k, err := answer(MethodAddKey, rep.Key)
	return rep.Secret, k, err
}

func (r Remote) ListKeys(ctx context.Context, owner uuid.UUID) ([]store.APIKey, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodListKeys, Owner: owner})
	return rep.Keys, err
}

func (r Remote) RevokeKey(ctx context.Context, owner, key uuid.UUID) error {
	_, err := r.Invoke(ctx, Call{Method: MethodRevokeKey, Owner: owner, Key: key})
	return err
}

func (r Remote) CreateHousehold(ctx context.Context, name string) (store.HouseholdInfo, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodCreateHousehold, Household: name})
	if err != nil {
		return store.HouseholdInfo{}, err
	}
	return answer(MethodCreateHousehold, rep.Household)
}

// SetHouseholdMember sends add as the call's Engaged.
func (r Remote) SetHouseholdMember(ctx context.Context, household string, owner uuid.UUID, add bool) error {
	_, err := r.Invoke(ctx, Call{Method: MethodSetHouseholdMember, Household: household, Owner: owner, Engaged: add})
	return err
}

func (r Remote) ListHouseholds(ctx context.Context) ([]store.HouseholdInfo, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodListHouseholds})
	return rep.Households, err
}

func (r Remote) AddHouseholdPolicy(ctx context.Context, p store.HouseholdPolicy) (store.HouseholdPolicy, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodAddHouseholdPolicy, Policy: &p})
	if err != nil {
		return store.HouseholdPolicy{}, err
	}
	return answer(MethodAddHouseholdPolicy, rep.Policy)
}

func (r Remote) ListHouseholdPolicies(ctx context.Context, household string) ([]store.HouseholdPolicy, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodListHouseholdPolicies, Household: household})
	return rep.Policies, err
}

// RemoveHouseholdPolicy sends the policy's id as the call's Key.
func (r Remote) RemoveHouseholdPolicy(ctx context.Context, household string, id uuid.UUID) error {
	_, err := r.Invoke(ctx, Call{Method: MethodRemoveHouseholdPolicy, Household: household, Key: id})
	return err
}

func (r Remote) ListJobs(ctx context.Context, owner uuid.UUID) ([]autonomy.ScheduleView, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodListJobs, Owner: owner})
	return rep.Schedules, err
}

func (r Remote) AddJob(ctx context.Context, owner uuid.UUID, job, cron, tz string, payload json.RawMessage, allowNotify bool) (autonomy.ScheduleView, *steward.Rule, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodAddJob, Owner: owner, Job: job, Cron: cron, TZ: tz, Payload: payload, AllowNotify: allowNotify})
	if err != nil {
		return autonomy.ScheduleView{}, nil, err
	}
	v, err := answer(MethodAddJob, rep.Schedule)
	return v, rep.Rule, err
}

func (r Remote) RemoveJob(ctx context.Context, owner uuid.UUID, job string) error {
	_, err := r.Invoke(ctx, Call{Method: MethodRemoveJob, Owner: owner, Job: job})
	return err
}

// CreateWebhook sends the source as the call's Name.
func (r Remote) CreateWebhook(ctx context.Context, owner uuid.UUID, source string) (autonomy.NewHook, error) {
	rep, err := r.Invoke(ctx, Call{Method: MethodCreateWebhook, Owner: owner, Name: source})
	if err != nil {
		return autonomy.NewHook{}, err
	}
	return answer(MethodCreateWebhook, rep.Hook)
}
