package lambdatest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7/intrinsics"
	"gopkg.in/yaml.v3"
)

// stack is template.yaml as CloudFormation would deploy it with some parameters (the rest at
// their defaults), resolved by goformation's intrinsics processor: conditions evaluated, each
// !If's branch chosen, parameters substituted, AWS::NoValue dropped, and a resource or output
// whose Condition is false left out. What only a deploy knows stays symbolic: a Ref to a
// resource is "Ref(X)" (SAM's X.Alias and X.Version too), a GetAtt "GetAtt(X.Attr)", also
// inside a !Sub.
type stack struct {
	Resources map[string]resource
	Outputs   map[string]map[string]any
	Globals   map[string]any
	params    map[string]string
}

// resource is one resource of a deployed stack.
type resource struct {
	Type                string
	Properties          map[string]any
	DependsOn           any
	DeletionPolicy      string
	UpdateReplacePolicy string
}

// modes are the deployments the tests look at: each Database mode at its defaults, and each
// with every option turned the other way.
var modes = map[string]map[string]string{
	"external": {},
	"aurora":   {"Database": "aurora"},
	"external, every option": {
		"SubnetIds": "subnet-1,subnet-2", "SecurityGroupIds": "sg-1", "KmsKeyArn": "arn:aws:kms:us-east-1:123456789012:key/k-1",
		"PublicUrl": "https://steward.example.com", "GeminiApiKeyParameter": "/steward/gemini-api-key", "OpenAIApiKeyParameter": "/steward/openai-api-key", "AlarmEmail": "ops@example.com", "ModelChain": "gemini:gemini-3.8-flash,openai:gpt-5-mini",
		"SecretKeyParameter": "/steward/secret-key", "TelegramWebhookSecretParameter": "/steward/telegram", "VapidPrivateKeyParameter": "/steward/vapid",
		"VapidPublicKey":  "BNQ-mR-PHqmxAx8eBo6uPi7lchHs6uTdXoj4fzJn1HaC6A274oLre-hWvSKJBlolk5HmE1ASYrLCTKLgsfFzN5w",
		"DocumentStorage": "s3", "AlarmTopicArn": "arn:aws:sns:us-east-1:123456789012:steward", "ReservedConcurrency": "5",
	},
	"aurora, every option": {
		"Database": "aurora", "RdsProxy": "false", "VpcEgress": "nat-instance", "VpcEndpoints": "true", "AuroraMinCapacity": "0",
		"GeminiApiKeyParameter": "/steward/gemini", "OpenAIApiKeyParameter": "/steward/openai", "DocumentStorage": "s3",
	},
}

var subVars = regexp.MustCompile(`\$\{([^}]+)\}`)

