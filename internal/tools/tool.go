// Package tools is the framework of what the agent can do: the Tool type with its kind (read
// or write), a JSON Schema of its arguments derived from a Go struct, validation of the
// arguments a model sends, the Registry the agent looks tools up in, the one-line summaries
// of a call (Say) and the ports a tool run gets (Env). The tools themselves live in toolsets,
// one package each under this one (builtin, ledgertools, webtools, doctools), and
// internal/app registers them (docs/ARCHITECTURE.md §1, "Tools and toolsets").
//
// Read tools run as soon as the model asks; write tools go through the safety gate first and
// may wait for a human (see the design, section 2). Invalid arguments never crash anything:
// they come back as an *ArgError whose message the model can read and correct.
//
// Tools reach owner data only through the Data interface in Env, which the store implements
// inside the caller's transaction, so a write tool's effect commits with its journal row.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// Env is what every tool run receives besides its arguments.
type Env struct {
	// OwnerID is the owner the turn runs for.
	OwnerID uuid.UUID
	// TurnID is the turn that called the tool; CallID the call.
	TurnID uuid.UUID
	CallID string
	// Now is the clock (nil: the system clock).
	Now steward.Clock
	// Data is the owner-scoped persistence of the built-in tools; nil if the caller has none.
	Data Data
	// Ledger is the owner's double-entry book; nil if the caller has none.
	Ledger Ledger
	// Calls reads the turn's call journal, each read in its own short transaction; nil if the
	// caller has none.
	Calls Calls
	// Undo receives the inverse of what a Reversible write changed, for the journal (the
	// undo window, docs/ARCHITECTURE.md §2); nil when the caller keeps none.
	Undo func(steward.Inverse)
	// Taint is what tainted the turn (steward.State.Taint), "" when nothing did: a write
	// marks what it stores from such a turn untrusted (docs/ARCHITECTURE.md §3).
	Taint string
	// Tainted is called by a read whose output holds untrusted text (search_memory finding
	// a fact a tainted turn stored), with what in words: the turn is tainted by it. nil when
	// the caller keeps no taint.
	Tainted func(source string)
	// Spend is called by a tool that made a model call of its own (web_search's grounded
	// search) with the model that answered and its usage: the turn's cost and the owner's
	// budget count it like the turn's own calls. nil when the caller counts none.
	Spend func(model string, u steward.Usage)
}

// Spent hands a tool's own model call to the caller, if it counts them (Env.Spend).
func (e Env) Spent(model string, u steward.Usage) {
	if e.Spend != nil && model != "" {
		e.Spend(model, u)
	}
}

// TaintedBy taints the caller's turn by source, if the caller keeps a taint (Env.Tainted).
func (e Env) TaintedBy(source string) {
	if e.Tainted != nil {
		e.Tainted(source)
	}
}

// UndoWith hands the inverse of a write to the caller, if it keeps one.
func (e Env) UndoWith(inv steward.Inverse) {
	if e.Undo != nil {
		e.Undo(inv)
	}
}

// Time returns the current time from the Env's clock.
func (e Env) Time() time.Time { return e.Now.Now() }

// errNoData is returned by tools that need Env.Data when the caller gave none.
var errNoData = errors.New("tool needs a data store, but none is configured")

// RequireData returns the Env's Data or an error when it is missing.
func (e Env) RequireData() (Data, error) {
	if e.Data == nil {
		return nil, errNoData
	}
	return e.Data, nil
}

// Checker is implemented (on the pointer) by argument types that need checks a JSON Schema
// cannot express, such as a trimmed title's length or a parsable date. Check runs after the
// arguments were decoded and may normalise them (trim spaces, fill defaults). An error it
// returns reaches the model as an *ArgError.
type Checker interface {
	Check() error
}

