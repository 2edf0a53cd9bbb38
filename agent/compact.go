package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/loomhq/loom"
)

const compactPrompt = `Summarise the conversation so far so that it can be continued from the summary alone: the user's goals, decisions made, facts learned, files and names involved, tool results that still matter, and open questions or next steps. Be complete but concise. Do not call any tool; answer with the summary only.`

// NeedsCompaction reports whether the context to send has passed the
// threshold: more than CompactItems non-user items since the last
// summary, or more than 80% of the model's context window when known.
func (l *Loop) NeedsCompaction(history []*loom.Message) bool {
	limit := l.CompactItems
	if limit <= 0 {
		limit = DefaultCompactItems
	}
	items, chars := 0, 0
	var lastInput int64
	for _, m := range history {
		chars += len(m.SearchText())
		if m.Role == loom.RoleAssistant && m.Usage.InputTokens > 0 {
			lastInput = m.Usage.InputTokens + m.Usage.CacheReadTokens + m.Usage.OutputTokens
		}
		if m.Role == loom.RoleUser || m.Role == loom.RoleSummary {
			continue
		}
		for _, p := range m.Parts {
			switch p.Type {
			case loom.PartText, loom.PartReasoning:
				items++
			case loom.PartTool:
				items += 2 // the call and its result
			}
		}
	}
	if items > limit {
		return true
	}
	if w := int64(l.ContextWindow); w > 0 {
		estimate := max(lastInput, int64(chars/4))
		return estimate*10 > w*8
	}
	return false
}

func (l *Loop) maybeCompact(ctx context.Context, s *loom.Session, emit func(Event)) error {
	history, err := l.history(ctx, s)
	if err != nil {
		return err
	}
	if !l.NeedsCompaction(history) {
		return nil
	}
	_, err = l.compact(ctx, s, history, emit)
	return err
}

// Compact summarises the session's context into a summary message. History
// is never deleted: the context becomes the summary and what follows it.
func (l *Loop) Compact(ctx context.Context, s *loom.Session, emit func(Event)) (*loom.Message, error) {
	if _, err := l.RepairInterrupted(ctx, s); err != nil {
		return nil, err
	}
	history, err := l.history(ctx, s)
	if err != nil {
		return nil, err
	}
	if len(history) == 0 {
		return nil, loom.Errorf(loom.EINVALID, "nothing to compact")
	}
	return l.compact(ctx, s, history, emit)
}

func (l *Loop) compact(ctx context.Context, s *loom.Session, history []*loom.Message, emit func(Event)) (*loom.Message, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	ask := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: compactPrompt}}}
	req := &loom.ModelRequest{
		Model:     l.Model,
		System:    l.SystemPrompt(s),
		Messages:  append(append([]*loom.Message{}, history...), ask),
		Tools:     l.toolSpecs(),
		MaxTokens: l.MaxTokens,
	}
	resp, err := l.stream(ctx, req, nil)
	if err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	var text strings.Builder
	for _, p := range resp.Parts {
		if p.Type == loom.PartText {
			text.WriteString(p.Text)
		}
	}
	if strings.TrimSpace(text.String()) == "" {
		return nil, fmt.Errorf("compaction: the model returned no summary")
	}
	u, model := l.callUsage(resp)
	u.Compactions = 1
	now := l.now()
	sum := &loom.Message{Role: loom.RoleSummary, Parts: []loom.Part{{Type: loom.PartText, Text: strings.TrimSpace(text.String())}},
		Model: model, Provider: l.Provider.Name(), Usage: u, CompletedAt: &now}
	if err := l.Store.Append(ctx, s, sum); err != nil {
		return nil, err
	}
	emit(Event{Kind: EventCompacted, Text: sum.Text(), SessionID: s.ID})
	return sum, nil
}
