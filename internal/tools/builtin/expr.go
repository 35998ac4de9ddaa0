package builtin

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/tools"
)

// This file is the calculator's expression language: a lexer and a recursive-descent
// parser that evaluates as it parses. No eval, no interpreter.

// Limits of the calculator's input.
const (
	maxExprLen     = 500 // characters
	maxExprNesting = 100 // parentheses, unary operators and exponents
)

// calcError is an error in an expression at a 1-based character position.
type calcError struct {
	pos int
	msg string
}

// Error returns the message with its position.
func (e *calcError) Error() string { return fmt.Sprintf("at position %d: %s", e.pos, e.msg) }

// evaluate parses and computes an expression. The result is finite and rounded to 15
// significant digits, so 0.1+0.2 gives 0.3.
func evaluate(expr string) (float64, error) {
	n := utf8.RuneCountInString(expr)
	if n > maxExprLen {
		return 0, &calcError{pos: maxExprLen + 1, msg: fmt.Sprintf("expression too long (%d characters, at most %d)", n, maxExprLen)}
	}
	toks, err := lex(expr)
	if err != nil {
		return 0, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tokEOF {
		return 0, &calcError{pos: 1, msg: "expression is empty"}
	}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return 0, &calcError{pos: t.pos, msg: fmt.Sprintf("unexpected %s after the end of the expression", t)}
	}
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if v == 0 {
		v = 0 // no negative zero
	}
	return v, nil
}

// tokKind is the kind of a token.
type tokKind int

// Token kinds.
const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp // one of + - * / % ^ ( ) ,
)

// token is one lexical element of an expression.
type token struct {
	kind tokKind
	pos  int // 1-based character position
	text string
	num  float64
}

// String describes the token for error messages.
func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokNum:
		return "number " + t.text
	case tokIdent:
		return "name " + tools.QuoteValue(t.text)
	}
	return tools.QuoteValue(t.text)
}

// lex splits an expression into tokens.
func lex(s string) ([]token, error) {
	var toks []token
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r, pos := rs[i], i+1
		switch {
		case unicode.IsSpace(r):
			i++
		case isDigit(r) || r == '.' && i+1 < len(rs) && isDigit(rs[i+1]):
			j := numberEnd(rs, i)
			text := string(rs[i:j])
			v, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsInf(v, 0) {
				return nil, &calcError{pos: pos, msg: "number " + tools.QuoteValue(text) + " is out of range"}
			}
			toks = append(toks, token{kind: tokNum, pos: pos, text: text, num: v})
			i = j
		case unicode.IsLetter(r) || r == '_':
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || isDigit(rs[j]) || rs[j] == '_') {
				j++
			}
			toks = append(toks, token{kind: tokIdent, pos: pos, text: string(rs[i:j])})
			i = j
		case r == '*' && i+1 < len(rs) && rs[i+1] == '*':
			toks = append(toks, token{kind: tokOp, pos: pos, text: "^"})
			i += 2
		case strings.ContainsRune("+-*/%^(),", r):
			toks = append(toks, token{kind: tokOp, pos: pos, text: string(r)})
			i++
		default:
			return nil, &calcError{pos: pos, msg: "unexpected character " + strconv.QuoteRune(r)}
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(rs) + 1}), nil
}

// numberEnd returns the index just past the number starting at rs[i]: digits, an optional
// fraction, and an exponent only when digits follow its sign.
func numberEnd(rs []rune, i int) int {
	j := digitsEnd(rs, i)
	if j < len(rs) && rs[j] == '.' {
		j = digitsEnd(rs, j+1)
	}
	if j < len(rs) && (rs[j] == 'e' || rs[j] == 'E') {
		k := j + 1
		if k < len(rs) && (rs[k] == '+' || rs[k] == '-') {
			k++
		}
		if k < len(rs) && isDigit(rs[k]) {
			j = digitsEnd(rs, k)
		}
	}
	return j
}

