package skilltools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/skillpack/skillpacktest"
	"github.com/stewardhq/steward/internal/skills"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/skilltools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// library is one owner's skills over a real database: the real skills service with the
// built-in skills, the offline embedder, the owner's documents and the egress guard (which
// allows nothing: no URL here is fetched).
type library struct {
	svc   *skills.Service
	docs  *document.Service
	owner uuid.UUID
	reg   *tools.Registry
	turn  uuid.UUID
}

func newLibrary(t *testing.T, d testdb.Opened, name string) library {
	t.Helper()
	o, _ := d.Owner(t, name)
	docs := &document.Service{Store: d.Store, Embedder: memory.Offline{}}
	svc := &skills.Service{Store: d.Store, Embedder: memory.Offline{}, Documents: docs, Now: time.Now,
		Client: egress.NewClient(egress.Options{Lookup: egresstest.Lookup, Timeout: skills.FetchTimeout})}
	l := library{svc: svc, docs: docs, owner: o.ID, turn: uuid.New()}
	l.reg = registry(t, svc)
	return l
}

func registry(t *testing.T, s skilltools.Skills) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(skilltools.Tools(s)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func (l library) env(callID string) tools.Env {
	return tools.Env{OwnerID: l.owner, TurnID: l.turn, CallID: callID}
}

func (l library) run(t *testing.T, reg *tools.Registry, callID, name, args string, v any) error {
	t.Helper()
	out, err := reg.Run(context.Background(), l.env(callID), name, json.RawMessage(args))
	if err == nil && v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s output %s: %v", name, out, err)
		}
	}
	return err
}

// document stores a SKILL.md as one of the owner's documents and returns its id.
func (l library) document(t *testing.T, skillName, description string) string {
	t.Helper()
	md := skillpacktest.SkillMD(skillName, description, "# "+skillName+"\nList the receipts, then sort them by month.")
	doc, err := l.docs.Upload(context.Background(), l.owner, "SKILL.md", "text/markdown", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	return doc.ID.String()
}

// noInstalls is the owner's real skills with installing refused.
type noInstalls struct{ skilltools.Skills }

var errWrote = errors.New("a skill was installed")

func (noInstalls) InstallCall(context.Context, uuid.UUID, uuid.UUID, string, string, uuid.UUID) (steward.Skill, error) {
	return steward.Skill{}, errWrote
}

// TestSkillTools runs the skill tools' tests over one real database, an owner each.
func TestSkillTools(t *testing.T) {
	d := testdb.Open(t, 4)
	for name, test := range map[string]func(*testing.T, library){
		"AreWhatTheyDeclare": areWhatTheyDeclare,
		"FindUseAndInstall":  findUseAndInstall,
		"RefuseBadArguments": refuseBadArguments,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newLibrary(t, d, name))
		})
	}
}

// areWhatTheyDeclare: find_skill is a read, use_skill a read whose output is a playbook, and
// install_skill fetches from outside — an External write asked every time, never on a rule,
// with a preview (the card shows the skill and its scan before the yes). The reads run with
// installing refused; install_skill is stopped by it; its preview stages but installs nothing.
func areWhatTheyDeclare(t *testing.T, l library) {
	want := map[string]string{
		"find_skill":    "read",
		"use_skill":     "read playbook",
		"install_skill": "write external rules-never-allow preview",
	}
	id := l.document(t, "receipts", "File receipts by month.")
	args := map[string]string{
		"find_skill":    `{"query":"meeting notes"}`,
		"use_skill":     `{"id":"meeting-notes"}`,
		"install_skill": `{"document_id":"` + id + `"}`,
	}
	guarded := registry(t, noInstalls{l.svc})
	for name, policy := range want {
		tool, _ := guarded.Get(name)
		if got := toolstest.Policy(tool); got != policy {
			t.Errorf("%s declares %q; want %q", name, got, policy)
		}
		if tool.Kind == steward.KindWrite && tool.AlwaysOffered() {
			t.Errorf("%s offers an \"always\" rule", name)
		}
		err := l.run(t, guarded, "c-"+name, name, args[name], nil)
		switch {
		case tool.Kind == steward.KindRead && err != nil:
			t.Errorf("%s, a read, failed with installing refused: %v", name, err)
		case tool.Kind == steward.KindWrite && !errors.Is(err, errWrote):
			t.Errorf("%s, a write, = %v with installing refused; want stopped by the refusal", name, err)
		}
	}
	install, _ := l.reg.Get("install_skill")
	if _, err := install.Preview(context.Background(), l.env("p1"), json.RawMessage(args["install_skill"])); err != nil {
		t.Fatal(err)
	}
	if err := l.run(t, l.reg, "u1", "use_skill", `{"id":"receipts"}`, nil); err == nil {
		t.Error("a previewed skill can be used before the owner's yes")
	}
}

