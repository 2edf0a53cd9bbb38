// Package summarize writes the summary of a session: three short lines
// saying what it was about and what was decided or done, asked of a
// model once the session has gone quiet and kept as the session's
// description. A summary is written only where the description is
// empty, so it is written once and never replaces what the user wrote;
// the title is never touched. Text that holds a secret, or that was
// redacted, never goes to the model: such sessions are skipped.
package summarize

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// Bounds of a summary and of what the model is given to write it.
const (
	// MaxLines and MaxLineRunes bound the summary kept.
	MaxLines     = 3
	MaxLineRunes = 120
	// MaxInputBytes bounds the session text sent to the model: the
	// first prompt and the last turns.
	MaxInputBytes = 8 << 10
	// maxFirstBytes bounds the first prompt within it, maxMessageBytes
	// any other message, and lastMessages how many of the last
	// messages are kept.
	maxFirstBytes   = 2 << 10
	maxMessageBytes = 1500
	lastMessages    = 12
	// DefaultLimit is how many sessions a pass summarises at most.
	DefaultLimit = 50
	// Interval is how often a background Watch makes a pass.
	Interval = 5 * time.Minute
	// callTimeout bounds one model call.
	callTimeout = 2 * time.Minute
	// pageSize is how many sessions or messages are read at a time.
	pageSize = 200
)

const instructions = `You write the summary of a session between a user and a coding agent, shown under its title in a list of sessions. Answer with at most three short lines of plain text (no bullets, headings or quotes), under 100 characters each: what the session was about, and what was decided or done. Write nothing else.`

// Reasons a session is not summarised.
const (
	SkipDescribed = "has a description"
	SkipSubagent  = "sub-agent session"
	SkipNotQuiet  = "not quiet yet"
	SkipExcluded  = "excluded by [summaries] exclude"
	SkipRedacted  = "holds redacted text"
	SkipSecret    = "holds a secret"
	SkipEmpty     = "has no text"
	SkipDeleted   = "in the trash"
)

// Summarizer summarises the sessions of one user.
type Summarizer struct {
	Store loom.Store
	// Provider and Model write the summaries.
	Provider loom.Provider
	Model    string
	// Detector finds secrets; a session in which it finds one is
	// skipped (nil: the built-in rules).
	Detector *secrets.Detector
	// Quiet is how long after its last message a session counts as
	// quiet.
	Quiet time.Duration
	// Exclude keeps sessions out: a project name, or a path (starting
	// with / or ~) that holds the session's project root or working
	// directory.
	Exclude []string
	// Home expands a leading ~ of Exclude.
	Home   string
	UserID string
	Now    func() time.Time
}

