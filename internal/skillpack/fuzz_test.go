package skillpack_test

import (
	"testing"

	"github.com/stewardhq/steward/internal/skillpack"
	. "github.com/stewardhq/steward/internal/skillpack/skillpacktest"
)

// FuzzRead feeds arbitrary bytes to the skill reader and the scanner: they must refuse or
// accept in words, never panic, and what they accept stays within the bounds.
func FuzzRead(f *testing.F) {
	md := SkillMD("seed", "A seed skill.", "Body with a [link](https://example.com).")
	f.Add([]byte(md), "SKILL.md")
	f.Add(Zip(f, Entry{Name: "SKILL.md", Text: md}, Entry{Name: "refs/a.csv", Text: "a,b\n1,2\n"}), "s.zip")
	f.Add(TarGz(f, Entry{Name: "top/SKILL.md", Text: md}, Entry{Name: "top/x.md", Link: "/etc/passwd"}), "s.tar.gz")
	f.Add([]byte("---\nname: &a [*a, *a]\n---\n"), "a.md")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		s, err := skillpack.Read(data, name)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal without words")
			}
			return
		}
		if len(s.Files) == 0 || len(s.Files) > skillpack.MaxFiles || s.Files[0].Path != skillpack.SkillMD {
			t.Fatalf("accepted %d files", len(s.Files))
		}
		total := 0
		for _, f := range s.Files {
			total += len(f.Text)
		}
		if total > skillpack.MaxTotalBytes {
			t.Fatalf("accepted %d bytes", total)
		}
		skillpack.Scan(s)
	})
}

// FuzzFrontMatter feeds arbitrary SKILL.md texts to the front matter's parser.
func FuzzFrontMatter(f *testing.F) {
	f.Add("---\nname: a\ndescription: b\ntriggers: [x, y]\n---\nbody")
	f.Add("---\nname: &x a\ndescription: *x\n---\n")
	f.Add("---\r\nname: a\r\ndescription: b\r\n---\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := skillpack.FromMarkdown(text)
		if err == nil && (s.Manifest.Name == "" || s.Manifest.Description == "") {
			t.Fatalf("accepted a manifest without name or description: %+v", s.Manifest)
		}
	})
}
