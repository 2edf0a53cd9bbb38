package blame

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
)

// Excerpt is the conversation around the edit that wrote a line: the
// prompt of its turn, the agent's reasoning up to the edit (where it
// was kept), the tool call that made the edit, and what the agent said
// after it in the turn.
type Excerpt struct {
	Line      Line       `json:"line"`
	Title     string     `json:"session_title"`
	Prompt    string     `json:"prompt"`
	Reasoning []string   `json:"reasoning,omitempty"`
	Before    []string   `json:"before,omitempty"`
	Edit      *loom.Part `json:"edit"`
	After     []string   `json:"after,omitempty"`
}

// ExcerptOf reads the excerpt of l, a line an agent wrote (or mixed),
// from st.
func ExcerptOf(ctx context.Context, st loom.Reader, l Line) (*Excerpt, error) {
	if l.SessionID == "" {
		return nil, loom.Errorf(loom.EINVALID, "line %d is a %s's: no session wrote it", l.N, l.Kind)
	}
	s, err := st.Session(ctx, l.SessionID)
	if err != nil {
		return nil, fmt.Errorf("the session of line %d: %w", l.N, err)
	}
	msgs, err := st.Messages(ctx, l.SessionID, loom.MessageQuery{Turn: l.Turn})
	if err != nil {
		return nil, fmt.Errorf("turn %d of session %s: %w", l.Turn, l.SessionID, err)
	}
	x := &Excerpt{Line: l, Title: s.Title}
	seen := false
	for _, m := range msgs {
		switch {
		case m.Role == loom.RoleUser && x.Prompt == "":
			x.Prompt = m.Text()
			continue
		case m.Role != loom.RoleAssistant:
			continue
		}
		for i := range m.Parts {
			p := &m.Parts[i]
			switch {
			case m.ID == l.MessageID && p.ID == l.PartID:
				x.Edit, seen = p, true
			case p.Type == loom.PartReasoning && !seen && p.Text != "":
				x.Reasoning = append(x.Reasoning, p.Text)
			case p.Type == loom.PartText && p.Text != "":
				if seen {
					x.After = append(x.After, p.Text)
				} else {
					x.Before = append(x.Before, p.Text)
				}
			}
		}
	}
	if x.Edit == nil {
		return nil, loom.Errorf(loom.ENOTFOUND, "turn %d of session %s no longer holds the edit of line %d", l.Turn, l.SessionID, l.N)
	}
	return x, nil
}
