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

// rawTemplate is template.yaml as a YAML tree, intrinsic tags (!Ref, !GetAtt, !Sub, !If)
// kept, for what goformation resolves away or does not model.
func rawTemplate(t *testing.T) *yaml.Node {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return &doc
}

// mapValue is the value of key in the mapping n (a document's root too), or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// path follows keys down from n.
func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = mapValue(n, k)
	}
	return n
}

// deleteKey removes key from the mapping n.
func deleteKey(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = slices.Delete(n.Content, i, i+2)
			return
		}
	}
}

// resourcesOf returns the template's resources of type typ, by logical id.
func resourcesOf(doc *yaml.Node, typ string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	res := mapValue(doc, "Resources")
	if res == nil {
		return out
	}
	for i := 0; i+1 < len(res.Content); i += 2 {
		if r := res.Content[i+1]; typ == "" || mapValue(r, "Type").Value == typ {
			out[res.Content[i].Value] = r
		}
	}
	return out
}

// keys are the keys of the mapping n.
func keys(n *yaml.Node) []string {
	var out []string
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}

// ref is the logical id n refers to with !Ref or !GetAtt (X.Attr or [X, Attr]), else "".
func ref(n *yaml.Node) string {
	switch {
	case n == nil:
		return ""
	case n.Tag == "!Ref":
		id, _, _ := strings.Cut(n.Value, ".") // SAM's Function.Alias and Function.Version
		return id
	case n.Tag == "!GetAtt" && n.Kind == yaml.ScalarNode:
		id, _, _ := strings.Cut(n.Value, ".")
		return id
	case n.Tag == "!GetAtt" && n.Kind == yaml.SequenceNode && len(n.Content) > 0:
		return n.Content[0].Value
	}
	return ""
}

var subVar = regexp.MustCompile(`\$\{([A-Za-z0-9:]+)(\.[A-Za-z0-9.]+)?\}`)

