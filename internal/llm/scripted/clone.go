package scripted

import (
	"bytes"
	"slices"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// cloneRequest deep-copies a request, so neither the caller nor a step can change a recorded
// request by changing its own.
func cloneRequest(r llm.Request) llm.Request {
	out := r
	out.Messages = cloneMessages(r.Messages)
	if r.Tools != nil {
		out.Tools = make([]llm.ToolDecl, len(r.Tools))
		for i, t := range r.Tools {
			t.Parameters = bytes.Clone(t.Parameters)
			out.Tools[i] = t
		}
	}
	return out
}

func cloneMessages(msgs []steward.Message) []steward.Message {
	if msgs == nil {
		return nil
	}
	out := make([]steward.Message, len(msgs))
	for i, m := range msgs {
		m.Parts = slices.Clone(m.Parts)
		for j := range m.Parts {
			p := &m.Parts[j]
			p.ProviderMeta = bytes.Clone(p.ProviderMeta)
			if p.ToolCall != nil {
				c := *p.ToolCall
				c.Args = bytes.Clone(c.Args)
				p.ToolCall = &c
			}
			if p.ToolResult != nil {
				r := *p.ToolResult
				r.Output = bytes.Clone(r.Output)
				p.ToolResult = &r
			}
		}
		out[i] = m
	}
	return out
}
