package tools

import (
	"fmt"

	"github.com/stewardhq/steward/internal/steward"
)

// coherent refuses a tool whose declarations contradict its kind or one another. A read
// passes the gate only when it is External and its turn tainted, so a read declaring what
// only the gate reads (money, who may lift the question, links, an undo, a preview, an
// estimate) would run unasked; a write cannot be a playbook; and a rule may lift the question
// of a write that moves money never, of a local one already.
func (t Tool) coherent() error {
	type flag struct {
		name string
		set  bool
	}
	var misplaced []flag
	if t.Kind == steward.KindRead {
		misplaced = []flag{{"Money", t.Money != nil}, {"Rules", t.Rules != steward.RulesByKind},
			{"Links", t.Links != nil}, {"Reversible", t.Reversible},
			{"Preview", t.Preview != nil}, {"Estimate", t.Estimate != nil}}
	} else {
		misplaced = []flag{{"Playbook", t.Playbook}}
	}
	for _, f := range misplaced {
		if f.set {
			return fmt.Errorf("tool %q: a %s cannot declare %s", t.Name, t.Kind, f.name)
		}
	}
	switch {
	case t.Rules > steward.OnlyOwnerYes:
		return fmt.Errorf("tool %q: Rules %d is not a steward.RuleScope", t.Name, t.Rules)
	case t.Rules == steward.RulesMayAllow && t.Money != nil:
		return fmt.Errorf("tool %q: RulesMayAllow cannot apply to a write that moves money (no rule lifts a cap)", t.Name)
	case t.Rules == steward.RulesMayAllow && !t.External:
		return fmt.Errorf("tool %q: RulesMayAllow applies only to an External write (a rule may already allow a local one)", t.Name)
	}
	return nil
}
