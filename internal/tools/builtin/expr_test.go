package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/tools"
)

func TestEvaluate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want float64
	}{
		{"1+2", 3},
		{"  42 ", 42},
		{"2+3*4", 14},
		{"(2+3)*4", 20},
		{"10-4-3", 3},      // left-associative
		{"100/10/5", 2},    // left-associative
		{"2^3^2", 512},     // right-associative
		{"2**3", 8},        // ** is ^
		{"-2^2", -4},       // unary minus binds looser than ^
		{"(-2)^2", 4},      //
		{"2^-1", 0.5},      // signed exponent
		{"2*-3", -6},       //
		{"--3", 3},         //
		{"+3", 3},          //
		{"-(1+2)*3", -9},   //
		{"7%3", 1},         //
		{"-7%3", -1},       // sign of the dividend
		{"2+3%2*4", 6},     // % is multiplicative
		{"1.5*2", 3},       //
		{".5+.25", 0.75},   //
		{"3.", 3},          //
		{"1e3+1", 1001},    //
		{"2.5E-1", 0.25},   //
		{"0.1+0.2", 0.3},   // rounded to 15 significant digits
		{"sqrt(16)", 4},    //
		{"abs(-3.5)", 3.5}, //
		{"round(2.5)", 3},
		{"round(-2.5)", -3},
		{"round(3.14159, 2)", 3.14},
		{"round(1234, -2)", 1200},
		{"floor(-1.5)", -2},
		{"ceil(1.2)", 2},
		{"min(3, 1, 2)", 1},
		{"max(3, 1, 2)", 3},
		{"max(4)", 4},
		{"pi", math.Round(math.Pi*1e14) / 1e14},
		{"PI", math.Round(math.Pi*1e14) / 1e14},
		{"e", 2.71828182845905},
		{"2*pi*0", 0},
		{"-0", 0},
		{"sqrt(abs(-16)) + max(1, min(5, 2)^3)", 12},
		{"((((1))))", 1},
	}
	for _, tc := range tests {
		got, err := evaluate(tc.expr)
		if err != nil {
			t.Errorf("evaluate(%q): %v", tc.expr, err)
			continue
		}
		if got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
			t.Errorf("evaluate(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		pos  int
		want string
	}{
		{"", 1, "empty"},
		{"   ", 1, "empty"},
		{"1/0", 2, "division by zero"},
		{"1 + 2/(3-3)", 6, "division by zero"},
		{"5%0", 2, "division by zero"},
		{"0^-1", 2, "division by zero"},
		{"foo+1", 1, `unknown name "foo"`},
		{"2*bar(3)", 3, `unknown name "bar"`},
		{"1 2", 3, "unexpected number 2 after the end"},
		{"(1+2))", 6, `unexpected ")"`},
		{"1+", 3, "found end of expression"},
		{"(1+2", 5, `expected ")" to close "(" at position 1`},
		{"1 $ 2", 3, "unexpected character '$'"},
		{"2e", 2, `unexpected name "e"`},
		{"sqrt 4", 1, "needs its arguments in parentheses"},
		{"sqrt(-1)", 1, "square root of a negative number"},
		{"sqrt(1, 2)", 1, "sqrt takes 1 argument(s), got 2"},
		{"round(1, 2, 3)", 1, "round takes 1 to 2 arguments, got 3"},
		{"round(1, 0.5)", 1, "digits must be a whole number"},
		{"min(1,)", 7, "expected a number"},
		{"max(1 2)", 7, `expected "," or ")"`},
		{"pi(2)", 1, "constant, not a function"},
		{"10^400", 3, "too large"},
		{"1e999", 1, "out of range"},
		{"(-8)^(1/3)", 5, "not a real number"},
		{"*3", 1, "expected a number"},
		{"é+1", 1, `unknown name "é"`},
		{"1+€", 3, "unexpected character '€'"},
		{strings.Repeat("1+", 250) + "1", 501, "too long (501 characters, at most 500)"},
		{strings.Repeat("(", 101) + "1" + strings.Repeat(")", 101), 101, "nested too deeply"},
		{strings.Repeat("-", 101) + "1", 101, "nested too deeply"},
		{"2" + strings.Repeat("^2", 101), 202, "nested too deeply"},
	}
	for _, tc := range tests {
		_, err := evaluate(tc.expr)
		var ce *calcError
		if !errors.As(err, &ce) {
			t.Errorf("evaluate(%q) = %v, want a calcError", tc.expr, err)
			continue
		}
		if ce.pos != tc.pos || !strings.Contains(ce.msg, tc.want) {
			t.Errorf("evaluate(%q) = %q at %d, want %q at %d", tc.expr, ce.msg, ce.pos, tc.want, tc.pos)
		}
	}
	// 100 levels are still fine.
	if _, err := evaluate(strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100)); err != nil {
		t.Errorf("100 nested parentheses: %v", err)
	}
}

func FuzzCalculate(f *testing.F) {
	for _, s := range []string{"1+2*3", "2^3^2", "-(1.5e3 % 7)", "sqrt(abs(-16))", "round(pi, 2)", "max(1,2,3)/min(4)", "((1)", "1e", ".5.", "2**-1", "é"} {
		f.Add(s)
	}
	reg, err := tools.NewRegistry(calculateTool())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := evaluate(expr)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("evaluate(%q) = %v without error", expr, v)
		}
		args, _ := json.Marshal(map[string]string{"expression": expr})
		out, err := reg.Run(context.Background(), tools.Env{}, "calculate", args)
		if err != nil {
			if _, ok := errors.AsType[*tools.ArgError](err); !ok {
				t.Fatalf("calculate(%q): %v is not an *ArgError", expr, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("calculate(%q): invalid JSON output %s", expr, out)
		}
	})
}
