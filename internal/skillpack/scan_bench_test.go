package skillpack_test

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/skillpack"
	. "github.com/stewardhq/steward/internal/skillpack/skillpacktest"
)

// BenchmarkScanLargest scans the largest skill there can be (every file at its bound, 1 MB
// in all) filled with near-misses: words every pattern starts on, in Latin, Cyrillic and
// accented letters, with Markdown around them, and runs that look encoded but are not —
// the scanner's worst case, matched to the end of every file.
func BenchmarkScanLargest(b *testing.B) {
	unit := "**Ignore** the send слово, envoyez à ohne sans décode and | api key | ask the " +
		"https://x.example/p?q=1 ![i](a) `curl` forget QUJDREVGR0hJSktMTU5PUFFSU1RVVld !\n"
	fill := strings.Repeat(unit, (skillpack.MaxFileBytes-400)/len(unit))
	files := []skillpack.File{{Path: skillpack.SkillMD, Text: SkillMD("big", "Big.", fill)}}
	for _, p := range []string{"refs/a.md", "refs/b.md", "refs/c.md"} {
		files = append(files, skillpack.File{Path: p, Text: fill})
	}
	s, err := skillpack.FromFiles(files)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(4 * len(fill)))
	for b.Loop() {
		if findings, _ := skillpack.Scan(s); len(findings) != 0 {
			b.Fatalf("near-misses found: %+v", findings[0])
		}
	}
}
