// Package export writes everything of an owner's as one zip (docs/DATA.md): conversations as
// JSON and Markdown, memory (text, no vectors), tasks, automations, rules, documents'
// originals, the ledger as CSV and as Beancount text, trades, channels and accounts without
// their secrets, and the audit log, with a README saying what each file is.
//
// It streams: every read is one page (PageSize rows) in a short owner transaction of its
// own, written out after that transaction ends, so memory stays bounded by a page, one
// conversation's page of messages or one document — never by the owner's size — and no
// transaction is open while the client reads (docs/ARCHITECTURE.md §7). Pages are read
// one after another, not from one snapshot: a row written during the export may or may not
// be in it.
package export

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// PageSize is how many rows one read takes.
const PageSize = 500

// Documents reads a document's original bytes (document.Service.Content).
type Documents interface {
	Content(ctx context.Context, ownerID, id uuid.UUID) (document.File, error)
}

// Service writes an owner's export. Documents may be nil (no originals are written).
type Service struct {
	Store     *store.Store
	Documents Documents
	Now       steward.Clock
}

// Write writes the owner's export to w as a zip. An error after the first byte leaves the
// zip without its central directory: no reader takes it as complete.
func (s *Service) Write(ctx context.Context, ownerID uuid.UUID, w io.Writer) error {
	// The owner's own row first, so an unknown owner fails before a byte is written.
	if err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		_, err := tx.Account.Get(ctx)
		return err
	}); err != nil {
		return err
	}
	z := zip.NewWriter(w)
	x := &exporter{s: s, ctx: ctx, owner: ownerID, z: z}
	steps := []func() error{x.readme, x.conversations}
	for _, tt := range store.ExportTables {
		steps = append(steps, func() error { return x.table(tt) })
	}
	steps = append(steps, x.ledger, x.documents)
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return z.Close()
}

// exporter is one export in progress.
type exporter struct {
	s     *Service
	ctx   context.Context
	owner uuid.UUID
	z     *zip.Writer
}

// create starts a file of the zip.
func (x *exporter) create(name string) (io.Writer, error) {
	return x.z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: x.s.Now.Now().UTC()})
}

// read runs fn in a short owner transaction.
func (x *exporter) read(fn func(tx *store.Tx) error) error {
	return x.s.Store.WithOwner(x.ctx, x.owner, fn)
}

// table writes one table as JSON lines, a page at a time.
func (x *exporter) table(tt store.ExportTable) error {
	f, err := x.create(tt.File)
	if err != nil {
		return err
	}
	after := ""
	for {
		var rows []json.RawMessage
		err := x.read(func(tx *store.Tx) (err error) {
			rows, after, err = tx.Export.Page(x.ctx, tt, after, PageSize)
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := f.Write(append(r, '\n')); err != nil {
				return err
			}
		}
		if len(rows) < PageSize {
			return nil
		}
	}
}

// readme writes README.md: what each file is.
func (x *exporter) readme() error {
	f, err := x.create("README.md")
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Your Steward data\n\nExported %s. Times are UTC (RFC 3339); amounts are in minor units (cents) with their currency.\n\n", x.s.Now.Now().UTC().Format(time.RFC3339))
	b.WriteString("| File | What it holds |\n|---|---|\n")
	b.WriteString("| `conversations/<id>.json` | a conversation: title, times and every message (role, text, tool calls and results) |\n")
	b.WriteString("| `conversations/<id>.md` | the same conversation to read |\n")
	for _, tt := range store.ExportTables {
		fmt.Fprintf(&b, "| `%s` | %s, one JSON object a line |\n", tt.File, tt.About)
	}
	b.WriteString("| `ledger/transactions.csv` | the ledger, one posting a row |\n")
	b.WriteString("| `ledger/ledger.beancount` | the ledger as Beancount text (also read by ledger-cli with few changes) |\n")
	b.WriteString("| `documents/<id>/<name>` | each document's original bytes |\n")
	b.WriteString("\nNot in the export: secrets (channel URLs and tokens, account passwords and settings, MCP servers' URLs and headers, API-key, session and passkey material) and memory's vectors, which only Steward's embedder can read.\n")
	_, err = io.WriteString(f, b.String())
	return err
}