// references are every logical id or parameter the subtree n names (through !Ref, !GetAtt,
// !Sub and !If conditions), in order.
func references(n *yaml.Node) []string {
	var out []string
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if id := ref(n); id != "" {
			out = append(out, id)
		}
		if n.Tag == "!Sub" && n.Kind == yaml.ScalarNode {
			for _, m := range subVar.FindAllStringSubmatch(n.Value, -1) {
				out = append(out, m[1])
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return out
}

// TestTemplateOperations checks what an operator runs on: nothing in the template names a
// resource or parameter that does not exist; every function logs in JSON to a log group of
// its own with a retention; every function has an errors and a throttles alarm, every queue a
// depth alarm and an output, the HTTP API a 5xx alarm, and every alarm notifies the optional
// topic; the tick is on the clock; a tick Lambda gave up on lands in a queue the role may
// write; HTTP API routes are throttled; KMS is granted only for a customer key.
func TestTemplateOperations(t *testing.T) {
	t.Parallel()
	doc := rawTemplate(t)
	all := resourcesOf(doc, "")
	functions := resourcesOf(doc, "AWS::Serverless::Function")
	alarms := resourcesOf(doc, "AWS::CloudWatch::Alarm")

	// Logical ids SAM generates from the functions' properties.
	declared := map[string]bool{"ServerlessHttpApi": true}
	for _, id := range keys(mapValue(doc, "Parameters")) {
		declared[id] = true
	}
	for id := range all {
		declared[id] = true
	}
	queues := slices.Collect(func(yield func(string) bool) {
		for id := range resourcesOf(doc, "AWS::SQS::Queue") {
			if !yield(id) {
				return
			}
		}
	})
	for name, fn := range functions {
		if path(fn, "Properties", "FunctionUrlConfig") != nil {
			declared[name+"Url"] = true
		}
		events := path(fn, "Properties", "Events")
		for _, ev := range keys(events) {
			if q := path(events, ev, "Properties", "DeadLetterConfig", "QueueLogicalId"); q != nil {
				declared[q.Value] = true
				queues = append(queues, q.Value)
			}
		}
	}

	// 1. No dangling references anywhere (resources, globals, outputs).
	for _, section := range []string{"Globals", "Resources", "Outputs"} {
		for _, id := range references(mapValue(doc, section)) {
			if !declared[id] && !strings.HasPrefix(id, "AWS::") {
				t.Errorf("%s refers to %s, which the template does not declare", section, id)
			}
		}
	}

	// alarmsOn lists the alarms on metric whose dimensions refer to id.
	alarmsOn := func(metric, id string) []string {
		var out []string
		for name, a := range alarms {
			if path(a, "Properties", "MetricName").Value != metric {
				continue
			}
			if slices.Contains(references(path(a, "Properties", "Dimensions")), id) {
				out = append(out, name)
			}
		}
		return out
	}

	// 2. Every function: JSON logs in a log group of its own, kept LogRetentionDays; an
	// errors alarm and a throttles alarm.
	groups := map[string]string{}
	for name, fn := range functions {
		lc := path(fn, "Properties", "LoggingConfig")
		if f := mapValue(lc, "LogFormat"); f == nil || f.Value != "JSON" {
			t.Errorf("%s: LoggingConfig.LogFormat is not JSON", name)
		}
		group := ref(mapValue(lc, "LogGroup"))
		if g, ok := all[group]; !ok || mapValue(g, "Type").Value != "AWS::Logs::LogGroup" {
			t.Errorf("%s: LoggingConfig.LogGroup %q is not a log group of the template", name, group)
		} else if ref(path(g, "Properties", "RetentionInDays")) != "LogRetentionDays" {
			t.Errorf("%s: log group %s is not kept LogRetentionDays", name, group)
		}
		if prev, dup := groups[group]; dup && group != "" {
			t.Errorf("%s and %s log to the same group %s", prev, name, group)
		}
		groups[group] = name
		for _, metric := range []string{"Errors", "Throttles"} {
			if len(alarmsOn(metric, name)) == 0 {
				t.Errorf("%s: no alarm on its %s", name, metric)
			}
		}
	}

	// 3. Every queue: a depth alarm and an output.
	outputs := mapValue(doc, "Outputs")
	for _, q := range queues {
		if len(alarmsOn("ApproximateNumberOfMessagesVisible", q)) == 0 {
			t.Errorf("queue %s: no alarm on its depth", q)
		}
		var out bool
		for _, o := range keys(outputs) {
			out = out || slices.Contains(references(path(outputs, o, "Value")), q)
		}
		if !out {
			t.Errorf("queue %s: no output", q)
		}
	}
	if len(queues) < 2 {
		t.Errorf("queues = %v, want the scheduler's dead-letter and on-failure queues", queues)
	}
	if len(alarmsOn("5xx", "ServerlessHttpApi")) == 0 {
		t.Error("no alarm on the HTTP API's 5xx answers")
	}

	// 4. Every alarm notifies AlarmTopicArn when one is given, else the stack's AlarmTopic
	// (TestTemplateAlarmsNotify).
	for name, a := range alarms {
		actions := path(a, "Properties", "AlarmActions")
		if actions == nil || len(actions.Content) != 1 || actions.Content[0].Tag != "!If" || len(actions.Content[0].Content) != 3 ||
			!slices.Equal(references(actions.Content[0]), []string{"AlarmTopicArn", "AlarmTopic"}) {
			t.Errorf("%s: AlarmActions is not [!If [HasAlarmTopic, !Ref AlarmTopicArn, !Ref AlarmTopic]]", name)
		}
	}

	// 5. The tick runs on the clock's fives, and a tick Lambda gave up on goes to a queue the
	// functions' role may send to.
	sched := functions["SchedulerFunction"]
	if e := path(sched, "Properties", "Events", "Tick", "Properties", "ScheduleExpression"); e == nil || e.Value != "cron(0/5 * * * ? *)" {
		t.Errorf("the tick's ScheduleExpression is not cron(0/5 * * * ? *)")
	}
	onFailure := path(sched, "Properties", "EventInvokeConfig", "DestinationConfig", "OnFailure")
	dest := ref(mapValue(onFailure, "Destination"))
	if t2 := mapValue(onFailure, "Type"); t2 == nil || t2.Value != "SQS" || !slices.Contains(queues, dest) {
		t.Errorf("SchedulerFunction: no OnFailure destination to an SQS queue of the template (got %q)", dest)
	}
	var mayWrite bool
	for _, st := range path(all["SchedulerRole"], "Properties", "Policies").Content {
		for _, s := range path(st, "PolicyDocument", "Statement").Content {
			action := mapValue(s, "Action")
			mayWrite = mayWrite || action != nil && action.Value == "sqs:SendMessage" && ref(mapValue(s, "Resource")) == dest
		}
	}
	if !mayWrite {
		t.Errorf("SchedulerRole may not sqs:SendMessage to %s: Lambda could not deliver a failed tick", dest)
	}

	// 6. HTTP API throttling from the parameters.
	rs := path(doc, "Globals", "HttpApi", "DefaultRouteSettings")
	if ref(mapValue(rs, "ThrottlingBurstLimit")) != "HttpApiBurstLimit" || ref(mapValue(rs, "ThrottlingRateLimit")) != "HttpApiRateLimit" {
		t.Error("Globals.HttpApi.DefaultRouteSettings does not throttle with HttpApiBurstLimit and HttpApiRateLimit")
	}

	// 7. KMS: only the customer key, only when given; never key/*.
	raw, _ := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if strings.Contains(string(raw), ":key/*") {
		t.Error("the template grants KMS on every key (key/*); grant the customer key only")
	}
}

// TestTemplateRunQueue: the webhook function is told RunQueue's URL and may send to it; the
// worker consumes RunQueue with partial batch failures and bounded concurrency; a message is
// invisible for at least six times the worker's timeout while in work, and one that failed 5
// receives moves to a dead-letter queue.
func TestTemplateRunQueue(t *testing.T) {
	t.Parallel()
	doc := rawTemplate(t)
	all := resourcesOf(doc, "")
	fns := resourcesOf(doc, "AWS::Serverless::Function")

	if ref(path(fns["WebhookFunction"], "Properties", "Environment", "Variables", "STEWARD_RUN_QUEUE_URL")) != "RunQueue" {
		t.Error("WebhookFunction: STEWARD_RUN_QUEUE_URL is not !Ref RunQueue (the queue's URL)")
	}
	worker := fns["WorkerFunction"]
	if worker == nil {
		t.Fatal("no WorkerFunction")
	}
	if c := path(worker, "Properties", "CodeUri"); c == nil || c.Value != "functions/worker" {
		t.Errorf("WorkerFunction CodeUri is not functions/worker")
	}
	var timeout int
	if n := path(worker, "Properties", "Timeout"); n == nil || yaml.Unmarshal([]byte(n.Value), &timeout) != nil || timeout <= 0 {
		t.Fatal("WorkerFunction has no Timeout of its own")
	}
	var sqsEvents int
	events := path(worker, "Properties", "Events")
	for _, name := range keys(events) {
		ev := mapValue(events, name)
		if mapValue(ev, "Type").Value != "SQS" {
			continue
		}
		sqsEvents++
		p := mapValue(ev, "Properties")
		if ref(mapValue(p, "Queue")) != "RunQueue" {
			t.Errorf("WorkerFunction event %s: Queue is not RunQueue's Arn", name)
		}
		if b := mapValue(p, "BatchSize"); b == nil || b.Value == "" {
			t.Errorf("WorkerFunction event %s: no BatchSize", name)
		}
		if frt := mapValue(p, "FunctionResponseTypes"); frt == nil || len(frt.Content) != 1 || frt.Content[0].Value != "ReportBatchItemFailures" {
			t.Errorf("WorkerFunction event %s: FunctionResponseTypes is not [ReportBatchItemFailures]", name)
		}
		if ref(path(p, "ScalingConfig", "MaximumConcurrency")) != "WorkerMaximumConcurrency" {
			t.Errorf("WorkerFunction event %s: ScalingConfig.MaximumConcurrency is not the WorkerMaximumConcurrency parameter", name)
		}
	}
	if sqsEvents != 1 {
		t.Errorf("WorkerFunction has %d SQS events, want 1", sqsEvents)
	}
	if d := path(doc, "Parameters", "WorkerMaximumConcurrency", "Default"); d == nil || d.Value != "2" {
		t.Error("parameter WorkerMaximumConcurrency does not default to 2")
	}

	q := path(all["RunQueue"], "Properties")
	var visibility int
	if v := mapValue(q, "VisibilityTimeout"); v == nil || yaml.Unmarshal([]byte(v.Value), &visibility) != nil || visibility < 6*timeout {
		t.Errorf("RunQueue VisibilityTimeout = %d s, want at least 6 × the worker's Timeout (%d s)", visibility, 6*timeout)
	}
	redrive := mapValue(q, "RedrivePolicy")
	if ref(mapValue(redrive, "deadLetterTargetArn")) != "RunDeadLetterQueue" || mapValue(redrive, "maxReceiveCount") == nil || mapValue(redrive, "maxReceiveCount").Value != "5" {
		t.Error("RunQueue RedrivePolicy does not move a message to RunDeadLetterQueue after 5 receives")
	}
	if all["RunDeadLetterQueue"] == nil || mapValue(all["RunDeadLetterQueue"], "Type").Value != "AWS::SQS::Queue" {
		t.Error("no RunDeadLetterQueue queue")
	}

	// The runtime functions may send to the run queue (RuntimePolicy), the worker poll it.
	granted := map[string]bool{}
	statements := path(all["RuntimePolicy"], "Properties", "PolicyDocument", "Statement").Content
	for _, pol := range path(all["WorkerRole"], "Properties", "Policies").Content {
		statements = append(statements, path(pol, "PolicyDocument", "Statement").Content...)
	}
	for _, s := range statements {
		if ref(mapValue(s, "Resource")) != "RunQueue" {
			continue
		}
		action := mapValue(s, "Action")
		if action.Kind == yaml.ScalarNode {
			granted[action.Value] = true
		}
		for _, a := range action.Content {
			granted[a.Value] = true
		}
	}
	for _, want := range []string{"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"} {
		if !granted[want] {
			t.Errorf("RuntimePolicy and WorkerRole do not grant %s on RunQueue", want)
		}
	}
}
