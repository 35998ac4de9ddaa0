package demo

import (
	"encoding/json"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"remind me to buy milk", "Add a task: x", "remember that “tea”", "what time is it?", "list my tasks", "", "İ remind", "how much did I spend on groceries in march?", "How much have I spent on Netflix last month"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		in, ok := parse(msg, time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC))
		if !ok {
			return
		}
		if len(in.args) == 0 {
			t.Fatalf("parse(%q) gave no call", msg)
		}
		for _, raw := range in.args {
			var args map[string]string
			if err := json.Unmarshal(raw, &args); err != nil {
				t.Fatalf("parse(%q) args %s: %v", msg, raw, err)
			}
			for k, v := range args {
				if v == "" {
					t.Errorf("parse(%q) gave an empty %s", msg, k)
				}
			}
		}
	})
}
