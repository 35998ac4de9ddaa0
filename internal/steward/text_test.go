package steward_test

import (
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

func TestCheckNameAndVisible(t *testing.T) {
	for in, ok := range map[string]bool{
		"report.pdf": true, "  Überweisung  ": true, "emoji\u200d👩": true,
		"": false, "   ": false, "txt\u202eexe.pdf": false, "a\u200bb": false, "bom\ufeff": false, "tab\tname": false, "bad\xff": false,
	} {
		_, err := steward.CheckName("the name", in, 20)
		if (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v; want ok=%v", in, err, ok)
		}
	}
	if _, err := steward.CheckName("the name", "abcdefghijklmnopqrstu", 20); err == nil {
		t.Error("a name of 21 characters passed a limit of 20")
	}
	if got := steward.Visible(`{"name":"invoice` + "\u202e" + `fdp.exe"}`); got != `{"name":"invoice⟨U+202E⟩fdp.exe"}` {
		t.Errorf("Visible = %q", got)
	}
	if got := steward.Visible("two\nlines\tand 👩\u200d👧"); got != "two\nlines\tand 👩\u200d👧" {
		t.Errorf("Visible changed ordinary text: %q", got)
	}
}

func TestArgsSummary(t *testing.T) {
	got := steward.ArgsSummary([]byte(`{"title":"buy milk","due":{"y":1},"n":3}`))
	if got != `due={"y":1}, n=3, title="buy milk"` {
		t.Errorf("ArgsSummary = %q", got)
	}
}
