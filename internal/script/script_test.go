package script_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/childproc"
	"github.com/stewardhq/steward/internal/script"
)

// TestRunComputes runs code over inputs in the sandbox and reads what it printed and returned.
func TestRunComputes(t *testing.T) {
	cases := []struct{ name, code, want, printed string }{
		{"expression", "1 + 2", "3", ""},
		{"result and print", "print('hi')\nresult = sum([x['amount'] for x in rows]) // len(rows)", "200", "hi\n"},
		{"statistics", "[statistics.mean([1, 2, 3, 4]), statistics.median([5, 1, 3]), statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9])]", "[2.5,3.0,2.138089935299395]", ""},
		{"dates", "[dates.add_days('2026-02-27', 2), dates.weekday('2026-03-01'), dates.days_between('2026-01-01', '2026-03-01'), dates.parse('03/15/2026', '%m/%d/%Y'), dates.month('2026-03-15'), dates.format('2026-03-15', '%d %b %Y')]",
			`["2026-03-01","Sunday",59,"2026-03-15","2026-03","15 Mar 2026"]`, ""},
		{"money", "[money.minor('1,234.5'), money.minor('-0.07'), money.format(123456, 'eur'), money.format(1500, 'JPY')]", `[123450,-7,"1234.56 EUR","1500 JPY"]`, ""},
		{"csv", "[r['b'] for r in csv.dicts(text)] + csv.rows('x,y')[0]", `["2","4","x","y"]`, ""},
		{"group_by", "{k: len(v) for k, v in group_by(rows, 'cat').items()}", `{"a":2,"b":1}`, ""},
		{"json and math", "json.encode({'x': math.floor(2.7)})", `"{\"x\":2}"`, ""},
	}
	inputs := map[string]any{
		"rows": []map[string]any{{"amount": 100, "cat": "a"}, {"amount": 300, "cat": "b"}, {"amount": 200, "cat": "a"}},
		"text": "a,b\n1,2\n3,4\n",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := script.Run(context.Background(), script.Request{Code: c.code, Inputs: inputs})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Result) != c.want || res.Printed != c.printed {
				t.Errorf("got %s printed %q; want %s printed %q", res.Result, res.Printed, c.want, c.printed)
			}
		})
	}
}

// TestRunAttacks attacks the sandbox: each attack ends within its limit with an error in words.
func TestRunAttacks(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"infinite loop", "while True:\n    pass", "steps"},
		{"deep recursion", "def f(n):\n    return f(n + 1)\nf(0)", "called recursively"},
		{"list doubling", "x = [0]\nfor i in range(64):\n    x = x + x", "memory"},
		{"huge string", "s = 'x' * (1 << 29)\nt = s + s", "memory"},
		{"1 MB output", "for i in range(20000):\n    print('x' * 60)", "printed more than 64 KB"},
		{"huge result", "result = ['x' * 100] * 10000", "at most 64 KB"},
		{"load", "load('os.star', 'system')", "load is not available"},
		{"open a file", "open('/etc/passwd')", "undefined: open"},
		{"environment", "os.environ['HOME']", "undefined: os"},
		{"network", "socket.connect('example.com')", "undefined: socket"},
		{"time", "time.now()", "undefined: time"},
		{"syntax error", "def (", "not an identifier"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := script.Run(context.Background(), script.Request{Code: c.code})
			took := time.Since(start)
			var se *script.Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v; want a *script.Error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q; want it to say %q", err, c.want)
			}
			if took > script.Timeout*3 {
				t.Errorf("took %v", took)
			}
			t.Logf("%s: %v in %v", c.name, firstLine(err.Error()), took.Round(time.Millisecond))
		})
	}
}

// TestRunRefusesBigInputs refuses inputs over the cap before any child starts.
func TestRunRefusesBigInputs(t *testing.T) {
	_, err := script.Run(context.Background(), script.Request{Code: "1", Inputs: map[string]any{"t": strings.Repeat("x", script.MaxInputs+1)}})
	if err == nil || !strings.Contains(err.Error(), "at most 2048 KB") {
		t.Fatalf("got %v", err)
	}
}

// TestEvalHonoursCancellation stops a run when its context ends.
func TestEvalHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := script.Eval(ctx, script.Request{Code: "x = 0\nwhile True:\n    x += 1"})
	if err == nil || !strings.Contains(err.Error(), "ran longer than") {
		t.Fatalf("got %v", err)
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// FuzzRun runs arbitrary code in the sandbox: whatever it does, the answer is a result with
// valid JSON or an error in words (*script.Error), never a failure of the runner.
func FuzzRun(f *testing.F) {
	for _, s := range []string{"1+2", "x = [1]\nfor i in range(3):\n    x = x + x\nresult = x", "def f(a, *b, **c):\n    return a\nf(1)",
		"statistics.mean([1])", "dates.parse('x', '%Y')", "{1: 2}[3]", "csv.dicts('a,b\\n1')", "money.minor('1.2.3')"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		res, err := script.Run(context.Background(), script.Request{Code: code})
		var se *script.Error
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("the runner failed: %v", err)
		}
		if err == nil && !json.Valid(res.Result) {
			t.Fatalf("invalid JSON result %q", res.Result)
		}
	})
}

// TestRunMemoryStaysInTheChild: the attacks' memory is the child's: each child's peak stays
// near its limit, and this process's resident set does not grow with them.
func TestRunMemoryStaysInTheChild(t *testing.T) {
	before := childproc.RSS()
	for _, code := range []string{"x = [0]\nfor i in range(64):\n    x = x + x", "s = 'x' * (1 << 29)", "result = len('x' * (50 << 20))"} {
		start := time.Now()
		_, peak, err := script.RunMeasured(context.Background(), script.Request{Code: code})
		t.Logf("%q: peak %d MB in %v: %v", firstLine(code), peak>>20, time.Since(start).Round(time.Millisecond), err)
		if peak > script.Memory+script.RaceMemory+64<<20 {
			t.Errorf("the child peaked at %d MB", peak>>20)
		}
	}
	if after := childproc.RSS(); after > before+32<<20 {
		t.Errorf("this process grew from %d MB to %d MB", before>>20, after>>20)
	}
}

// TestRunSharesSlots: an owner holding its share of the runs at once is refused at once, as
// busy, while another owner still gets a slot.
func TestRunSharesSlots(t *testing.T) {
	ctx := context.Background()
	alice, bob := uuid.New(), uuid.New()
	if script.Slots.PerOwner >= script.Slots.Total {
		t.Fatalf("one owner may hold all %d slots", script.Slots.Total)
	}
	for range script.Slots.PerOwner {
		release, err := script.Slots.Acquire(ctx, alice, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(release)
	}
	if _, err := script.Run(ctx, script.Request{Owner: alice, Code: "1"}); !errors.Is(err, script.ErrBusy) || !strings.Contains(err.Error(), "at once") {
		t.Fatalf("alice over her share: %v; want busy", err)
	}
	if res, err := script.Run(ctx, script.Request{Owner: bob, Code: "1 + 1"}); err != nil || string(res.Result) != "2" {
		t.Fatalf("bob: %s %v", res.Result, err)
	}
}
