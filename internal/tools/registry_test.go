package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

func TestDeclarationsAreDeterministic(t *testing.T) {
	t.Parallel()
	ts := toolstest.Tools()
	reversed := slices.Clone(ts)
	slices.Reverse(reversed)
	a, err := tools.NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tools.NewRegistry(reversed...)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a.Declarations())
	jb, _ := json.Marshal(b.Declarations())
	if !bytes.Equal(ja, jb) {
		t.Fatalf("declarations differ:\n%s\n%s", ja, jb)
	}
	decls := a.Declarations()
	if !slices.IsSortedFunc(decls, func(x, y llm.ToolDecl) int { return strings.Compare(x.Name, y.Name) }) {
		t.Error("declarations are not sorted by name")
	}
	for _, d := range decls {
		c, err := tools.Canonical(d.Parameters)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if !bytes.Equal(c, d.Parameters) {
			t.Errorf("%s parameters are not canonical:\n%s", d.Name, d.Parameters)
		}
		if d.Description == "" {
			t.Errorf("%s has no description", d.Name)
		}
	}
	// Mutating a returned declaration does not change the registry.
	decls[0].Parameters[0] = 'X'
	if again := a.Declarations(); again[0].Parameters[0] != '{' {
		t.Error("Declarations shares its bytes with callers")
	}
}

func TestBuiltinSchemas(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		kind     steward.ToolKind
		props    []string
		required []string
	}{
		"get_current_time":    {steward.KindRead, []string{"timezone"}, nil},
		"calculate":           {steward.KindRead, []string{"expression"}, []string{"expression"}},
		"create_task":         {steward.KindWrite, []string{"due", "notes", "title"}, []string{"title"}},
		"complete_task":       {steward.KindWrite, []string{"task_id"}, []string{"task_id"}},
		"list_tasks":          {steward.KindRead, []string{"status"}, nil},
		"remember":            {steward.KindWrite, []string{"content", "kind", "subject"}, []string{"content"}},
		"search_memory":       {steward.KindRead, []string{"query"}, []string{"query"}},
		"forget":              {steward.KindWrite, []string{"fact_id"}, []string{"fact_id"}},
		"notify":              {steward.KindWrite, []string{"channel", "message", "title"}, []string{"message"}},
		"ledger_report":       {steward.KindRead, []string{"by", "from", "to"}, []string{"from", "to", "by"}},
		"search_transactions": {steward.KindRead, []string{"account", "from", "max", "min", "query", "to"}, nil},
		"list_accounts":       {steward.KindRead, nil, nil},
		"budget_status":       {steward.KindRead, []string{"month"}, nil},
		"find_subscriptions":  {steward.KindRead, nil, nil},
		"find_anomalies":      {steward.KindRead, []string{"from", "to"}, nil},
		"categorize":          {steward.KindWrite, []string{"category", "transaction_ids"}, []string{"transaction_ids", "category"}},
		"set_budget":          {steward.KindWrite, []string{"category", "currency", "monthly_amount"}, []string{"category", "monthly_amount", "currency"}},
		"record_expense": {steward.KindWrite, []string{"account", "amount", "category", "currency", "date", "merchant"},
			[]string{"date", "amount", "currency", "merchant", "account"}},
	}
	reg := toolstest.Registry()
	if got := reg.Names(); len(got) != len(want) {
		t.Errorf("built-ins = %v, want %d tools", got, len(want))
	}
	for name, w := range want {
		tool, ok := reg.Get(name)
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		if tool.Kind != w.kind {
			t.Errorf("%s kind = %s, want %s", name, tool.Kind, w.kind)
		}
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tool.Parameters(), &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		props := slices.Sorted(maps.Keys(s.Properties))
		if s.Type != "object" || !slices.Equal(props, w.props) || !slices.Equal(s.Required, w.required) {
			t.Errorf("%s schema: type %q, properties %v, required %v; want object, %v, %v", name, s.Type, props, s.Required, w.props, w.required)
		}
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s schema allows additional properties", name)
		}
	}
	var s struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	lt, _ := reg.Get("list_tasks")
	_ = json.Unmarshal(lt.Parameters(), &s)
	if got := s.Properties["status"].Enum; !slices.Equal(got, []string{"open", "done", "all"}) {
		t.Errorf("list_tasks status enum = %v", got)
	}
}

