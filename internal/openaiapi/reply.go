package openaiapi

import (
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
)

// reply is an owner's approval reply to a listing of pending calls: one or more clauses,
// separated by newlines or ";":
//
//	approve | approve all | approve 1 3
//	deny | deny all [reason] | deny 2 [reason]
//
// Only calls the reply approves run; every other listed call is denied (fail closed).
type reply struct {
	approveAll bool
	denyAll    bool
	allReason  string
	approve    map[int]bool
	deny       map[int]string
}

// notApproved is the denial message of a listed call the reply did not approve.
const notApproved = "not approved in the owner's reply"

// parseReply reads text as an approval reply; false means it is an ordinary message.
func parseReply(text string) (reply, bool) {
	r := reply{approve: map[int]bool{}, deny: map[int]string{}}
	clauses := strings.FieldsFunc(text, func(c rune) bool { return c == '\n' || c == ';' })
	if len(clauses) == 0 {
		return r, false
	}
	for _, clause := range clauses {
		words := strings.Fields(clause)
		if len(words) == 0 {
			continue
		}
		verb := strings.ToLower(strings.TrimRight(words[0], ".!,:"))
		nums, rest, all := numbers(words[1:])
		switch {
		case verb == "approve" && len(rest) == 0 && (all || len(nums) == 0):
			r.approveAll = true
		case verb == "approve" && len(rest) == 0:
			for _, n := range nums {
				r.approve[n] = true
			}
		case verb == "deny" && len(words) == 1:
			r.denyAll = true
		case verb == "deny" && all:
			r.denyAll, r.allReason = true, strings.Join(rest, " ")
		case verb == "deny" && len(nums) > 0:
			for _, n := range nums {
				r.deny[n] = strings.Join(rest, " ")
			}
		default:
			return reply{}, false
		}
	}
	return r, true
}

// numbers reads the call numbers (or "all") at the start of words, and returns the words
// after them.
func numbers(words []string) (nums []int, rest []string, all bool) {
	for i, w := range words {
		w = strings.Trim(w, ",#.")
		if strings.EqualFold(w, "all") && i == 0 {
			all = true
			continue
		}
		n, err := strconv.Atoi(w)
		if err != nil || all {
			return nums, words[i:], all
		}
		nums = append(nums, n)
	}
	return nums, nil, all
}

// decisions turns the reply into one decision per pending call, bound to the call's args
// hash. A number that names no listed call, or a call both approved and denied, is refused.
func (r reply) decisions(pending []steward.PendingCall) ([]steward.Decision, error) {
	for n := range r.approve {
		if n < 1 || n > len(pending) {
			return nil, steward.Errorf(steward.CodeInvalid, "there is no call %d; the listing has calls 1 to %d", n, len(pending))
		}
		if _, denied := r.deny[n]; denied || r.denyAll {
			return nil, steward.Errorf(steward.CodeInvalid, "call %d is both approved and denied", n)
		}
	}
	for n := range r.deny {
		if n < 1 || n > len(pending) {
			return nil, steward.Errorf(steward.CodeInvalid, "there is no call %d; the listing has calls 1 to %d", n, len(pending))
		}
	}
	if r.approveAll && (r.denyAll || len(r.deny) > 0) {
		return nil, steward.Errorf(steward.CodeInvalid, "the reply both approves all calls and denies some")
	}
	out := make([]steward.Decision, len(pending))
	for i, p := range pending {
		d := steward.Decision{CallID: p.CallID, ArgsHash: p.ArgsHash}
		switch reason, denied := r.deny[i+1]; {
		case r.approveAll || r.approve[i+1]:
			d.Approve = true
		case denied && reason != "":
			d.Message = reason
		case r.denyAll && r.allReason != "":
			d.Message = r.allReason
		default:
			d.Message = notApproved
		}
		out[i] = d
	}
	return out, nil
}