// Tool is something the model can call. Build one with New; the zero value is not usable.
type Tool struct {
	// Name is what the model calls the tool by, e.g. "create_task".
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Kind is Read or Write.
	Kind steward.ToolKind
	// External marks a call that reaches outside Steward. A write's effect leaves Postgres
	// (mail, outside webhooks, a broker): it is journaled "executing" in a commit of its own
	// before it runs, so a crash mid-call is detected and never silently re-run; writes that
	// only touch Postgres run in the same transaction as their journal row instead. A read
	// sends its arguments out (web_fetch's "url", an MCP server's tool): in a tainted turn it
	// waits for the owner unless the owner's own message named that URL, and an approved one
	// runs outside any transaction like an External write. Either way no standing allow rule
	// runs it (unless Rules says RulesMayAllow).
	External bool
	// Money names the arguments holding the amount (integer minor units) and currency of
	// a write that moves money; hard caps apply to it before anyone is asked. Nil for tools
	// that move no money.
	Money *MoneyArgs
	// Rules is what may run a write without the owner's yes to that very call: by default
	// (steward.RulesByKind) a standing allow rule or auto mode, unless it moves money or is
	// External; steward.RulesMayAllow, steward.RulesNeverAllow or steward.OnlyOwnerYes say
	// otherwise (RuleScope is what a call of it gets).
	Rules steward.RuleScope
	// Links, when set, returns the links a write puts before the owner (notify's title and
	// message), which the owner's channel, its servers or its client may open: in a tainted
	// turn a call carrying a link the owner did not write waits for the owner like an egress
	// call (docs/ARCHITECTURE.md §3).
	Links func(args json.RawMessage) []string
	// Untrusted marks a tool whose output is content from outside (a page, a search result,
	// a document): a turn that runs it is tainted (docs/ARCHITECTURE.md §3).
	Untrusted bool
	// Reversible marks a write whose whole effect is in the owner's rows and which hands
	// its inverse to Env.Undo: it can be undone within the undo window. Writes with effects
	// outside the database (notify, web requests, MCP tools) are not.
	Reversible bool
	// Playbook marks a read whose output is a steward.Playbook (use_skill): the loop records
	// the use on the turn, gives a trusted playbook to the model as instructions and any
	// other inside a data block, tainting the turn (docs/ARCHITECTURE.md §3, §16).
	Playbook bool
	// Preview, when set, words what a write will do for its approval card, from more than
	// its arguments (install_skill: the skill it fetched and scanned). The loop runs it
	// outside any transaction before the gate, and not in a tainted turn for a URL the
	// owner did not name; an *ArgError it returns refuses the call.
	Preview func(ctx context.Context, env Env, args json.RawMessage) (string, error)
	// Estimate, when set, is what a write will move (an order's notional at the quote), read
	// with Preview before the gate: a household policy's minimum is compared with it. An
	// error leaves it unknown (a policy's minimum then matches).
	Estimate func(ctx context.Context, env Env, args json.RawMessage) (*steward.Money, error)

	params json.RawMessage // canonical JSON Schema of the arguments
	args   []string        // the arguments' names, in declaration order
	check  func(args json.RawMessage) error
	exec   func(ctx context.Context, env Env, args json.RawMessage) (any, error)
	err    error // a construction error, reported by NewRegistry
	// summary words the tool's calls and results for a person (Say); nil: generically.
	summary *summary
}

// WithPreview returns t with its Preview: preview gets the call's decoded arguments (A, as
// the tool's run gets them).
func WithPreview[A any](t Tool, preview func(ctx context.Context, env Env, args A) (string, error)) Tool {
	t.Preview = func(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
		var a A
		if err := json.Unmarshal(raw, &a); err != nil {
			return "", &ArgError{Msg: "unreadable arguments", Err: err}
		}
		if c, ok := any(&a).(Checker); ok {
			if err := c.Check(); err != nil {
				return "", t.named(err)
			}
		}
		s, err := preview(ctx, env, a)
		return s, t.named(err)
	}
	return t
}