// digitsEnd returns the index of the first rune at or after i that is not a digit.
func digitsEnd(rs []rune, i int) int {
	for i < len(rs) && isDigit(rs[i]) {
		i++
	}
	return i
}

// isDigit reports whether r is an ASCII digit.
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// parser is a recursive-descent parser that evaluates as it parses:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ "^" unary ]          (right-associative; -2^2 = -4, 2^-1 = 0.5)
//	primary = number | constant | function "(" expr { "," expr } ")" | "(" expr ")"
type parser struct {
	toks  []token
	i     int
	depth int
}

// peek returns the current token.
func (p *parser) peek() token { return p.toks[p.i] }

// next consumes and returns the current token.
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// isOp reports whether the current token is the operator op.
func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tokOp && t.text == op
}

// enter records one more level of nesting; leave undoes it.
func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxExprNesting {
		return &calcError{pos: pos, msg: fmt.Sprintf("expression nested too deeply (at most %d levels)", maxExprNesting)}
	}
	return nil
}

// leave undoes enter.
func (p *parser) leave() { p.depth-- }

// expr parses a sum.
func (p *parser) expr() (float64, error) {
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next()
		w, err := p.term()
		if err != nil {
			return 0, err
		}
		if op.text == "+" {
			v += w
		} else {
			v -= w
		}
		if err := finite(v, op.pos); err != nil {
			return 0, err
		}
	}
	return v, nil
}

// term parses a product.
func (p *parser) term() (float64, error) {
	v, err := p.unary()
	if err != nil {
		return 0, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.next()
		w, err := p.unary()
		if err != nil {
			return 0, err
		}
		switch op.text {
		case "*":
			v *= w
		case "/", "%":
			if w == 0 {
				return 0, &calcError{pos: op.pos, msg: "division by zero"}
			}
			if op.text == "/" {
				v /= w
			} else {
				v = math.Mod(v, w)
			}
		}
		if err := finite(v, op.pos); err != nil {
			return 0, err
		}
	}
	return v, nil
}

// unary parses a signed power.
func (p *parser) unary() (float64, error) {
	if !p.isOp("-") && !p.isOp("+") {
		return p.power()
	}
	op := p.next()
	if err := p.enter(op.pos); err != nil {
		return 0, err
	}
	defer p.leave()
	v, err := p.unary()
	if op.text == "-" {
		v = -v
	}
	return v, err
}

// power parses a power; the exponent may itself be signed and a power.
func (p *parser) power() (float64, error) {
	base, err := p.primary()
	if err != nil || !p.isOp("^") {
		return base, err
	}
	op := p.next()
	if err := p.enter(op.pos); err != nil {
		return 0, err
	}
	defer p.leave()
	exp, err := p.unary()
	if err != nil {
		return 0, err
	}
	if base == 0 && exp < 0 {
		return 0, &calcError{pos: op.pos, msg: "division by zero (zero to a negative power)"}
	}
	v := math.Pow(base, exp)
	return v, finite(v, op.pos)
}

// primary parses a number, a constant, a function call or a parenthesised expression.
func (p *parser) primary() (float64, error) {
	t := p.next()
	switch {
	case t.kind == tokNum:
		return t.num, nil
	case t.kind == tokIdent:
		return p.name(t)
	case t.kind == tokOp && t.text == "(":
		if err := p.enter(t.pos); err != nil {
			return 0, err
		}
		defer p.leave()
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if !p.isOp(")") {
			return 0, &calcError{pos: p.peek().pos, msg: fmt.Sprintf("expected \")\" to close \"(\" at position %d, found %s", t.pos, p.peek())}
		}
		p.next()
		return v, nil
	}
	return 0, &calcError{pos: t.pos, msg: fmt.Sprintf("expected a number, name or \"(\", found %s", t)}
}

// constants are the named values.
var constants = map[string]float64{"pi": math.Pi, "e": math.E}

