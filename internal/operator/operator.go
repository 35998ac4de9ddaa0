// Package operator is an operator's work on a deployment: owners, their keys and budgets,
// and the kill switches (docs/ARCHITECTURE.md §14, docs/DEPLOY.md "Day two"). It is one
// service that every face calls: the local CLI with Local, over a database connection;
// `steward remote` with Remote, which sends each call to the deployment's migrate function;
// and that function answers the call with Local (Serve). So a command does the same work
// whether the database is on the operator's machine or in a VPC they cannot reach.
package operator

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/control"
	"github.com/stewardhq/steward/internal/store"
)

// Service is what an operator may do.
type Service interface {
	// CreateOwner creates an owner and its first API key (returned once).
	CreateOwner(ctx context.Context, name string) (store.Owner, string, error)
	ListOwners(ctx context.Context) ([]store.Owner, error)
	// SetBudget changes an owner's daily limits (nil keeps one) and returns both.
	SetBudget(ctx context.Context, owner uuid.UUID, messages *int32, costMicros *int64) (store.DailyLimits, error)
	// SetKill engages or releases a kill switch: the deployment's (owner uuid.Nil) or an
	// owner's.
	SetKill(ctx context.Context, owner uuid.UUID, engaged bool, reason string) error
	Status(ctx context.Context) (store.ControlStatus, error)
	// AddKey creates another API key for an owner (returned once).
	AddKey(ctx context.Context, owner uuid.UUID, name string) (string, store.APIKey, error)
	ListKeys(ctx context.Context, owner uuid.UUID) ([]store.APIKey, error)
	RevokeKey(ctx context.Context, owner, key uuid.UUID) error
}

// Local is the service over a database connection as steward_owner.
type Local struct{ Door *store.Door }

var _ Service = Local{}

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

// The methods of a Call.
const (
	MethodCreateOwner = "create-owner"
	MethodListOwners  = "list-owners"
	MethodSetBudget   = "set-budget"
	MethodSetKill     = "set-kill"
	MethodStatus      = "status"
	MethodAddKey      = "add-key"
	MethodListKeys    = "list-keys"
	MethodRevokeKey   = "revoke-key"
)

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
}

// Serve answers c with s: the migrate function's side of Remote.
func Serve(ctx context.Context, s Service, c Call) (Reply, error) {
	var r Reply
	var err error
	switch c.Method {
	case MethodCreateOwner:
		var o store.Owner
		o, r.Secret, err = s.CreateOwner(ctx, c.Name)
		r.Owner = &o
	case MethodListOwners:
		r.Owners, err = s.ListOwners(ctx)
	case MethodSetBudget:
		var l store.DailyLimits
		l, err = s.SetBudget(ctx, c.Owner, c.Messages, c.CostMicros)
		r.Limits = &l
	case MethodSetKill:
		err = s.SetKill(ctx, c.Owner, c.Engaged, c.Reason)
	case MethodStatus:
		var st store.ControlStatus
		st, err = s.Status(ctx)
		r.Status = &st
	case MethodAddKey:
		var k store.APIKey
		r.Secret, k, err = s.AddKey(ctx, c.Owner, c.Name)
		r.Key = &k
	case MethodListKeys:
		r.Keys, err = s.ListKeys(ctx, c.Owner)
	case MethodRevokeKey:
		err = s.RevokeKey(ctx, c.Owner, c.Key)
	default:
		err = fmt.Errorf("unknown operator method %q (is the CLI newer than the deployment? upgrade it)", c.Method)
	}
	if err != nil {
		return Reply{}, err
	}
	return r, nil
}

// Remote is the service of a deployment reached through Invoke, which sends a call to its
// migrate function and returns the function's reply (or its error).
type Remote struct {
	Invoke func(ctx context.Context, c Call) (Reply, error)
}

var _ Service = Remote{}

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
