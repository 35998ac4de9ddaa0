package tools

import (
	"fmt"

	"github.com/stewardhq/steward/internal/steward"
)

// coherent refuses a tool whose declarations contradict its kind or one another. A read
// never passes the gate, so a read declaring what only the gate reads (money, always-ask,
// an outside effect, an undo, a preview) would run unasked; a write cannot be an egress read
// or a playbook; and a write cannot be both allowed and never allowed to be lifted by a rule.
func (t Tool) coherent() error {
	type flag struct {
		name string
		set  bool
	}
	var misplaced []flag
	if t.Kind == steward.KindRead {
		misplaced = []flag{{"Money", t.Money != nil}, {"AlwaysAsk", t.AlwaysAsk}, {"NoAlways", t.NoAlways},
			{"RulesMayAllow", t.RulesMayAllow}, {"External", t.External}, {"Reversible", t.Reversible},
			{"Preview", t.Preview != nil}, {"Estimate", t.Estimate != nil}}
	} else {
		misplaced = []flag{{"Egress", t.Egress}, {"Playbook", t.Playbook}}
	}
	for _, f := range misplaced {
		if f.set {
			return fmt.Errorf("tool %q: a %s cannot declare %s", t.Name, t.Kind, f.name)
		}
	}
	switch {
	case t.RulesMayAllow && t.AlwaysAsk:
		return fmt.Errorf("tool %q: AlwaysAsk and RulesMayAllow contradict (nothing but the owner's yes runs it)", t.Name)
	case t.RulesMayAllow && t.NoAlways:
		return fmt.Errorf("tool %q: NoAlways and RulesMayAllow contradict", t.Name)
	case t.RulesMayAllow && !t.External:
		return fmt.Errorf("tool %q: RulesMayAllow applies only to an External write (a rule may already allow a local one)", t.Name)
	}
	return nil
}