// MoneyArgs names a tool's amount and currency arguments.
type MoneyArgs struct {
	Amount   string // an integer in minor units, e.g. "amount_minor"
	Currency string // an ISO 4217 code, e.g. "currency"
}

// New builds a tool whose arguments are the Go struct type A. The JSON Schema of the
// arguments is derived from A: property names from `json` tags, descriptions from
// `jsonschema` tags, allowed values from `enum:"a,b,c"` tags; fields without omitempty are
// required and unknown properties are rejected. If *A implements Checker, Check runs after
// decoding.
//
// New does not panic: if A cannot be described as a JSON object schema, the error is kept
// and reported by NewRegistry (and by Run).
func New[A any](name, description string, kind steward.ToolKind, run func(ctx context.Context, env Env, args A) (any, error)) Tool {
	t := Tool{Name: name, Description: description, Kind: kind}
	if run == nil {
		t.err = fmt.Errorf("tool %q: nil run function", name)
		return t
	}
	schema, err := schemaFor[A]()
	if err != nil {
		t.err = fmt.Errorf("tool %q: %w", name, err)
		return t
	}
	t.params, err = canonicalSchema(schema)
	if err != nil {
		t.err = fmt.Errorf("tool %q: %w", name, err)
		return t
	}
	t.args = propertyNames(schema)
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.err = fmt.Errorf("tool %q: resolve schema: %w", name, err)
		return t
	}
	t.check = func(raw json.RawMessage) error {
		_, err := decodeArgs[A](resolved, raw)
		return err
	}
	t.exec = func(ctx context.Context, env Env, raw json.RawMessage) (any, error) {
		args, err := decodeArgs[A](resolved, raw)
		if err != nil {
			return nil, err
		}
		return run(ctx, env, args)
	}
	return t
}

// AlwaysOffered reports whether an approval of this tool may store a standing allow rule
// ("always"), and whether allow rules apply to it at all. Money and External tools never
// offer it unless they say so (Rules): their calls are asked every time, and no rule lifts a
// cap (docs/SECURITY.md, "Safety, in code").
func (t Tool) AlwaysOffered() bool {
	return t.NoRuleWhy() == ""
}

// RuleScope is what may run a call of this tool without the owner's yes to it, its Rules
// resolved: steward.OnlyOwnerYes, steward.RulesNeverAllow (NoRuleWhy) or
// steward.RulesMayAllow.
func (t Tool) RuleScope() steward.RuleScope {
	switch {
	case t.Rules == steward.OnlyOwnerYes:
		return steward.OnlyOwnerYes
	case t.NoRuleWhy() != "":
		return steward.RulesNeverAllow
	}
	return steward.RulesMayAllow
}

// NoRuleWhy says in words why no standing allow rule runs this tool, "" when one may
// (AlwaysOffered): an allow rule for it is refused when the owner writes one
// (Registry.CheckRule), never stored to be ignored.
func (t Tool) NoRuleWhy() string {
	switch {
	case t.Rules == steward.OnlyOwnerYes:
		return "only your yes runs it, every time"
	case t.Money != nil:
		return "it moves money, so it is asked every time"
	case t.External && t.Rules != steward.RulesMayAllow:
		return "it sends data out of Steward, so it is asked every time"
	case t.Rules == steward.RulesNeverAllow:
		return "it is asked every time"
	}
	return ""
}

// Parameters returns the tool's argument schema as canonical JSON (sorted keys, no
// whitespace).
func (t Tool) Parameters() json.RawMessage {
	return append(json.RawMessage(nil), t.params...)
}

// Decl returns the declaration of the tool for the model.
func (t Tool) Decl() llm.ToolDecl {
	return llm.ToolDecl{Name: t.Name, Description: t.Description, Parameters: t.Parameters()}
}

// Validate checks args against the tool's schema and its Checker without running the tool,
// e.g. before a write call is suspended for approval. Invalid arguments give an *ArgError.
func (t Tool) Validate(args json.RawMessage) error {
	if t.err != nil {
		return t.err
	}
	if t.check == nil {
		return fmt.Errorf("tool %q was not built with tools.New", t.Name)
	}
	return t.named(t.check(args))
}

