package skillpack

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
)

// builtinFS holds the built-in skills Steward's own team writes, one folder each.
//
//go:embed builtin
var builtinFS embed.FS

// builtins are the built-in skills, read once.
var builtins = func() []Skill {
	dirs, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		panic(err)
	}
	var out []Skill
	for _, d := range dirs {
		sub, err := fs.Sub(builtinFS, "builtin/"+d.Name())
		if err != nil {
			panic(err)
		}
		s, err := ReadDir(sub)
		if err != nil {
			panic(fmt.Sprintf("built-in skill %s: %v", d.Name(), err))
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Manifest.Name < out[j].Manifest.Name })
	return out
}()

// Builtins returns the built-in skills, by name.
func Builtins() []Skill { return append([]Skill(nil), builtins...) }

// Builtin returns the built-in skill called name.
func Builtin(name string) (Skill, bool) {
	for _, s := range builtins {
		if s.Manifest.Name == name {
			return s, true
		}
	}
	return Skill{}, false
}
