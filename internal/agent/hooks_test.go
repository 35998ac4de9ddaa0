package agent_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
)

// TestRunnerTakesHooksAtConstruction: the services a Runner calls back into are given to
// agent.New and nowhere else (docs/ARCHITECTURE.md §7). The Runner's only exported field is
// its Config, and no setting of Config is a callback into a service (a function taking a
// context): such a function is a hook, and a hook is a field of Hooks, which the Runner keeps
// unexported. TestNoRunnerFieldAssigned (internal/steward) checks nobody assigns the settings.
func TestRunnerTakesHooksAtConstruction(t *testing.T) {
	rt := reflect.TypeFor[agent.Runner]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.IsExported() && !(f.Anonymous && f.Type == reflect.TypeFor[agent.Config]()) {
			t.Errorf("agent.Runner has the exported field %s: give it through agent.Config or agent.Hooks to agent.New", f.Name)
		}
	}
	ctxType := reflect.TypeFor[context.Context]()
	ct := reflect.TypeFor[agent.Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		if f.Type.Kind() == reflect.Func && f.Type.NumIn() > 0 && f.Type.In(0) == ctxType {
			t.Errorf("agent.Config.%s is a callback into a service: make it a field of agent.Hooks", f.Name)
		}
	}
	ht := reflect.TypeFor[agent.Hooks]()
	if ht.NumField() == 0 {
		t.Fatal("agent.Hooks has no field; the check reads nothing")
	}
}