// deployed resolves template.yaml with params.
func deployed(t *testing.T, params map[string]string) stack {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// goformation knows no !Condition tag, and evaluates a Condition key into the object
	// holding it: spell the tag out, and rename the resources' and outputs' Condition keys.
	var conditionTags func(n *yaml.Node)
	conditionTags = func(n *yaml.Node) {
		for i, c := range n.Content {
			if c.Tag == "!Condition" {
				n.Content[i] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
					{Kind: yaml.ScalarNode, Tag: "!!str", Value: "Condition"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: c.Value}}}
				continue
			}
			conditionTags(c)
		}
	}
	conditionTags(&doc)
	for _, section := range []string{"Resources", "Outputs"} {
		s := mapValue(&doc, section)
		for i := 1; s != nil && i < len(s.Content); i += 2 {
			for j := 0; j+1 < len(s.Content[i].Content); j += 2 {
				if k := s.Content[i].Content[j]; k.Value == "Condition" {
					k.Value = "DeployedIf"
				}
			}
		}
	}
	if raw, err = yaml.Marshal(&doc); err != nil {
		t.Fatal(err)
	}
	overrides := map[string]any{}
	for k, v := range params {
		overrides[k] = v
	}
	parseMu.Lock() // goformation's YAML tag registry is global
	out, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{
		ParameterOverrides: overrides, EvaluateConditions: true,
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{"Ref": symbolicRef, "Fn::GetAtt": symbolicGetAtt, "Fn::Sub": symbolicSub},
	})
	parseMu.Unlock()
	if err != nil {
		t.Fatalf("resolve template.yaml with %v: %v", params, err)
	}
	var tpl struct {
		Conditions map[string]any
		Resources  map[string]map[string]any
		Outputs    map[string]map[string]any
		Globals    map[string]any
		Parameters map[string]map[string]any
	}
	if err := json.Unmarshal(out, &tpl); err != nil {
		t.Fatal(err)
	}
	on := func(n map[string]any) bool {
		c, ok := n["DeployedIf"].(string)
		if !ok {
			return true
		}
		v, known := tpl.Conditions[c].(bool)
		if !known {
			t.Fatalf("condition %s did not evaluate: %v", c, tpl.Conditions[c])
		}
		return v
	}
	st := stack{Resources: map[string]resource{}, Outputs: map[string]map[string]any{}, Globals: dropNil(tpl.Globals).(map[string]any), params: map[string]string{}}
	for k, p := range tpl.Parameters {
		st.params[k] = fmt.Sprint(p["Default"])
	}
	for id, r := range tpl.Resources {
		if !on(r) {
			continue
		}
		r = dropNil(r).(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		typ, _ := r["Type"].(string)
		dp, _ := r["DeletionPolicy"].(string)
		urp, _ := r["UpdateReplacePolicy"].(string)
		st.Resources[id] = resource{Type: typ, Properties: props, DependsOn: r["DependsOn"], DeletionPolicy: dp, UpdateReplacePolicy: urp}
	}
	for id, o := range tpl.Outputs {
		if on(o) {
			st.Outputs[id] = dropNil(o).(map[string]any)
		}
	}
	return st
}

// symbolicRef resolves a Ref: a parameter to its value (a CommaDelimitedList to a list), a
// pseudo parameter to a fixed value, an SSM parameter to its name (a !Sub of pseudo
// parameters), anything else (a resource) to "Ref(X)".
func symbolicRef(_ string, input, template any) any {
	name, ok := input.(string)
	if !ok {
		return nil
	}
	switch name {
	case "AWS::NoValue":
		return nil
	case "AWS::Region":
		return "us-east-1"
	case "AWS::AccountId":
		return "123456789012"
	case "AWS::StackName":
		return "steward"
	case "AWS::Partition":
		return "aws"
	case "AWS::URLSuffix":
		return "amazonaws.com"
	}
	tpl, _ := template.(map[string]any)
	if r, _ := dig(tpl, "Resources", name).(map[string]any); r["Type"] == "AWS::SSM::Parameter" {
		// A parameter's Ref is its name.
		return symbolicSub("Fn::Sub", dig(r, "Properties", "Name", "Fn::Sub"), template)
	}
	params, _ := tpl["Parameters"].(map[string]any)
	if p, ok := params[name].(map[string]any); ok {
		if p["Type"] == "CommaDelimitedList" {
			s, _ := p["Default"].(string)
			if s == "" {
				return []any{}
			}
			var list []any
			for _, v := range strings.Split(s, ",") {
				list = append(list, v)
			}
			return list
		}
		return p["Default"]
	}
	return "Ref(" + name + ")"
}

// symbolicGetAtt is "GetAtt(X.Attr)".
func symbolicGetAtt(_ string, input, _ any) any {
	switch v := input.(type) {
	case string:
		return "GetAtt(" + v + ")"
	case []any:
		parts := make([]string, len(v))
		for i, p := range v {
			parts[i] = fmt.Sprint(p)
		}
		return "GetAtt(" + strings.Join(parts, ".") + ")"
	}
	return nil
}