// Run validates args, runs the tool and returns its output as JSON. Invalid arguments give
// an *ArgError (also when the tool itself rejects them, e.g. an unknown task id), a call it
// could not carry out a *Refusal; other errors are failures of the tool.
func (t Tool) Run(ctx context.Context, env Env, args json.RawMessage) (json.RawMessage, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.exec == nil {
		return nil, fmt.Errorf("tool %q was not built with tools.New", t.Name)
	}
	out, err := t.exec(ctx, env, args)
	if err != nil {
		return nil, t.named(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tool %s: encode output: %w", t.Name, err)
	}
	return b, nil
}

// named fills in the tool name of an *ArgError or a *Refusal; other errors pass unchanged.
func (t Tool) named(err error) error {
	if ae, ok := errors.AsType[*ArgError](err); ok && ae.Tool == "" {
		ae.Tool = t.Name
	}
	if re, ok := errors.AsType[*Refusal](err); ok && re.Tool == "" {
		re.Tool = t.Name
	}
	return err
}

// ArgError reports arguments the model must correct: bad JSON, a wrong type, a missing or
// unknown property, or a value the tool rejects. Its message is written for the model.
type ArgError struct {
	// Tool is the tool that rejected the arguments.
	Tool string
	// Field is the argument at fault, if one is.
	Field string
	// Msg says what is wrong, in words the model can act on.
	Msg string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns the readable message, e.g. "invalid arguments for create_task: title: must
// not be empty".
func (e *ArgError) Error() string {
	s := "invalid arguments"
	if e.Tool != "" {
		s += " for " + e.Tool
	}
	s += ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

// Unwrap returns the underlying cause.
func (e *ArgError) Unwrap() error { return e.Err }

// Refusal reports a call the tool could not carry out for a reason outside its arguments: no
// account connected, a server that does not answer, a login refused, a limit reached. The
// model reads it as the call's result and can tell the owner; unlike an *ArgError, changing
// the arguments will not help.
type Refusal struct {
	// Tool is the tool that refused.
	Tool string
	// Msg says why, in words the model can pass on.
	Msg string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns the readable message, e.g. "search_mail could not run: no mail account is
// connected".
func (e *Refusal) Error() string {
	if e.Tool == "" {
		return "could not run: " + e.Msg
	}
	return e.Tool + " could not run: " + e.Msg
}

// Unwrap returns the underlying cause.
func (e *Refusal) Unwrap() error { return e.Err }

// Refusedf returns a *Refusal with a formatted message.
func Refusedf(format string, a ...any) *Refusal {
	return &Refusal{Msg: fmt.Sprintf(format, a...)}
}

// ServiceError turns a service's error in words into one the model reads: an invalid
// argument (steward.CodeInvalid) as an *ArgError about field, any other refusal in words (not
// found, a conflict, unavailable…) as a *Refusal. An internal error, a write whose outcome is
// unknown (steward.ErrOutcomeUnknown: journaled unknown, never a refusal) or a cancelled ctx
// passes unchanged, as does nil.
func ServiceError(ctx context.Context, field string, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, steward.ErrOutcomeUnknown) {
		return err
	}
	var se *steward.Error
	switch {
	case !errors.As(err, &se) || se.Code == steward.CodeInternal:
		return err
	case se.Code == steward.CodeInvalid:
		return &ArgError{Field: field, Msg: se.Message, Err: err}
	default:
		return &Refusal{Msg: se.Message, Err: err}
	}
}

// ForModel reports whether err is one the model reads as the call's result (an *ArgError or
// a *Refusal) rather than a failure of the tool.
func ForModel(err error) bool {
	var ae *ArgError
	var re *Refusal
	return errors.As(err, &ae) || errors.As(err, &re)
}