// findUseAndInstall: a built-in skill is found by meaning and its playbook is trusted; a
// skill from the owner's document is previewed for the card (name, description, scan),
// installed by the call whose preview staged it, then found and used — as data, since it
// came from outside.
func findUseAndInstall(t *testing.T, l library) {
	var found struct {
		Skills []steward.SkillMatch `json:"skills"`
	}
	if err := l.run(t, l.reg, "f1", "find_skill", `{"query":"turn my meeting notes into tasks","max_results":3}`, &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Skills) == 0 || len(found.Skills) > 3 || found.Skills[0].Name != "meeting-notes" {
		t.Fatalf("find_skill = %+v; want meeting-notes first, at most 3", found.Skills)
	}
	var p steward.Playbook
	if err := l.run(t, l.reg, "u1", "use_skill", `{"id":" meeting-notes "}`, &p); err != nil || p.Name != "meeting-notes" || !p.Trusted {
		t.Errorf("use_skill meeting-notes = %+v, %v; want the built-in's trusted playbook", p, err)
	}

	id := l.document(t, "receipts", "File receipts by month.")
	args := json.RawMessage(`{"document_id":"` + id + `"}`)
	install, _ := l.reg.Get("install_skill")
	card, err := install.Preview(context.Background(), l.env("i1"), args)
	if err != nil {
		t.Fatal(err)
	}
	for _, words := range []string{"receipts", "File receipts by month.", "Scan:"} {
		if !strings.Contains(card, words) {
			t.Errorf("the card %q does not say %q", card, words)
		}
	}
	var installed struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	}
	if err := l.run(t, l.reg, "i1", "install_skill", string(args), &installed); err != nil || installed.Name != "receipts" ||
		installed.Status != steward.SkillActive {
		t.Fatalf("install_skill = %+v, %v; want receipts active", installed, err)
	}
	if got := l.reg.SayResult("install_skill", args, mustJSON(t, installed), false); got != `Installed “receipts”` {
		t.Errorf("install_skill's result reads %q", got)
	}
	if err := l.run(t, l.reg, "u2", "use_skill", `{"id":"receipts"}`, &p); err != nil || p.Name != "receipts" || p.Trusted ||
		!strings.Contains(p.Text, "sort them by month") {
		t.Errorf("use_skill receipts = %+v, %v; want its playbook, untrusted (from outside)", p, err)
	}
}

// refuseBadArguments: a mistake is an error the model reads and corrects — an *ArgError
// naming the argument for what it sent wrong, a refusal for a skill that is not there — and
// installs nothing.
func refuseBadArguments(t *testing.T, l library) {
	for _, c := range []struct{ tool, args, field, says string }{
		{"find_skill", `{"query":"  "}`, "query", "must not be empty"},
		{"find_skill", `{"query":"notes","max_results":11}`, "max_results", "10"},
		{"use_skill", `{"id":""}`, "id", "must not be empty"},
		{"use_skill", `{"id":"` + strings.Repeat("x", 101) + `"}`, "id", "too long"},
		{"install_skill", `{}`, "", "exactly one of url and document_id"},
		{"install_skill", `{"url":"https://example.com/s.zip","document_id":"` + uuid.NewString() + `"}`, "", "exactly one"},
		{"install_skill", `{"document_id":"skill-7"}`, "document_id", ""},
		{"install_skill", `{"url":"http://example.com/s.zip"}`, "url", "https"},
	} {
		err := l.run(t, l.reg, "x", c.tool, c.args, nil)
		ae, ok := errors.AsType[*tools.ArgError](err)
		if !ok {
			t.Errorf("%s(%s) = %v; want an *ArgError", c.tool, c.args, err)
			continue
		}
		if ae.Field != c.field || !strings.Contains(ae.Error(), c.says) {
			t.Errorf("%s(%s) = %q (field %q); want field %q and %q", c.tool, c.args, ae, ae.Field, c.field, c.says)
		}
	}
	for _, c := range []struct{ tool, args string }{
		{"use_skill", `{"id":"no-such-skill"}`},
		{"install_skill", `{"document_id":"` + uuid.NewString() + `"}`},
	} {
		if err := l.run(t, l.reg, "y", c.tool, c.args, nil); !tools.ForModel(err) {
			t.Errorf("%s(%s) = %v; want an error the model reads", c.tool, c.args, err)
		}
	}
	list, err := l.svc.List(context.Background(), l.owner)
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range list.Skills {
		if !strings.HasPrefix(sk.ID, "builtin:") {
			t.Errorf("refused calls left the skill %+v", sk)
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