// symbolicSub substitutes a !Sub's variables: parameters and pseudo parameters by value, a
// resource's attribute as GetAtt(X.Attr), a resource as Ref(X).
func symbolicSub(_ string, input, template any) any {
	src, vars := "", map[string]any{}
	switch v := input.(type) {
	case string:
		src = v
	case []any:
		if len(v) == 2 {
			src, _ = v[0].(string)
			vars, _ = v[1].(map[string]any)
		}
	}
	return subVars.ReplaceAllStringFunc(src, func(m string) string {
		name := m[2 : len(m)-1]
		if v, ok := vars[name]; ok {
			return fmt.Sprint(v)
		}
		if !strings.Contains(name, "::") && strings.Contains(name, ".") {
			return "GetAtt(" + name + ")"
		}
		switch v := symbolicRef("Ref", name, template).(type) {
		case string:
			return v
		case []any:
			return fmt.Sprint(v...)
		}
		return ""
	})
}

// dropNil removes AWS::NoValue (nil) from lists and maps, recursively.
func dropNil(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = dropNil(e)
			}
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			if e != nil {
				out = append(out, dropNil(e))
			}
		}
		return out
	}
	return v
}

// str is the string at keys under v ("" when missing or not a string).
func str(v any, keys ...string) string {
	s, _ := dig(v, keys...).(string)
	return s
}

// dig follows keys down maps.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// strs are the strings of a list, or of a single string.
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// functions are the stack's functions, by logical id.
func (s stack) functions() map[string]resource {
	out := map[string]resource{}
	for id, r := range s.Resources {
		if r.Type == "AWS::Serverless::Function" {
			out[id] = r
		}
	}
	return out
}

// env is a function's environment as SAM deploys it: the Globals' variables, each replaced
// by the function's own of the same name.
func (s stack) env(fn resource) map[string]string {
	out := map[string]string{}
	for _, vars := range []any{dig(s.Globals, "Function", "Environment", "Variables"), dig(fn.Properties, "Environment", "Variables")} {
		m, _ := vars.(map[string]any)
		for k, v := range m {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

// role is the logical id of the role a function runs as (its Role: GetAtt(X.Arn)).
func role(fn resource) string {
	r := str(fn.Properties, "Role")
	return strings.TrimSuffix(strings.TrimPrefix(r, "GetAtt("), ".Arn)")
}

// grants lists what a role's inline policies allow: action → resources.
func (s stack) grants(t *testing.T, roleID string) map[string][]string {
	t.Helper()
	r, ok := s.Resources[roleID]
	if !ok || r.Type != "AWS::IAM::Role" {
		t.Fatalf("%s is not a role of the stack", roleID)
	}
	out := map[string][]string{}
	policies, _ := r.Properties["Policies"].([]any)
	// A managed policy of the stack the role attaches counts as one of its own.
	for _, arn := range strs(r.Properties["ManagedPolicyArns"]) {
		if p, ok := s.Resources[strings.TrimSuffix(strings.TrimPrefix(arn, "Ref("), ")")]; ok && p.Type == "AWS::IAM::ManagedPolicy" {
			policies = append(policies, p.Properties)
		}
	}
	for _, p := range policies {
		statements, _ := dig(p, "PolicyDocument", "Statement").([]any)
		for _, st := range statements {
			if str(st, "Effect") != "Allow" {
				t.Errorf("%s: a statement that is not Allow: %v", roleID, st)
			}
			for _, a := range strs(dig(st, "Action")) {
				out[a] = append(out[a], strs(dig(st, "Resource"))...)
			}
		}
	}
	return out
}

// readable are the secrets a role may read, as the *_SSM variables name them: a secret as
// the Ref or GetAtt that names it, an SSM parameter by its name.
func (s stack) readable(t *testing.T, roleID string) []string {
	g := s.grants(t, roleID)
	var out []string
	out = append(out, g["secretsmanager:GetSecretValue"]...)
	for _, arn := range g["ssm:GetParameter"] {
		_, name, ok := strings.Cut(arn, ":parameter")
		if !ok {
			t.Errorf("%s may ssm:GetParameter %q, which is not one parameter's ARN", roleID, arn)
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// named are the secrets a function's environment names (its *_SSM variables).
func named(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if strings.HasSuffix(k, "_SSM") && v != "" {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
