package skillpack

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// A pattern runs over a whole file only when the file holds a word it can begin with:
// Go's regexp costs the same on every byte, matched or not, so an ordinary playbook that
// mentions none of "ignore", "envoyez" or "|" skips those patterns (docs/SKILLS.md, "The
// scanner"). The words are derived from the pattern's syntax, never written by hand, so
// the filter cannot drop a match: every match begins with one of them.

// maxStarts bounds the words derived for one pattern; maxBranch for one alternative of it,
// whose words stop growing there (shorter words filter less, never wrongly).
const (
	maxStarts = 1024
	maxBranch = 64
)

// starts is what every match of a regexp begins with: a set of strings, exact when the
// regexp matches nothing but them; nil when it could begin with anything.
type starts struct {
	set   []string
	exact bool
}

var anything = starts{}

// needles are the words a text must hold for re to match in it, or nil when there is no
// telling.
func needles(re *regexp.Regexp) []string {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	s := startsOf(parsed)
	for _, w := range s.set {
		if w == "" {
			return nil
		}
	}
	return s.set
}

func startsOf(re *syntax.Regexp) starts {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return anything
		}
		return starts{set: []string{string(re.Rune)}, exact: true}
	case syntax.OpCharClass:
		return classStarts(re.Rune)
	case syntax.OpCapture:
		return startsOf(re.Sub[0])
	case syntax.OpPlus:
		return prefixOnly(startsOf(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return prefixOnly(startsOf(re.Sub[0]))
		}
	case syntax.OpQuest: // x? is "" or x
		s := startsOf(re.Sub[0])
		if s.set == nil {
			return anything
		}
		return starts{set: append([]string{""}, s.set...), exact: s.exact}
	case syntax.OpAlternate:
		return alternateStarts(re.Sub)
	case syntax.OpConcat:
		return concatStarts(re.Sub)
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpBeginLine, syntax.OpBeginText:
		return starts{set: []string{""}, exact: true}
	}
	return anything
}

// classStarts: a class of a few characters starts with each of them.
func classStarts(ranges []rune) starts {
	var set []string
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i+1]-ranges[i] > 8 || len(set) > 8 {
			return anything
		}
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			set = append(set, string(r))
		}
	}
	return starts{set: set, exact: true}
}

func prefixOnly(s starts) starts {
	s.exact = false
	return s
}

func alternateStarts(subs []*syntax.Regexp) starts {
	all := starts{exact: true}
	for _, sub := range subs {
		s := startsOf(sub)
		if s.set == nil || len(all.set)+len(s.set) > maxStarts {
			return anything
		}
		all.set = append(all.set, s.set...)
		all.exact = all.exact && s.exact
	}
	return all
}

// concatStarts extends each start by what follows while the starts are exact.
func concatStarts(subs []*syntax.Regexp) starts {
	acc := starts{set: []string{""}, exact: true}
	for _, sub := range subs {
		s := startsOf(sub)
		if s.set == nil || len(acc.set)*len(s.set) > maxBranch {
			return prefixOnly(acc)
		}
		var next []string
		for _, a := range acc.set {
			for _, b := range s.set {
				next = append(next, a+b)
			}
		}
		acc = starts{set: next, exact: s.exact}
		if !s.exact {
			return acc
		}
	}
	return acc
}

// holdsAny: text holds one of words, or there are none (no telling).
func holdsAny(text string, words []string) bool {
	if len(words) == 0 {
		return true
	}
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}
