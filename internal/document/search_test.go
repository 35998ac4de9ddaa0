package document_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/document/documenttest"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/doctools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
)

// The pages of the report the search tests upload: the sentence to find is on page 3.
var reportPages = []string{
	"Quarterly report. Revenue grew in the northern region and the team hired two engineers.",
	"Expenses: office rent rose slightly; travel costs fell after the move to video calls.",
	"The lighthouse keeper repainted the spiral staircase in cobalt blue during the storm season.",
}

const page3Query = "lighthouse keeper repainted the spiral staircase cobalt blue"

// searchResults runs search_documents for owner through a turn and returns what the model
// got: the tool's results, decoded from their data block.
func searchResults(t *testing.T, e agentEnv, owner uuid.UUID, query string) ([]steward.DocumentHit, string) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"query": query})
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("s1", "search_documents", string(args)))),
		scripted.Reply(scripted.Text("Found it.")))
	if v := e.runAs(t, owner, model, "find "+query); v.Status != steward.StatusCompleted {
		t.Fatalf("turn %+v", v)
	}
	block := lastToolBlock(t, model.Requests()[1])
	if !strings.HasPrefix(block, `<data source="tool:search_documents">`) {
		t.Fatalf("search results did not reach the model in a data block:\n%s", block)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(block, `<data source="tool:search_documents">`), "</data>")
	var out struct {
		Results []steward.DocumentHit `json:"results"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &out); err != nil {
		t.Fatalf("results %s: %v", body, err)
	}
	return out.Results, block
}

// TestSearchDocumentsFindsPage3: search_documents finds a sentence on page 3 of a PDF and
// names the document and page 3; another owner's search finds nothing of it; once the
// document is deleted, search finds nothing either.
func TestSearchDocumentsFindsPage3(t *testing.T) {
	t.Parallel()
	e := newSearchEnv(t)
	ctx := context.Background()
	doc, err := e.docs.Upload(ctx, e.owner, "report.pdf", "application/pdf", documenttest.PDF(t, reportPages...))
	if err != nil {
		t.Fatal(err)
	}
	hits, _ := searchResults(t, e.agentEnv, e.a, page3Query)
	if len(hits) == 0 {
		t.Fatalf("search_documents found nothing for %q", page3Query)
	}
	top := hits[0]
	if top.DocumentID != doc.ID || top.Name != "report.pdf" || top.Section != "page 3" || !strings.Contains(top.Text, "spiral staircase in cobalt blue") {
		t.Fatalf("top hit %+v; want report.pdf, page 3, with the sentence", top)
	}

	if hits, _ := searchResults(t, e.agentEnv, e.b, page3Query); len(hits) != 0 {
		t.Fatalf("owner B's search found owner A's document: %+v", hits)
	}

	if err := e.docs.Delete(ctx, e.owner, doc.ID); err != nil {
		t.Fatal(err)
	}
	if hits, _ := searchResults(t, e.agentEnv, e.a, page3Query); len(hits) != 0 {
		t.Fatalf("a deleted document is still found: %+v", hits)
	}
}

// TestRecallBringsDocumentChunk: a later turn about the document's subject gets a chunk of
// it recalled into the model's request, inside a data block of untrusted document text,
// and the turn is untrusted.
func TestRecallBringsDocumentChunk(t *testing.T) {
	t.Parallel()
	e := newSearchEnv(t)
	ctx := context.Background()
	doc, err := e.docs.Upload(ctx, e.owner, "report.pdf", "", documenttest.PDF(t, reportPages...))
	if err != nil {
		t.Fatal(err)
	}
	const question = "What colour did the lighthouse keeper repaint the spiral staircase?"
	block := e.recalled(t, question)
	if block == "" {
		t.Fatal("no memory:document data block in the request's context")
	}
	if !strings.Contains(block, "cobalt blue") || !strings.Contains(block, "report.pdf (page 3)") {
		t.Fatalf("the recalled document block lacks page 3's chunk:\n%s", block)
	}

	if err := e.docs.Delete(ctx, e.owner, doc.ID); err != nil {
		t.Fatal(err)
	}
	if block := e.recalled(t, question); block != "" {
		t.Fatalf("a deleted document is still recalled:\n%s", block)
	}
}

// recalled runs a turn of owner A and returns the memory:document data block of the
// model's request ("" when there is none).
func (e searchEnv) recalled(t *testing.T, message string) string {
	t.Helper()
	model := scripted.New(scripted.Reply(scripted.Text("Blue.")))
	if v := e.runAs(t, e.a, model, message); v.Status != steward.StatusCompleted {
		t.Fatalf("turn %+v", v)
	}
	req := model.Requests()[0]
	var context string
	for _, p := range req.Messages[len(req.Messages)-1].Parts {
		if p.Context {
			context += p.Text
		}
	}
	start := strings.Index(context, `<data source="memory:document">`)
	if start < 0 {
		return ""
	}
	block := context[start:]
	return block[:strings.Index(block, "</data>")+len("</data>")]
}

// searchEnv is an agentEnv whose documents are embedded (the offline embedder), with
// memory recall on, and two owners.
type searchEnv struct {
	agentEnv
	a, b uuid.UUID
}

func newSearchEnv(t *testing.T) searchEnv {
	t.Helper()
	e := newAgentEnv(t)
	e.docs.Embedder = memory.Offline{}
	other, _ := e.db.Owner(t, "other")
	return searchEnv{agentEnv: e, a: e.owner, b: other.ID}
}

// runAs runs a turn for owner with the document tools and memory recall.
func (e agentEnv) runAs(t *testing.T, owner uuid.UUID, model *scripted.Model, message string) steward.View {
	t.Helper()
	reg, err := tools.NewRegistry(append(toolstest.Tools(), doctools.Tools(e.docs, nil)...)...)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.New(e.db.Store, memory.Offline{}, nil)
	runner := agent.New(agent.Config{Model: model, Tools: reg, Store: e.db.Store, Gate: &safety.Gate{}, Memory: mem, Control: &safety.Control{GlobalCost: e.db.Door.GlobalCostToday}, MaxIterations: 6, SuspendTTL: time.Hour}, agent.Hooks{})
	v, err := runner.Start(context.Background(), agent.Input{OwnerID: owner, Message: message}, nil)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	return v
}
