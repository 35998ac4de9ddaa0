package builtin

import (
	"context"
	"strconv"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// calculateArgs are the arguments of calculate.
type calculateArgs struct {
	Expression string `json:"expression" jsonschema:"arithmetic expression, e.g. (2 + 3) * 4 ^ 2 / sqrt(16); operators + - * / % ^, parentheses, functions sqrt abs round floor ceil min max, constants pi e"`

	result float64
}

// Check evaluates the expression, so that an expression that cannot be computed is reported
// like any other invalid argument.
func (a *calculateArgs) Check() error {
	v, err := evaluate(a.Expression)
	if err != nil {
		return &tools.ArgError{Field: "expression", Msg: err.Error(), Err: err}
	}
	a.result = v
	return nil
}

// calculateOutput is the output of calculate.
type calculateOutput struct {
	Expression string  `json:"expression"`
	Result     float64 `json:"result"`
}

// calculateTool returns the calculate tool (read): exact arithmetic instead of guessing.
func calculateTool() tools.Tool {
	return tools.Say(tools.New("calculate",
		"Evaluate an arithmetic expression and return the number. Use it for any arithmetic instead of computing in your head.",
		steward.KindRead,
		func(_ context.Context, _ tools.Env, a calculateArgs) (any, error) {
			return calculateOutput{Expression: a.Expression, Result: a.result}, nil
		}), sayCalculate, saidCalculate)
}

func sayCalculate(a calculateArgs) string { return "Calculate " + tools.Clip(a.Expression, 60) }

func saidCalculate(_ calculateArgs, o calculateOutput) string {
	return "= " + strconv.FormatFloat(o.Result, 'g', 12, 64)
}
