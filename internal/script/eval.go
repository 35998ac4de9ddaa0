package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// fileOptions is the Starlark dialect: while loops, sets, top-level if/for and reassigned
// globals, as a Python programmer expects; no recursion (the call depth stays bounded by the
// code's length).
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// maxTrace bounds the error text a failed run returns.
const maxTrace = 2 << 10

// Eval runs req in this process, bounded by MaxSteps, ctx (cancellation), MaxPrinted and
// MaxResult — but not in memory: Run is Eval in a child the kernel bounds. Its errors are
// *Error, written for the model.
func Eval(ctx context.Context, req Request) (Result, error) {
	var printed strings.Builder
	thread := &starlark.Thread{Name: "run_code"}
	thread.Load = func(*starlark.Thread, string) (starlark.StringDict, error) {
		return nil, errors.New("load is not available: everything run_code offers is predeclared")
	}
	thread.Print = func(t *starlark.Thread, msg string) {
		if printed.Len()+len(msg)+1 > MaxPrinted {
			t.Cancel(fmt.Sprintf("the code printed more than %d KB; print less, or return a value", MaxPrinted>>10))
			return
		}
		printed.WriteString(msg)
		printed.WriteByte('\n')
	}
	thread.SetMaxExecutionSteps(MaxSteps)
	stop := context.AfterFunc(ctx, func() {
		thread.Cancel(fmt.Sprintf("the code ran longer than %v and was stopped", Timeout))
	})
	defer stop()

	env, err := predeclared(thread, req)
	if err != nil {
		return Result{}, &Error{"the inputs could not be passed in: " + err.Error()}
	}
	var value starlark.Value = starlark.None
	if expr, perr := fileOptions.ParseExpr("code", req.Code, 0); perr == nil {
		value, err = starlark.EvalExprOptions(fileOptions, thread, expr, env)
	} else {
		var globals starlark.StringDict
		globals, err = starlark.ExecFileOptions(fileOptions, thread, "code", req.Code, env)
		if v, ok := globals["result"]; ok {
			value = v
		}
	}
	res := Result{Printed: printed.String(), Steps: thread.ExecutionSteps()}
	if err != nil {
		return res, &Error{explain(err)}
	}
	enc, err := starlark.Call(thread, jsonEncode, starlark.Tuple{value}, nil)
	if err != nil {
		return res, &Error{"the result cannot be returned as JSON: " + explain(err)}
	}
	s := string(enc.(starlark.String))
	if len(s) > MaxResult {
		return res, &Error{fmt.Sprintf("the result is %d KB as JSON; at most %d KB may be returned: aggregate it first", len(s)>>10, MaxResult>>10)}
	}
	res.Result = json.RawMessage(s)
	return res, nil
}

// explain words a Starlark error for the model: the error with its backtrace, bounded, and
// the step limit in words.
func explain(err error) string {
	msg := err.Error()
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		msg = ee.Backtrace()
	}
	if strings.Contains(msg, "too many steps") {
		msg = fmt.Sprintf("the code took more than %d steps and was stopped (an endless loop, or too much work: aggregate less)\n", MaxSteps) + msg
	}
	if len(msg) > maxTrace {
		msg = msg[:maxTrace] + "…"
	}
	return msg
}

// predeclared is the library plus each input bound to its name: converted from JSON, or a
// CSV text parsed to rows.
func predeclared(thread *starlark.Thread, req Request) (starlark.StringDict, error) {
	env := library()
	bind := func(name string, fn starlark.Value, arg string) error {
		if _, taken := env[name]; taken {
			return fmt.Errorf("the input name %q is taken; choose another", name)
		}
		v, err := starlark.Call(thread, fn, starlark.Tuple{starlark.String(arg)}, nil)
		env[name] = v
		return err
	}
	for name, v := range req.Inputs {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if err := bind(name, jsonDecode, string(b)); err != nil {
			return nil, err
		}
	}
	for name, text := range req.CSV {
		if err := bind(name, csvDictsFn, text); err != nil {
			return nil, err
		}
	}
	return env, nil
}
