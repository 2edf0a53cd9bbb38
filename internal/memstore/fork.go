package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/span"
	"github.com/loomhq/loom/sessionstore"
)

// TurnFrom implements sessionstore.ForkReads.
func (t *tx) TurnFrom(ctx context.Context, src string, seq int64) (int, bool, error) {
	msgs := t.st.through(src, seq, span.OpenSeq)
	if len(msgs) == 0 {
		return 0, false, nil
	}
	return msgs[0].r.turn, true, nil
}

// LastUser implements sessionstore.ForkReads.
func (t *tx) LastUser(ctx context.Context, src string, seq int64) (*loom.Message, error) {
	msgs := t.st.through(src, 1, seq)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].r.role == loom.RoleUser {
			return t.st.message(src, msgs[i].seq, msgs[i].r)
		}
	}
	return nil, nil
}

// LastSummary implements sessionstore.ForkReads.
func (t *tx) LastSummary(ctx context.Context, src string, seq int64) (int64, error) {
	msgs := t.st.through(src, 1, seq)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].r.role == loom.RoleSummary {
			return msgs[i].seq, nil
		}
	}
	return 0, nil
}

// UsageOf implements sessionstore.ForkReads, and is what a history reads beside
// sessionstore.HistorySteps.
func (t *tx) UsageOf(ctx context.Context, src string, from, to int64) (loom.Usage, error) {
	return t.st.usageOf(src, from, to), nil
}

// TitlesLike implements sessionstore.ForkReads: compared as SQLite's
// NOCASE and lower() compare, folding ASCII letters only.
func (t *tx) TitlesLike(ctx context.Context, user, base string) ([]string, error) {
	n := utf8.RuneCountInString(base)
	var out []string
	for _, x := range t.st.sessions {
		if x.UserID != user || !live(x) {
			continue
		}
		prefix := x.Title
		if i := runeOffset(prefix, n); i >= 0 {
			prefix = prefix[:i]
		}
		if asciiLower(prefix) == asciiLower(base) {
			out = append(out, x.Title)
		}
	}
	slices.Sort(out)
	return out, nil
}

// runeOffset returns the byte offset of s's n-th rune, -1 when s has no
// more than n runes.
func runeOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return -1
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// forkRow returns the row a fork of src inserts: src's user, surface,
// description, project, places and model, as a fork.
func forkRow(src loom.Session, id, key, title, parent string, turn int) loom.Session {
	return loom.Session{ID: id, UserID: src.UserID, Key: key, Surface: src.Surface, Title: title,
		Description: src.Description, Kind: loom.KindFork, ParentID: parent, ForkTurn: turn, Project: src.Project,
		Cwd: src.Cwd, Model: src.Model, Provider: src.Provider, Profile: src.Profile, GitBranch: src.GitBranch}
}

// CreateFork implements sessionstore.ForkSteps.
func (t *tx) CreateFork(ctx context.Context, src *loom.Session, plan *sessionstore.ForkPlan, spans []span.Span) (*loom.Session, error) {
	from, ok := t.st.sessions[src.ID]
	if !ok {
		return nil, loom.NotFound(src.ID)
	}
	now := stored(t.s.Now())
	x := forkRow(from, plan.ID, plan.Key, plan.Title, src.ID, plan.Turn)
	x.MessageCount, x.TurnCount, x.SummarySeq, x.LastPrompt = int(plan.LastSeq), plan.Turn, plan.SummarySeq, plan.LastPrompt
	x.CreatedAt, x.UpdatedAt = now, now
	if err := t.st.insertSession(x); err != nil {
		return nil, err
	}
	t.st.spans[plan.ID] = slices.Clone(spans)
	return t.s.sessionIn(t.st, plan.ID)
}

// StoreRewind implements sessionstore.ForkSteps.
func (t *tx) StoreRewind(ctx context.Context, src *loom.Session, plan *sessionstore.RewindPlan, forkSpans, keepSpans []span.Span) (*loom.Session, error) {
	from, ok := t.st.sessions[src.ID]
	if !ok {
		return nil, loom.NotFound(src.ID)
	}
	f := plan.Fork
	at := stored(plan.At)
	x := forkRow(from, f.ID, "", f.Title, src.ID, f.Turn)
	x.MessageCount, x.TurnCount, x.SummarySeq, x.LastPrompt = from.MessageCount, from.TurnCount, from.SummarySeq, from.LastPrompt
	x.Usage = plan.ForkUsage
	x.CreatedAt, x.UpdatedAt = from.CreatedAt, from.UpdatedAt
	if at.Before(from.CreatedAt) {
		x.CreatedAt = at
	}
	if err := t.st.insertSession(x); err != nil {
		return nil, fmt.Errorf("rewind %s: %w", src.ID, err)
	}
	t.st.spans[f.ID] = slices.Clone(forkSpans)
	t.st.spans[src.ID] = slices.Clone(keepSpans)
	from.MessageCount, from.TurnCount, from.LastPrompt, from.SummarySeq = int(plan.KeepSeq), f.Turn, plan.KeepPrompt, plan.KeepSummarySeq
	from.Usage, from.UpdatedAt = plan.KeepUsage, at
	if err := t.st.put(from); err != nil {
		return nil, err
	}
	return t.s.sessionIn(t.st, f.ID)
}
