package openaiapi

import (
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

func TestReplyDecidesExactlyTheListedCalls(t *testing.T) {
	pending := []steward.PendingCall{{CallID: "a", ArgsHash: "ha"}, {CallID: "b", ArgsHash: "hb"}, {CallID: "c", ArgsHash: "hc"}}
	cases := []struct {
		text    string
		approve []bool
		msgs    []string
	}{
		{"approve", []bool{true, true, true}, []string{"", "", ""}},
		{"Approve all", []bool{true, true, true}, []string{"", "", ""}},
		{"approve 2", []bool{false, true, false}, []string{notApproved, "", notApproved}},
		{"deny 1 too pricey", []bool{false, false, false}, []string{"too pricey", notApproved, notApproved}},
		{"approve 1 3; deny 2 no", []bool{true, false, true}, []string{"", "no", ""}},
		{"deny all not today", []bool{false, false, false}, []string{"not today", "not today", "not today"}},
		{"deny", []bool{false, false, false}, []string{notApproved, notApproved, notApproved}},
	}
	for _, c := range cases {
		r, ok := parseReply(c.text)
		if !ok {
			t.Fatalf("%q is not a reply", c.text)
		}
		ds, err := r.decisions(pending)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		for i, d := range ds {
			if d.CallID != pending[i].CallID || d.ArgsHash != pending[i].ArgsHash || d.Approve != c.approve[i] || d.Message != c.msgs[i] {
				t.Fatalf("%q: decision %d = %+v", c.text, i, d)
			}
		}
	}
	for _, text := range []string{"approve the plan", "deny access to bob", "what now?", ""} {
		if _, ok := parseReply(text); ok {
			t.Fatalf("%q was read as an approval reply", text)
		}
	}
	for _, text := range []string{"approve 4", "deny 0", "approve 1; deny 1", "approve; deny 2"} {
		r, _ := parseReply(text)
		if _, err := r.decisions(pending); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Fatalf("%q: err = %v", text, err)
		}
	}
}