func TestNewRegistryErrors(t *testing.T) {
	t.Parallel()
	type args struct {
		X string `json:"x"`
	}
	ok := func(name string) tools.Tool {
		return tools.New(name, "d", steward.KindRead, func(context.Context, tools.Env, args) (any, error) { return nil, nil })
	}
	tests := []struct {
		name  string
		tools []tools.Tool
		want  string
	}{
		{"duplicate", []tools.Tool{ok("a"), ok("b"), ok("a")}, `duplicate tool "a"`},
		{"bad name", []tools.Tool{ok("no spaces")}, "invalid name"},
		{"empty name", []tools.Tool{ok("")}, "invalid name"},
		{"bad kind", []tools.Tool{tools.New("k", "d", steward.ToolKind("admin"), func(context.Context, tools.Env, args) (any, error) { return nil, nil })}, "unknown kind"},
		{"no description", []tools.Tool{tools.New("k", "", steward.KindRead, func(context.Context, tools.Env, args) (any, error) { return nil, nil })}, "empty description"},
		{"nil run", []tools.Tool{tools.New[args]("k", "d", steward.KindRead, nil)}, "nil run"},
		{"not a struct", []tools.Tool{tools.New("k", "d", steward.KindRead, func(context.Context, tools.Env, string) (any, error) { return nil, nil })}, "not a struct"},
		{"unsupported field", []tools.Tool{tools.New("k", "d", steward.KindRead, func(context.Context, tools.Env, struct{ C chan int }) (any, error) { return nil, nil })}, "derive schema"},
		{"zero tool", []tools.Tool{{Name: "z", Description: "d", Kind: steward.KindRead}}, "not built with tools.New"},
	}
	for _, tc := range tests {
		_, err := tools.NewRegistry(tc.tools...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewRegistry = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := tools.NewRegistry(); err != nil {
		t.Errorf("empty registry: %v", err)
	}
}

func TestRunOutputAndConcurrency(t *testing.T) {
	t.Parallel()
	reg := toolstest.Registry()
	env, data := toolstest.Env()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := reg.Run(context.Background(), env, "create_task", json.RawMessage(`{"title":"t"}`)); err != nil {
				t.Error(err)
			}
			if _, err := reg.Run(context.Background(), env, "calculate", json.RawMessage(`{"expression":"2^10"}`)); err != nil {
				t.Error(err)
			}
			_ = reg.Declarations()
		})
	}
	wg.Wait()
	if len(data.Tasks) != 20 {
		t.Errorf("%d tasks, want 20", len(data.Tasks))
	}
}

func TestDataToolWithoutData(t *testing.T) {
	t.Parallel()
	_, err := toolstest.Registry().Run(context.Background(), tools.Env{}, "list_tasks", nil)
	if err == nil || !strings.Contains(err.Error(), "data store") {
		t.Errorf("list_tasks without Data = %v", err)
	}
}

// TestRegistryRefusesIncoherentTools: a tool cannot declare what its kind makes meaningless
// or contradictory — a read passes the gate only as a tainted turn's External read, so a read
// declaring money, who may lift the question, links, an undo or a preview would run unasked;
// a write cannot be a playbook; a rule may never lift a money write's question, and needs no
// leave to lift a local write's.
func TestRegistryRefusesIncoherentTools(t *testing.T) {
	t.Parallel()
	type amountArgs struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	}
	run := func(context.Context, tools.Env, amountArgs) (any, error) { return nil, nil }
	read := func() tools.Tool { return tools.New("r", "A read.", steward.KindRead, run) }
	write := func() tools.Tool { return tools.New("w", "A write.", steward.KindWrite, run) }
	preview := func(context.Context, tools.Env, json.RawMessage) (string, error) { return "", nil }
	money := &tools.MoneyArgs{Amount: "amount", Currency: "currency"}
	cases := []struct {
		name  string
		base  func() tools.Tool
		set   func(t *tools.Tool)
		wants string
	}{
		{"read with money", read, func(t *tools.Tool) { t.Money = money }, "a read cannot declare Money"},
		{"read only-owner-yes", read, func(t *tools.Tool) { t.Rules = steward.OnlyOwnerYes }, "a read cannot declare Rules"},
		{"read rules-never-allow", read, func(t *tools.Tool) { t.Rules = steward.RulesNeverAllow }, "a read cannot declare Rules"},
		{"read rules-may-allow", read, func(t *tools.Tool) { t.Rules = steward.RulesMayAllow }, "a read cannot declare Rules"},
		{"read links", read, func(t *tools.Tool) { t.Links = func(json.RawMessage) []string { return nil } }, "a read cannot declare Links"},
		{"read reversible", read, func(t *tools.Tool) { t.Reversible = true }, "a read cannot declare Reversible"},
		{"read preview", read, func(t *tools.Tool) { t.Preview = preview }, "a read cannot declare Preview"},
		{"write playbook", write, func(t *tools.Tool) { t.Playbook = true }, "a write cannot declare Playbook"},
		{"rules outside the scope", write, func(t *tools.Tool) { t.Rules = steward.OnlyOwnerYes + 1 }, "is not a steward.RuleScope"},
		{"rules-may-allow on a money write", write, func(t *tools.Tool) { t.External, t.Money, t.Rules = true, money, steward.RulesMayAllow },
			"RulesMayAllow cannot apply to a write that moves money"},
		{"rules-may-allow on a local write", write, func(t *tools.Tool) { t.Rules = steward.RulesMayAllow }, "RulesMayAllow applies only to an External write"},
	}
	for _, c := range cases {
		tool := c.base()
		c.set(&tool)
		_, err := tools.NewRegistry(tool)
		if err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("%s: NewRegistry = %v, want an error saying %q", c.name, err, c.wants)
		}
	}
	ok := write()
	ok.External, ok.Reversible, ok.Money, ok.Rules = true, true, money, steward.OnlyOwnerYes
	fetch := read()
	fetch.External, fetch.Untrusted = true, true
	if _, err := tools.NewRegistry(ok, fetch); err != nil {
		t.Errorf("coherent tools were refused: %v", err)
	}
}