// Result is what became of one session.
type Result struct {
	SessionID string `json:"session_id"`
	Title     string `json:"-"`
	Summary   string `json:"summary,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
}

func (z *Summarizer) now() time.Time {
	if z.Now == nil {
		return time.Now()
	}
	return z.Now()
}

func (z *Summarizer) detector() *secrets.Detector {
	if z.Detector == nil {
		return secrets.Default()
	}
	return z.Detector
}

// Candidates returns the user's quiet sessions without a description,
// newest first, at most limit of them (DefaultLimit when 0); sub-agent
// sessions are left out. skip, when set, leaves out the sessions it
// names (those a background pass has already looked at).
func (z *Summarizer) Candidates(ctx context.Context, limit int, skip func(id string) bool) ([]*loom.Session, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	f := loom.SessionFilter{UserID: z.UserID, UpdatedBefore: z.now().Add(-z.Quiet), Archived: loom.WithArchived, Limit: pageSize}
	var out []*loom.Session
	for {
		page, err := z.Store.Sessions(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("list sessions to summarise: %w", err)
		}
		for _, s := range page {
			if s.Description != "" || s.Kind == loom.KindSubagent || (skip != nil && skip(s.ID)) {
				continue
			}
			out = append(out, s)
			if len(out) == limit {
				return out, nil
			}
		}
		if len(page) < pageSize {
			return out, nil
		}
		f.Before = loom.CursorAfter(page[len(page)-1])
	}
}

// Check says why s is not summarised, "" when it may be.
func (z *Summarizer) Check(s *loom.Session) string {
	switch {
	case s.DeletedAt != nil:
		return SkipDeleted
	case s.Description != "":
		return SkipDescribed
	case s.Kind == loom.KindSubagent:
		return SkipSubagent
	case z.now().Sub(s.UpdatedAt) < z.Quiet:
		return SkipNotQuiet
	case z.excluded(s):
		return SkipExcluded
	}
	return ""
}

// excluded reports whether an entry of Exclude names s's project or
// holds its directory.
func (z *Summarizer) excluded(s *loom.Session) bool {
	for _, e := range z.Exclude {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, "/") && !strings.HasPrefix(e, "~") {
			if strings.EqualFold(e, s.Project.Name) {
				return true
			}
			continue
		}
		if rest, ok := strings.CutPrefix(e, "~"); ok && z.Home != "" {
			e = z.Home + rest
		}
		e = filepath.Clean(e)
		for _, dir := range []string{s.Project.Root, s.Cwd} {
			if dir != "" && (dir == e || strings.HasPrefix(dir, strings.TrimSuffix(e, "/")+"/")) {
				return true
			}
		}
	}
	return false
}

// Summarise summarises s, unless Check or its text says not to; with
// dryRun it says what it would do and calls no model. The summary is
// stored only while the session's description is still empty.
func (z *Summarizer) Summarise(ctx context.Context, s *loom.Session, dryRun bool) (Result, error) {
	res := Result{SessionID: s.ID, Title: s.Title}
	if res.Skipped = z.Check(s); res.Skipped != "" {
		return res, nil
	}
	input, why, err := z.input(ctx, s)
	if err != nil {
		return res, err
	}
	if res.Skipped = why; why != "" || dryRun {
		return res, nil
	}
	text, err := z.ask(ctx, input)
	if err != nil {
		return res, fmt.Errorf("summarise session %s: %w", s.ID, err)
	}
	// The session may have changed while the model wrote (a new
	// message, the trash, a description): check it again. A description
	// written after this check stays too: the store writes the summary
	// only where the description is still empty as it writes
	// (DescriptionIfEmpty).
	cur, err := z.Store.Session(ctx, s.ID)
	if err != nil {
		return res, err
	}
	if res.Skipped = z.Check(cur); res.Skipped != "" {
		return res, nil
	}
	out, err := z.Store.UpdateSession(ctx, s.ID, loom.SessionUpdate{Description: &text, DescriptionIfEmpty: true, KeepUpdatedAt: true})
	if err != nil {
		return res, fmt.Errorf("store the summary of session %s: %w", s.ID, err)
	}
	if out.Description != text {
		res.Skipped = SkipDescribed
		return res, nil
	}
	res.Summary = text
	return res, nil
}

// input reads s's messages and returns what the model is given: the
// title, the first prompt and the last messages' text, at most
// MaxInputBytes. why is set instead when the session is not to be sent:
// some of its text was redacted, the detector finds a secret in it, or
// it has no text.
func (z *Summarizer) input(ctx context.Context, s *loom.Session) (text, why string, err error) {
	d := z.detector()
	var first string
	var last []string
	q := loom.MessageQuery{Oldest: true, Limit: pageSize}
	for {
		page, err := z.Store.Messages(ctx, s.ID, q)
		if err != nil {
			return "", "", fmt.Errorf("read session %s: %w", s.ID, err)
		}
		for _, m := range page {
			if strings.Contains(m.SearchText(), secrets.MarkerPrefix) {
				return "", SkipRedacted, nil
			}
			if len(d.ScanMessage(m)) > 0 {
				return "", SkipSecret, nil
			}
			t := strings.TrimSpace(m.Text())
			if t == "" {
				continue
			}
			var who string
			switch m.Role {
			case loom.RoleUser:
				who = "User"
				if first == "" {
					first = loom.TruncateBytes(t, maxFirstBytes)
					continue
				}
			case loom.RoleAssistant:
				who = "Agent"
			case loom.RoleSummary:
				who = "Summary of the earlier turns"
			default:
				// System text is the other tool's instructions,
				// not the session.
				continue
			}
			last = append(last, who+": "+loom.TruncateBytes(t, maxMessageBytes))
			if len(last) > lastMessages {
				last = last[1:]
			}
		}
		if len(page) < pageSize {
			break
		}
		q.After = page[len(page)-1].Seq
	}
	if first == "" && len(last) == 0 {
		return "", SkipEmpty, nil
	}
	var b strings.Builder
	if s.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n\n", s.Title)
	}
	if first != "" {
		fmt.Fprintf(&b, "First prompt:\n%s\n\n", first)
	}
	// The newest messages are kept when the whole is too long.
	room := MaxInputBytes - b.Len() - len("Last messages:\n")
	var keep []string
	for i := len(last) - 1; i >= 0 && room > 0; i-- {
		m := loom.TruncateBytes(last[i], room)
		keep = append([]string{m}, keep...)
		room -= len(m) + 1
	}
	if len(keep) > 0 {
		b.WriteString("Last messages:\n")
		b.WriteString(strings.Join(keep, "\n"))
	}
	// What the detector missed as a whole may still be found in the
	// cut text: it goes out redacted.
	out, _ := d.Redact(b.String())
	return out, "", nil
}

// ask makes the model call and returns its answer made into a summary.
func (z *Summarizer) ask(ctx context.Context, input string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := &loom.ModelRequest{
		Model:     z.Model,
		System:    instructions,
		Messages:  []*loom.Message{{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: input}}}},
		MaxTokens: 300,
	}
	resp, err := z.Provider.Stream(ctx, req, func(loom.StreamEvent) {})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range resp.Parts {
		if p.Type == loom.PartText {
			b.WriteString(p.Text)
		}
	}
	text := Clean(b.String())
	if text == "" {
		return "", fmt.Errorf("the model returned no summary")
	}
	return text, nil
}

// Clean makes a model's answer a summary: at most MaxLines non-empty
// lines of printable text, without list marks, each cut to
// MaxLineRunes.
func Clean(answer string) string {
	var out []string
	for _, line := range strings.Split(answer, "\n") {
		line = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, line)
		line = strings.TrimSpace(strings.TrimLeft(line, "#*•-> "))
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > MaxLineRunes {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:MaxLineRunes-1])) + "…"
		}
		out = append(out, line)
		if len(out) == MaxLines {
			break
		}
	}
	return strings.Join(out, "\n")
}

// Pass summarises up to limit candidates, one at a time, and returns
// what became of each. An error of one session (a model call that
// failed) is returned at once, with the results so far.
func (z *Summarizer) Pass(ctx context.Context, limit int, skip func(id string) bool) ([]Result, error) {
	cands, err := z.Candidates(ctx, limit, skip)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, s := range cands {
		r, err := z.Summarise(ctx, s, false)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Watch runs a Pass every interval until ctx ends: the background
// summaries of loom serve and loom session import --watch. A session
// skipped once is not looked at again by this Watch; errors go to log,
// each said once until it changes.
func (z *Summarizer) Watch(ctx context.Context, interval time.Duration, limit int, log *slog.Logger) {
	seen := map[string]bool{}
	var last string
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		res, err := z.Pass(ctx, limit, func(id string) bool { return seen[id] })
		for _, r := range res {
			if r.Skipped != "" && r.Skipped != SkipNotQuiet {
				seen[r.SessionID] = true
			}
			if r.Summary != "" {
				log.Info("session summarised", "session", r.SessionID)
			}
		}
		if err != nil && ctx.Err() == nil {
			if msg := err.Error(); msg != last {
				last = msg
				log.Warn("summaries", "error", msg)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
