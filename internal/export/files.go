package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// conversations writes each conversation as JSON and as Markdown.
func (x *exporter) conversations() error {
	after := uuid.Nil
	for {
		var convs []steward.Conversation
		if err := x.read(func(tx *store.Tx) (err error) {
			convs, err = tx.Export.Conversations(x.ctx, after, PageSize)
			return err
		}); err != nil {
			return err
		}
		for _, c := range convs {
			if err := x.conversation(c); err != nil {
				return err
			}
			after = c.ID
		}
		if len(convs) < PageSize {
			return nil
		}
	}
}

// message is a message as the export writes it.
type message struct {
	Seq         int               `json:"seq"`
	TurnID      uuid.UUID         `json:"turn_id"`
	Role        string            `json:"role"`
	Text        string            `json:"text,omitempty"`
	ToolCalls   []json.RawMessage `json:"tool_calls,omitempty"`
	ToolResults []json.RawMessage `json:"tool_results,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
}

func render(m steward.StoredMessage) message {
	v := message{Seq: m.Seq, TurnID: m.TurnID, CreatedAt: m.CreatedAt, Role: "user", Text: m.Message.Text()}
	if m.Message.Role == steward.RoleModel {
		v.Role = "assistant"
	}
	for _, p := range m.Message.Parts {
		switch {
		case p.ToolCall != nil:
			b, _ := json.Marshal(map[string]any{"call_id": p.ToolCall.ID, "tool": p.ToolCall.Name, "args": p.ToolCall.Args})
			v.ToolCalls = append(v.ToolCalls, b)
		case p.ToolResult != nil:
			v.Role = "tool"
			b, _ := json.Marshal(map[string]any{"call_id": p.ToolResult.CallID, "tool": p.ToolResult.Name, "output": p.ToolResult.Output, "is_error": p.ToolResult.IsError})
			v.ToolResults = append(v.ToolResults, b)
		}
	}
	return v
}

// conversation writes one conversation's two files, its messages read a page at a time
// (twice: a zip writes one file after the other).
func (x *exporter) conversation(c steward.Conversation) error {
	f, err := x.create("conversations/" + c.ID.String() + ".json")
	if err != nil {
		return err
	}
	head, err := json.Marshal(map[string]any{"id": c.ID, "title": c.Title, "created_at": c.CreatedAt, "updated_at": c.UpdatedAt})
	if err != nil {
		return err
	}
	if _, err := f.Write(append(head[:len(head)-1], `,"messages":[`...)); err != nil {
		return err
	}
	first := true
	if err := x.messages(c.ID, func(m message) error {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if !first {
			b = append([]byte{','}, b...)
		}
		first = false
		_, err = f.Write(b)
		return err
	}); err != nil {
		return err
	}
	if _, err := io.WriteString(f, "]}\n"); err != nil {
		return err
	}

	md, err := x.create("conversations/" + c.ID.String() + ".md")
	if err != nil {
		return err
	}
	title := c.Title
	if title == "" {
		title = "Untitled conversation"
	}
	if _, err := fmt.Fprintf(md, "# %s\n\n_Started %s_\n", title, c.CreatedAt.UTC().Format(time.RFC3339)); err != nil {
		return err
	}
	return x.messages(c.ID, func(m message) error {
		return writeMarkdown(md, m)
	})
}

// writeMarkdown writes one message of a conversation's Markdown.
func writeMarkdown(w io.Writer, m message) error {
	who := map[string]string{"user": "You", "assistant": "Steward", "tool": "Tool results"}[m.Role]
	var b strings.Builder
	fmt.Fprintf(&b, "\n**%s** · %s\n\n", who, m.CreatedAt.UTC().Format("2006-01-02 15:04"))
	if m.Text != "" {
		b.WriteString(m.Text + "\n")
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, "\n```json\n%s\n```\n", c)
	}
	for _, r := range m.ToolResults {
		fmt.Fprintf(&b, "\n```json\n%s\n```\n", r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// messages hands each message of a conversation to fn, in order, a page at a time.
func (x *exporter) messages(id uuid.UUID, fn func(message) error) error {
	after := 0
	for {
		var page []steward.StoredMessage
		if err := x.read(func(tx *store.Tx) (err error) {
			page, err = tx.Export.Messages(x.ctx, id, after, PageSize)
			return err
		}); err != nil {
			return err
		}
		for _, m := range page {
			if err := fn(render(m)); err != nil {
				return err
			}
			after = m.Seq
		}
		if len(page) < PageSize {
			return nil
		}
	}
}

// ledger writes the ledger as CSV (one posting a row) and as Beancount text.
func (x *exporter) ledger() error {
	f, err := x.create("ledger/transactions.csv")
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.Write([]string{"date", "transaction_id", "description", "merchant", "account", "kind", "amount", "currency"}); err != nil {
		return err
	}
	if err := x.transactions(func(t store.LedgerTransaction) error {
		for _, p := range t.Postings {
			if err := w.Write([]string{t.Date.Format(time.DateOnly), t.ID.String(), t.Description, t.Merchant, p.Account, p.Kind, minor(p.AmountMinor), p.Currency}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	bf, err := x.create("ledger/ledger.beancount")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(bf, "; Steward's ledger. Accounts are opened on the first day of the export's history.\n"); err != nil {
		return err
	}
	return x.transactions(func(t store.LedgerTransaction) error {
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s * %s %s\n", t.Date.Format(time.DateOnly), strconv.Quote(t.Merchant), strconv.Quote(t.Description))
		for _, p := range t.Postings {
			fmt.Fprintf(&b, "  %s  %s %s\n", beanAccount(p), minor(p.AmountMinor), p.Currency)
		}
		_, err := io.WriteString(bf, b.String())
		return err
	})
}

// transactions hands each ledger transaction to fn, a page at a time.
func (x *exporter) transactions(fn func(store.LedgerTransaction) error) error {
	after := uuid.Nil
	for {
		var page []store.LedgerTransaction
		if err := x.read(func(tx *store.Tx) (err error) {
			page, err = tx.Export.Ledger(x.ctx, after, PageSize)
			return err
		}); err != nil {
			return err
		}
		for _, t := range page {
			if err := fn(t); err != nil {
				return err
			}
			after = t.ID
		}
		if len(page) < PageSize {
			return nil
		}
	}
}

// minor writes an amount in minor units as a decimal with two places.
func minor(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// beanAccount names a ledger account as Beancount requires: a root of its kind, then
// capitalised words of letters, digits and dashes.
func beanAccount(p store.LedgerPosting) string {
	root := map[string]string{"asset": "Assets", "liability": "Liabilities", "income": "Income", "expense": "Expenses", "equity": "Equity"}[p.Kind]
	if root == "" {
		root = "Equity"
	}
	var parts []string
	for _, w := range strings.FieldsFunc(p.Account, func(r rune) bool { return r == ':' || r == '/' }) {
		var b strings.Builder
		for _, r := range w {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
				b.WriteRune(r)
			case r == ' ' || r == '_':
				b.WriteRune('-')
			}
		}
		if s := strings.Trim(b.String(), "-"); s != "" {
			parts = append(parts, strings.ToUpper(s[:1])+s[1:])
		}
	}
	if len(parts) > 0 && parts[0] == root {
		parts = parts[1:]
	}
	if len(parts) == 0 {
		parts = []string{"Other"}
	}
	return root + ":" + strings.Join(parts, ":")
}

// documents writes each document's original bytes, one document at a time.
func (x *exporter) documents() error {
	if x.s.Documents == nil {
		return nil
	}
	tt := store.ExportTable{Table: "documents", Columns: "id", Key: "id", KeyType: "uuid"}
	after := ""
	for {
		var rows []json.RawMessage
		if err := x.read(func(tx *store.Tx) (err error) {
			rows, after, err = tx.Export.Page(x.ctx, tt, after, PageSize)
			return err
		}); err != nil {
			return err
		}
		for _, r := range rows {
			var d struct {
				ID uuid.UUID `json:"id"`
			}
			if err := json.Unmarshal(r, &d); err != nil {
				return err
			}
			if err := x.document(d.ID); err != nil {
				return err
			}
		}
		if len(rows) < PageSize {
			return nil
		}
	}
}

// document writes one document's original (read outside any transaction of the export's).
func (x *exporter) document(id uuid.UUID) error {
	doc, err := x.s.Documents.Content(x.ctx, x.owner, id)
	if steward.ErrorCode(err) == steward.CodeNotFound {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("document %s: %w", id, err)
	}
	f, err := x.create("documents/" + id.String() + "/" + safeName(doc.Name))
	if err != nil {
		return err
	}
	_, err = f.Write(doc.Data)
	return err
}

// safeName is a document's name as one path element of the zip.
func safeName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == ".." || name == "/" || name == "" {
		return "document"
	}
	return name
}