// calcFunc is a function callable in expressions.
type calcFunc struct {
	minArgs, maxArgs int // maxArgs < 0: no limit
	apply            func(args []float64) (float64, string)
}

// functions are the callable functions. apply returns a message when the arguments are
// outside the function's domain.
var functions = map[string]calcFunc{
	"sqrt": {1, 1, func(a []float64) (float64, string) {
		if a[0] < 0 {
			return 0, "square root of a negative number"
		}
		return math.Sqrt(a[0]), ""
	}},
	"abs":   {1, 1, func(a []float64) (float64, string) { return math.Abs(a[0]), "" }},
	"floor": {1, 1, func(a []float64) (float64, string) { return math.Floor(a[0]), "" }},
	"ceil":  {1, 1, func(a []float64) (float64, string) { return math.Ceil(a[0]), "" }},
	"round": {1, 2, func(a []float64) (float64, string) {
		if len(a) == 1 {
			return math.Round(a[0]), ""
		}
		d := a[1]
		if d != math.Trunc(d) || d < -15 || d > 15 {
			return 0, "round(x, digits): digits must be a whole number from -15 to 15"
		}
		scale := math.Pow(10, d)
		return math.Round(a[0]*scale) / scale, ""
	}},
	"min": {1, -1, func(a []float64) (float64, string) {
		m := a[0]
		for _, v := range a[1:] {
			m = math.Min(m, v)
		}
		return m, ""
	}},
	"max": {1, -1, func(a []float64) (float64, string) {
		m := a[0]
		for _, v := range a[1:] {
			m = math.Max(m, v)
		}
		return m, ""
	}},
}

// name evaluates a constant or a function call whose name is t.
func (p *parser) name(t token) (float64, error) {
	id := strings.ToLower(t.text)
	if v, ok := constants[id]; ok {
		if p.isOp("(") {
			return 0, &calcError{pos: t.pos, msg: tools.QuoteValue(t.text) + " is a constant, not a function"}
		}
		return v, nil
	}
	f, ok := functions[id]
	if !ok {
		return 0, &calcError{pos: t.pos, msg: "unknown name " + tools.QuoteValue(t.text) + " (functions: sqrt, abs, round, floor, ceil, min, max; constants: pi, e)"}
	}
	if !p.isOp("(") {
		return 0, &calcError{pos: t.pos, msg: fmt.Sprintf("function %s needs its arguments in parentheses, e.g. %s(2)", id, id)}
	}
	open := p.next()
	if err := p.enter(open.pos); err != nil {
		return 0, err
	}
	defer p.leave()
	var args []float64
	for {
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		args = append(args, v)
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	if !p.isOp(")") {
		return 0, &calcError{pos: p.peek().pos, msg: fmt.Sprintf("expected \",\" or \")\" in the call of %s, found %s", id, p.peek())}
	}
	p.next()
	if len(args) < f.minArgs || f.maxArgs >= 0 && len(args) > f.maxArgs {
		return 0, &calcError{pos: t.pos, msg: fmt.Sprintf("%s takes %s, got %d", id, arity(f), len(args))}
	}
	v, msg := f.apply(args)
	if msg != "" {
		return 0, &calcError{pos: t.pos, msg: msg}
	}
	return v, finite(v, t.pos)
}

// arity describes how many arguments f takes.
func arity(f calcFunc) string {
	switch {
	case f.maxArgs < 0:
		return fmt.Sprintf("at least %d argument(s)", f.minArgs)
	case f.minArgs == f.maxArgs:
		return fmt.Sprintf("%d argument(s)", f.minArgs)
	}
	return fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
}

// finite returns an error when an intermediate result at pos is not a finite number.
func finite(v float64, pos int) error {
	switch {
	case math.IsNaN(v):
		return &calcError{pos: pos, msg: "result is not a real number"}
	case math.IsInf(v, 0):
		return &calcError{pos: pos, msg: "result is too large"}
	}
	return nil
}
