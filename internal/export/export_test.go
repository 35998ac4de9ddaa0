package export_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/export"
	"github.com/stewardhq/steward/internal/testdb"
)

// peakWriter counts what the export writes and samples the heap every sampleEvery bytes.
type peakWriter struct {
	w        io.Writer
	n, next  int64
	peakHeap uint64
}

const sampleEvery = 256 << 10

func (p *peakWriter) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if p.n >= p.next {
		p.next = p.n + sampleEvery
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		p.peakHeap = max(p.peakHeap, m.HeapAlloc)
	}
	return p.w.Write(b)
}

// TestExportMemoryIsBounded: an owner with about 32 MB of conversations, memory and audit
// rows is exported while the heap grows by at most 12 MB (a page of rows, the zip's
// compressor): the export streams pages, it does not gather the owner. The bound is on
// bytes, not time.
func TestExportMemoryIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 4)
	owner, _ := o.Owner(t, "large")
	super := testdb.Connect(t, o.SuperURL)
	// 20 conversations × 800 messages of 1 KB, 10,000 memory chunks and 6,000 audit rows of
	// 1 KB, each text its own (md5 chains), so compression cannot hide a copy.
	for _, sql := range []string{
		`INSERT INTO conversations (id, owner_id, title) SELECT gen_random_uuid(), $1, 'conversation ' || i FROM generate_series(1, 20) i`,
		`INSERT INTO turns (id, owner_id, conversation_id, status) SELECT gen_random_uuid(), $1, c.id, 'completed' FROM conversations c WHERE c.owner_id = $1`,
		`INSERT INTO messages (owner_id, conversation_id, turn_id, seq, role, content)
			SELECT $1, t.conversation_id, t.id, i, CASE WHEN i % 2 = 0 THEN 'model' ELSE 'user' END,
				jsonb_build_object('role', CASE WHEN i % 2 = 0 THEN 'model' ELSE 'user' END, 'parts', jsonb_build_array(jsonb_build_object('text',
					(SELECT string_agg(md5(t.id::text || i || j), ' ') FROM generate_series(1, 31) j))))
			FROM turns t, generate_series(1, 800) i WHERE t.owner_id = $1`,
		`INSERT INTO memory_chunks (owner_id, source_kind, source_id, text, embedding, origin)
			SELECT $1, 'conversation', '', (SELECT string_agg(md5(i::text || j || 'c'), ' ') FROM generate_series(1, 31) j),
				array_fill(0.01::real, ARRAY[768])::vector, 'owner' FROM generate_series(1, 10000) i`,
		`INSERT INTO audit_log (owner_id, kind, data)
			SELECT $1, 'bulk', jsonb_build_object('x', (SELECT string_agg(md5(i::text || j || 'a'), ' ') FROM generate_series(1, 31) j))
			FROM generate_series(1, 6000) i`,
	} {
		if _, err := super.Exec(ctx, sql, owner.ID); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	var size int64
	if err := super.QueryRow(ctx, `SELECT (SELECT sum(length(content::text)) FROM messages WHERE owner_id = $1)
		+ (SELECT sum(length(text)) FROM memory_chunks WHERE owner_id = $1) + (SELECT sum(length(data::text)) FROM audit_log WHERE owner_id = $1)`,
		owner.ID).Scan(&size); err != nil {
		t.Fatal(err)
	}

	svc := &export.Service{Store: o.Store}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	w := &peakWriter{w: io.Discard}
	if err := svc.Write(ctx, owner.ID, w); err != nil {
		t.Fatal(err)
	}
	grew := int64(w.peakHeap) - int64(before.HeapAlloc)
	t.Logf("owner's text %d MB, zip %d MB, heap grew at most %.1f MB", size>>20, w.n>>20, float64(grew)/(1<<20))
	if size < 30<<20 {
		t.Fatalf("the owner holds %d MB: the case proves nothing below 30 MB", size>>20)
	}
	if grew > 12<<20 {
		t.Errorf("the heap grew by %d MB exporting %d MB: the export holds the owner's data, not a page", grew>>20, size>>20)
	}
}

// TestExportHoldsTheOwnersFiles: the zip has a README naming every file, a conversation as
// JSON and Markdown, memory without vectors, and none of another owner's rows.
func TestExportHoldsTheOwnersFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 4)
	alice, _ := o.Owner(t, "alice")
	bob, _ := o.Owner(t, "bob")
	super := testdb.Connect(t, o.SuperURL)
	for owner, word := range map[string]string{alice.ID.String(): "alicecanary", bob.ID.String(): "bobcanary"} {
		for _, sql := range []string{
			`INSERT INTO conversations (owner_id, title) VALUES ($1, $2 || ' title')`,
			`INSERT INTO turns (owner_id, conversation_id, status) SELECT $1, id, 'completed' FROM conversations WHERE owner_id = $1 AND $2 <> ''`,
			`INSERT INTO messages (owner_id, conversation_id, turn_id, seq, role, content) SELECT $1, conversation_id, id, 1, 'user',
				jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object('text', 'hello ' || $2))) FROM turns WHERE owner_id = $1`,
			`INSERT INTO memory_facts (owner_id, content, key) VALUES ($1, 'fact ' || $2, $2)`,
			`INSERT INTO memory_chunks (owner_id, source_kind, text, embedding, origin) VALUES ($1, 'fact', 'chunk ' || $2, array_fill(0.5::real, ARRAY[768])::vector, 'owner')`,
		} {
			if _, err := super.Exec(ctx, sql, owner, word); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
	}
	var buf bytes.Buffer
	if err := (&export.Service{Store: o.Store}).Write(ctx, alice.ID, &buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
	}
	all := ""
	for name, body := range files {
		all += body
		if !strings.HasPrefix(name, "conversations/") && !strings.Contains(files["README.md"], "`"+name+"`") && name != "README.md" {
			t.Errorf("the README does not name %s", name)
		}
	}
	if strings.Contains(all, "bobcanary") {
		t.Error("alice's export holds bob's data")
	}
	for name, want := range map[string]string{"memory/facts.jsonl": "fact alicecanary", "memory/chunks.jsonl": "chunk alicecanary"} {
		if !strings.Contains(files[name], want) {
			t.Errorf("%s lacks %q:\n%s", name, want, files[name])
		}
	}
	if strings.Contains(files["memory/chunks.jsonl"], "embedding") || strings.Contains(files["memory/chunks.jsonl"], "0.5,") {
		t.Errorf("the chunks carry their vectors:\n%s", files["memory/chunks.jsonl"])
	}
	json, md := 0, 0
	for name, body := range files {
		switch {
		case strings.HasSuffix(name, ".json") && strings.Contains(body, `"text":"hello alicecanary"`) && strings.Contains(body, `"title":"alicecanary title"`):
			json++
		case strings.HasSuffix(name, ".md") && strings.HasPrefix(name, "conversations/") && strings.Contains(body, "# alicecanary title") && strings.Contains(body, "hello alicecanary"):
			md++
		}
	}
	if json != 1 || md != 1 {
		t.Errorf("conversation files: %d JSON, %d Markdown, want one of each; files %v", json, md, keys(files))
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
