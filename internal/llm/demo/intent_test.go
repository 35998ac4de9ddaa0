package demo

import (
	"encoding/json"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"remind me to buy milk", "Add a task: x", "remember that “tea”", "what time is it?", "list my tasks", "", "İ remind"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		in, ok := parse(msg)
		if !ok {
			return
		}
		var args map[string]string
		if err := json.Unmarshal(in.args, &args); err != nil {
			t.Fatalf("parse(%q) args %s: %v", msg, in.args, err)
		}
		for k, v := range args {
			if v == "" {
				t.Errorf("parse(%q) gave an empty %s", msg, k)
			}
		}
	})
}
