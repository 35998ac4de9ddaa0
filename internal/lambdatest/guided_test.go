package lambdatest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// guidedAnswers are the parameters docs/DEPLOY.md tells an operator to answer; every other
// parameter's default is what a first deploy wants.
var guidedAnswers = []string{"Database", "GeminiApiKeyParameter"}

// TestTemplateGuidedDeploy: `sam deploy --guided` prompts every parameter, showing its
// default (or the value samconfig.toml saved) — except a NoEcho parameter, which it prompts
// with no default, so that pressing Enter on a re-run empties it. So no parameter is NoEcho
// (the model keys live in SSM SecureStrings the operator makes once), every parameter has a
// default, and DEPLOY.md names the answers and the samconfig.example.toml path.
func TestTemplateGuidedDeploy(t *testing.T) {
	t.Parallel()
	doc := rawTemplate(t)
	params := mapValue(doc, "Parameters")
	for _, name := range keys(params) {
		p := mapValue(params, name)
		if ne := mapValue(p, "NoEcho"); ne != nil && ne.Value == "true" {
			t.Errorf("parameter %s is NoEcho: `sam deploy --guided` prompts it without a default, so Enter on a re-run empties it", name)
		}
		if mapValue(p, "Default") == nil {
			t.Errorf("parameter %s has no Default: a guided deploy cannot take Enter for it", name)
		}
	}
	for _, name := range guidedAnswers {
		if mapValue(params, name) == nil {
			t.Errorf("DEPLOY.md's answer %s is not a parameter", name)
		}
	}
	deploy, err := os.ReadFile(filepath.Join(repoRoot, "docs", "DEPLOY.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cp samconfig.example.toml samconfig.toml", "may not have authorization defined", "aws ssm put-parameter --type SecureString --name /steward/gemini-api-key"} {
		if !strings.Contains(string(deploy), want) {
			t.Errorf("docs/DEPLOY.md does not say %q", want)
		}
	}
	example, err := os.ReadFile(filepath.Join(repoRoot, "samconfig.example.toml"))
	if err != nil {
		t.Fatalf("samconfig.example.toml: %v", err)
	}
	for _, name := range guidedAnswers {
		if !regexp.MustCompile(`(?m)^parameter_overrides = .*\b` + name + `=`).Match(example) {
			t.Errorf("samconfig.example.toml's parameter_overrides does not name %s", name)
		}
	}
	ignore, _ := os.ReadFile(filepath.Join(repoRoot, ".gitignore"))
	if !slices.Contains(strings.Split(string(ignore), "\n"), "/samconfig.toml") {
		t.Error(".gitignore does not ignore /samconfig.toml: an operator's answers conflict with every git pull")
	}
}

// TestTemplateAlarmsNotify: every alarm notifies a topic — the operator's AlarmTopicArn or
// the stack's own AlarmTopic, which AlarmEmail subscribes to — and the web app's Function
// URL 5xx are alarmed.
func TestTemplateAlarmsNotify(t *testing.T) {
	t.Parallel()
	doc := rawTemplate(t)
	if resourcesOf(doc, "AWS::SNS::Topic")["AlarmTopic"] == nil {
		t.Fatal("no AlarmTopic: without AlarmTopicArn the alarms notify no one")
	}
	if mapValue(mapValue(doc, "Parameters"), "AlarmEmail") == nil {
		t.Error("no AlarmEmail parameter to subscribe an address to the alarms")
	}
	alarms := resourcesOf(doc, "AWS::CloudWatch::Alarm")
	url5xx := false
	for id, a := range alarms {
		props := mapValue(a, "Properties")
		actions, _ := yaml.Marshal(mapValue(props, "AlarmActions"))
		if !strings.Contains(string(actions), "AlarmTopic") || strings.Contains(string(actions), "NoValue") {
			t.Errorf("%s's AlarmActions %s: want the alarm topic always", id, strings.TrimSpace(string(actions)))
		}
		if mapValue(props, "MetricName").Value == "Url5xxCount" {
			url5xx = true
		}
	}
	if !url5xx {
		t.Error("no alarm on the Function URL's Url5xxCount: the web app's 5xx go unseen")
	}
}

// TestTemplateSecretsOutliveTheStack: a secret that a stack deletes or replaces takes the
// keys owners' data needs (STEWARD_SECRET_KEY, the roles' passwords) with it.
func TestTemplateSecretsOutliveTheStack(t *testing.T) {
	t.Parallel()
	doc := rawTemplate(t)
	for id, s := range resourcesOf(doc, "AWS::SecretsManager::Secret") {
		for _, k := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
			if v := mapValue(s, k); v == nil || v.Value != "Retain" {
				t.Errorf("secret %s has no %s: Retain", id, k)
			}
		}
	}
}
