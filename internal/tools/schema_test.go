package tools

import (
	"encoding/json"
	"testing"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{" {\n \"z\" : [ 3 , {\"y\":1,\"x\":2} ],\t\"a\":null } ", `{"a":null,"z":[3,{"x":2,"y":1}]}`},
		{`{"n":1.50,"m":1e3,"k":-0,"big":12345678901234567890}`, `{"big":12345678901234567890,"k":-0,"m":1e3,"n":1.50}`},
		{`{"s":"a<b>&\u00e9\u0041"}`, `{"s":"a<b>&éA"}`},
		{`"x"`, `"x"`},
		{`[]`, `[]`},
	}
	for _, tc := range tests {
		got, err := Canonical(json.RawMessage(tc.in))
		if err != nil {
			t.Errorf("Canonical(%s): %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("Canonical(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1} {}`, `{"a":1}x`, `{'a':1}`, `nul`} {
		if got, err := Canonical(json.RawMessage(bad)); err == nil {
			t.Errorf("Canonical(%q) = %s, want an error", bad, got)
		}
	}
}

func TestArgsHash(t *testing.T) {
	t.Parallel()
	hash := func(name, args string) string {
		t.Helper()
		h, err := ArgsHash(name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("ArgsHash(%s, %s): %v", name, args, err)
		}
		return h
	}
	base := hash("create_task", `{"title":"Buy milk","due":"2025-03-02","meta":{"a":1,"b":[1,2]}}`)
	if len(base) != 64 {
		t.Errorf("hash %q is not hex SHA-256", base)
	}
	same := []string{
		`{"due":"2025-03-02","title":"Buy milk","meta":{"b":[1,2],"a":1}}`,
		"{\n  \"meta\": { \"a\": 1, \"b\": [ 1, 2 ] },\n  \"title\": \"Buy milk\",\n  \"due\": \"2025-03-02\"\n}",
		`{"title":"Buy \u006dilk","due":"2025-03-02","meta":{"a":1,"b":[1,2]}}`,
	}
	for _, s := range same {
		if h := hash("create_task", s); h != base {
			t.Errorf("hash of %s differs from the reordered original", s)
		}
	}
	different := []struct{ name, args string }{
		{"create_task", `{"title":"Buy milk!","due":"2025-03-02","meta":{"a":1,"b":[1,2]}}`},
		{"create_task", `{"title":"Buy milk","due":"2025-03-02","meta":{"a":1,"b":[2,1]}}`},
		{"create_task", `{"title":"Buy milk","due":"2025-03-02","meta":{"a":1.0,"b":[1,2]}}`},
		{"create_task", `{"title":"Buy milk","meta":{"a":1,"b":[1,2]}}`},
		{"notify", `{"title":"Buy milk","due":"2025-03-02","meta":{"a":1,"b":[1,2]}}`},
	}
	for _, d := range different {
		if hash(d.name, d.args) == base {
			t.Errorf("hash of %s %s equals the original's", d.name, d.args)
		}
	}
	// The NUL separator keeps name and arguments apart.
	if hash("a", "12") == hash("a1", "2") {
		t.Error("name and arguments run together")
	}
	// No arguments hash like {}.
	if hash("list_tasks", "") != hash("list_tasks", "{}") {
		t.Error("empty arguments do not hash like {}")
	}
	if _, err := ArgsHash("x", json.RawMessage(`{"a":`)); err == nil {
		t.Error("ArgsHash of invalid JSON succeeded")
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,{"d":2,"c":3}]}`, `1.0e-3`, `"\u00e9"`, `[`, `{"a":1}{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Canonical(json.RawMessage(s))
		if err != nil {
			return
		}
		again, err := Canonical(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("Canonical is not idempotent on %q: %q then %q (%v)", s, c, again, err)
		}
	})
}
