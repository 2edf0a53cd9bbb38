// Package recall answers "what do past sessions say about this prompt
// in this project": the turns of the user's sessions most relevant to a
// prompt, within a budget of tokens, each with its session and date, as
// loom recall, the agents' hooks and the MCP recall tool hand it to an
// agent. It searches with the store's keyword tiers and calls no model.
package recall

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// DefaultTokens is the budget of a recall when none is given.
const DefaultTokens = 1500

// Options say what to recall.
type Options struct {
	// Prompt is what the agent was asked; empty recalls the project's
	// latest sessions by their titles (an agent's session start).
	Prompt    string
	UserID    string
	ProjectID string
	// Tokens bounds the whole answer, Text's rendering of it: at most
	// this many tokens as Estimate counts them (DefaultTokens when 0).
	Tokens int
	// Exclude leaves out a session: the one asking.
	Exclude string
	// Redact, when set, is the detector of the gate the store is read
	// through (secrets.Gate): recall hands stored text to another agent
	// and its model, so what it reads is redacted whole, before any of it
	// is joined, cut or fitted to the budget.
	Redact *secrets.Detector
	// Everywhere, when ProjectID holds none of the user's sessions (a
	// directory that is no project, or one loom has not seen), recalls
	// from every project instead, and says so (Result.Everywhere).
	Everywhere bool
	// Deadline, when set, is when the recall must have its answer (a
	// hook's budget): the search stops its tiers in time for the turns
	// to be read, and a turn not read by then is its hit's snippet, so
	// that a busy machine gives fewer or shorter turns, not none. The
	// answer is then partial (Result.Partial).
	Deadline time.Time
}

// Turn is one recalled message.
type Turn struct {
	SessionID string    `json:"session_id"`
	Title     string    `json:"title,omitempty"`
	Date      time.Time `json:"date"`
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Text      string    `json:"text"`
	// Tier is the search tier that found it (loom.SearchHit.Tier).
	Tier string `json:"tier,omitempty"`
	// AlsoIn names the other sessions that hold the same text: a turn
	// is recalled once, however many sessions said it.
	AlsoIn []string `json:"also_in,omitempty"`
	// kind orders it among the others (see kind), told from its whole
	// text before a long one is cut to the part around its match.
	kind int
}

// Result is what a recall found, best first, and what its rendering
// costs in tokens.
type Result struct {
	Tokens int    `json:"tokens"`
	Turns  []Turn `json:"turns"`
	// Redacted counts the secrets Options.Redact replaced.
	Redacted int `json:"redacted,omitempty"`
	// Scope is where the turns were recalled from: ScopeProject (the
	// project asked, Options.ProjectID) or ScopeEveryProject (none was
	// asked, or it held no session).
	Scope string `json:"scope"`
	// Everywhere is set when the turns are of every project: the one
	// asked holds no session (Options.Everywhere).
	Everywhere bool `json:"every_project,omitempty"`
	// Partial is set when the recall ran out of time (the search's
	// budget, or Options.Deadline): the turns are the best found before,
	// not all, and some may be only their hit's snippet.
	Partial bool `json:"partial,omitempty"`
}

// The scopes of a recall (Result.Scope).
const (
	ScopeProject      = "project"
	ScopeEveryProject = "every_project"
)

// Estimate counts the tokens of text as a model's tokenizer about does
// for English and code: one per four bytes, rounded up. It errs high
// for prose, so that a budget holds.
func Estimate(text string) int { return (len(text) + 3) / 4 }

// maxHits is how many search hits a recall reads in one project, and
// maxHitsEverywhere in every project: there the hits of as good a
// ranking are spread over the sessions of more projects (LoCoMo's
// evidence that was among the 6th to 16th sessions inside its project
// fell past the 20th hit across 100 projects: docs/search.md), and the
// budget, not the count of hits, is what bounds the answer (a hit
// whose turn would not fit is not read).
const (
	maxHits           = 20
	maxHitsEverywhere = 40
)

// maxTurnBytes bounds one turn's text: a long tool output is cut.
const maxTurnBytes = 1200

// Recall finds the turns of o.UserID's sessions in o.ProjectID most
// relevant to o.Prompt, best first, as many as fit in o.Tokens.
func Recall(ctx context.Context, st loom.Reader, o Options) (res *Result, err error) {
	if o.Redact != nil {
		g := o.Redact.Gate(st)
		st = g
		defer func() {
			if res != nil {
				res.Redacted = g.Redacted()
			}
		}()
	}
	budget := o.Tokens
	if budget <= 0 {
		budget = DefaultTokens
	}
	res = &Result{Turns: []Turn{}}
	if o.Everywhere && o.ProjectID != "" {
		some, err := st.Sessions(ctx, loom.SessionFilter{UserID: o.UserID, ProjectID: o.ProjectID, Archived: loom.WithArchived, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("recall: %w", err)
		}
		if len(some) == 0 {
			o.ProjectID, res.Everywhere = "", true
		}
	}
	res.Scope = ScopeProject
	if o.ProjectID == "" {
		res.Scope = ScopeEveryProject
	}
	if strings.TrimSpace(o.Prompt) == "" {
		return latest(ctx, st, o, budget, res)
	}
	hits, partial, err := search(ctx, st, o)
	if errors.Is(err, loom.ErrSearchTime) && ctx.Err() == nil {
		// Out of time before any hit: nothing, said to be partial.
		res.Partial = true
		res.Tokens = Estimate(res.Text())
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	res.Partial = partial
	tctx := ctx
	if !o.Deadline.IsZero() {
		var cancel context.CancelFunc
		tctx, cancel = context.WithDeadline(ctx, o.Deadline)
		defer cancel()
	}
	// Each text once, with the sessions that hold it; the turns that
	// say what was decided or done before those that only ask, and
	// what an agent or a tool wrote into a session (a compaction's
	// prompt, a reminder) last.
	var turns []Turn
	byText := map[string]int{}
	// firsts is what the turns that come first (kind 0) cost: once they
	// fill the budget, no later hit's turn would be shown, and its turn
	// is not read (each read is redacted whole, the most of a recall's
	// work).
	firsts := Estimate(res.header())
	// Each turn's whole text and its hit's snippet, to show it where
	// the matched words weigh most once every turn is read.
	var fulls, snippets []string
	for _, h := range hits {
		if firsts > budget {
			break
		}
		if h.SessionID == o.Exclude {
			continue
		}
		text, err := turnText(tctx, st, h)
		if err != nil && tctx.Err() != nil && ctx.Err() == nil {
			// Out of time: the snippet the search made, not the turn.
			text, err, res.Partial = unmarked(h.Snippet), nil, true
		}
		if err != nil {
			return nil, err
		}
		if !holdsMatch(text, h.Snippet) {
			// The words matched in the message's tool calls or their
			// output, not in what it says ("Now let me read the test
			// file"): what matched follows, so the turn shows why it
			// was recalled.
			text += " " + unmarked(h.Snippet)
		}
		text = strings.Join(strings.Fields(text), " ")
		t := Turn{SessionID: h.SessionID, Title: h.SessionTitle, Date: h.CreatedAt, Seq: h.Seq, Role: h.Role,
			Text: around(text, h.Snippet, maxTurnBytes, nil), Tier: h.Tier, kind: kind(h.Role, text)}
		if i, ok := byText[t.Text]; ok {
			if s := &turns[i]; s.SessionID != t.SessionID && !slices.Contains(s.AlsoIn, t.SessionID) {
				s.AlsoIn = append(s.AlsoIn, t.SessionID)
			}
			continue
		}
		if len(turns) == 0 && summary(h.Role, text) {
			// The best hit is a compaction's summary: it comes first,
			// shown around its match (summaries hold many words, so
			// only the best one is let before the replies).
			t.kind = 0
		}
		byText[t.Text] = len(turns)
		turns = append(turns, t)
		fulls, snippets = append(fulls, text), append(snippets, h.Snippet)
		if t.kind == 0 {
			firsts += Estimate(t.line())
		}
	}
	// A long turn shown where its matched words weigh most, each by its
	// rarity among the turns read: where the prompt's rare word is far
	// from its common ones, the rare word's place.
	rarity := rarities(o.Prompt, snippets, fulls)
	for i := range turns {
		turns[i].Text = around(fulls[i], snippets[i], maxTurnBytes, rarity)
	}
	slices.SortStableFunc(turns, func(a, b Turn) int { return a.kind - b.kind })
	used := Estimate(res.header() + res.footer())
	shown := make(map[string]bool, len(turns))
	for _, t := range turns {
		if !fit(&t, budget-used) || shown[t.Text] {
			// Out of room, or cut to fit it reads as a turn shown.
			break
		}
		shown[t.Text] = true
		used += Estimate(t.line())
		res.Turns = append(res.Turns, t)
	}
	res.Tokens = Estimate(res.Text())
	return res, nil
}

// refusedForTime reports whether err, from a search that started at
// start with deadline, is the store's refusal of a search that ran out
// of its time before any hit. That refusal wraps loom.ErrSearchTime;
// through a secrets gate, which redacts an error's message, it comes as
// a copy that no longer does, known then by its code (EINVALID) and by
// the search's time having run out (loom.MaxSearchTime, or its
// deadline when sooner).
func refusedForTime(err error, start, deadline time.Time) bool {
	if errors.Is(err, loom.ErrSearchTime) {
		return true
	}
	if loom.ErrorCode(err) != loom.EINVALID {
		return false
	}
	end := start.Add(loom.MaxSearchTime)
	if !deadline.IsZero() && deadline.Before(end) {
		end = deadline
	}
	return !time.Now().Before(end)
}

// kind orders recalled turns: 0 for one that says what was decided or
// done (a reply, or a prompt with the reply it led to), 1 for a prompt
// alone, 2 for text an agent or a tool wrote into the session rather than
// its user or model (see boilerplate).
func kind(role, text string) int {
	switch {
	case boilerplate(text):
		return 2
	case role == loom.RoleUser && !strings.Contains(text, replyMark):
		return 1
	}
	return 0
}

// summary reports whether text is a compaction's summary of a session:
// the one that continues a compacted session, or the compaction agent's
// reply, its model's own words in the markup it was asked for
// (<analysis>). Unlike the other boilerplate it says what was done.
func summary(role, text string) bool {
	return strings.HasPrefix(text, continued) || role == loom.RoleAssistant && boilerplate(text)
}

// continued opens the summary that continues a compacted session.
const continued = "This session is being continued from a previous conversation"

// boilerplates open the texts that agents and tools put into sessions
// under the user's or the model's name: Claude Code's compaction prompt
// and the summary that continues a compacted session, its notes about
// local commands, and recall's own answer, which a hook adds to a
// prompt.
var boilerplates = []string{
	"Your task is to create a detailed summary of the conversation so far",
	continued,
	"Caveat: The messages below were generated by the user while running local commands",
	strings.TrimSpace(header),
	strings.TrimSpace(headerEverywhere),
}

// boilerplate reports whether text is what an agent or a tool wrote
// (boilerplates), or starts with the markup they wrap their notes in
// (<system-reminder>, <command-name>).
func boilerplate(text string) bool {
	for _, b := range boilerplates {
		if strings.HasPrefix(text, b) {
			return true
		}
	}
	if tag, ok := strings.CutPrefix(text, "<"); ok {
		name, _, found := strings.Cut(tag, ">")
		return found && name != "" && !strings.ContainsAny(name, " \t")
	}
	return false
}

// replyMark joins a prompt and the reply it led to in a turn's text.
const replyMark = " → "

// search returns the hits a recall reads: the store's ranked search,
// every tier of it, as loom search ranks at any size of store. There is
// no size above which recall answers with other messages (the newest
// matches, say): where the search bounded its work (it ranked part of
// the matches, or a tier ran out of its time or of o.Deadline), the
// hits are the best of what was ranked and partial says so.
func search(ctx context.Context, st loom.Reader, o Options) (hits []loom.SearchHit, partial bool, err error) {
	q := loom.SearchQuery{Text: o.Prompt, UserID: o.UserID, ProjectID: o.ProjectID, Limit: maxHits}
	if o.ProjectID == "" {
		q.Limit = maxHitsEverywhere
	}
	start := time.Now()
	defer func() {
		if err != nil && !errors.Is(err, loom.ErrSearchTime) && refusedForTime(err, start, q.Deadline) {
			err = fmt.Errorf("%w: %w", loom.ErrSearchTime, err)
		}
	}()
	if !o.Deadline.IsZero() {
		// The search's share of the time left: the rest reads the
		// turns of its hits. Half as many hits as in one project, in
		// any scope: what fits in a hook's tokens, and each hit's text
		// is redacted whole before its snippet is made, the most of a
		// search's work.
		q.Deadline = time.Now().Add(time.Until(o.Deadline) * searchShare / 100)
		q.Limit = maxHits / 2
	}
	hits, err = st.Search(ctx, q)
	return hits, loom.Partial(hits), err
}

// searchShare is the percentage of a recall's time left that its search
// may take when the recall has a deadline.
const searchShare = 60

// unmarked is a snippet without the marks of its matches.
func unmarked(snippet string) string {
	return strings.NewReplacer(loom.DefaultMarkStart, "", loom.DefaultMarkEnd, "").Replace(snippet)
}

// turnText is the text a hit recalls: its message, and for a prompt
// the reply that followed it (what was decided), read from the store;
// the hit's snippet, without its marks, when the message has no text.
func turnText(ctx context.Context, st loom.Reader, h loom.SearchHit) (string, error) {
	msgs, err := st.Messages(ctx, h.SessionID, loom.MessageQuery{After: h.Seq - 1, Limit: turnRead, Oldest: true})
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	var parts []string
	for _, m := range msgs {
		t := strings.TrimSpace(m.Text())
		switch {
		case m.Seq == h.Seq:
			if t == "" {
				t = unmarked(h.Snippet)
			}
			parts = append(parts, t)
		case h.Role == loom.RoleUser && m.Role == loom.RoleAssistant && t != "":
			// The first reply with words: what the prompt led to.
			return strings.Join(parts, " ") + replyMark + t, nil
		case m.Role == loom.RoleUser:
			return strings.Join(parts, " "), nil
		}
	}
	return strings.Join(parts, " "), nil
}

// holdsMatch reports whether text holds a word that snippet marks as
// matched: a word starting with its stem, or snippet marks none. It
// looks the stems up in text rather than stemming text's words: a turn
// may be long, and stemming each of its words took longer than the
// search.
func holdsMatch(text, snippet string) bool {
	matched := markedStems(snippet)
	if len(matched) == 0 {
		return true
	}
	text = strings.ToLower(text)
	for stem := range matched {
		for range wordsStarting(text, stem) {
			return true
		}
	}
	return false
}

// wordsStarting yields the offsets in text where a word starts with
// stem (none for an empty stem).
func wordsStarting(text, stem string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for from := 0; stem != ""; {
			i := strings.Index(text[from:], stem)
			if i < 0 {
				return
			}
			i += from
			if r, _ := utf8.DecodeLastRuneInString(text[:i]); i == 0 || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				if !yield(i) {
					return
				}
			}
			from = i + len(stem)
		}
	}
}

// rarities weighs each word of the prompt (its content words, by their
// stems) and each word the hits' snippets mark as matched by how few
// of the turns' texts hold it: log(1 + turns/holding), the inverse
// document frequency among the turns that answer the prompt. Among
// them the prompt's common words ("spotter" and "server" in a project
// called spotter) are in most; the word that asks ("port") in few. A
// word no text holds is left out.
func rarities(prompt string, snippets, texts []string) map[string]float64 {
	stems := map[string]bool{}
	for _, w := range loom.Words(strings.ToLower(prompt)) {
		if utf8.RuneCountInString(w) > 1 && !english.IsStopWord(w) {
			stems[english.Stem(w, false)] = true
		}
	}
	for _, sn := range snippets {
		for stem := range markedStems(sn) {
			stems[stem] = true
		}
	}
	df := make(map[string]int, len(stems))
	for _, text := range texts {
		text = strings.ToLower(text)
		for stem := range stems {
			for range wordsStarting(text, stem) {
				df[stem]++
				break
			}
		}
	}
	w := make(map[string]float64, len(df))
	for stem, n := range df {
		w[stem] = math.Log(1 + float64(len(texts))/float64(n))
	}
	return w
}

// around is the part of text a recalled turn shows: all of it when it
// fits in n bytes, else n bytes of it from a little before the place
// where the words matched (snippet's marks, and the words rarity
// weighs: the prompt's and those the other hits' snippets mark) weigh
// most, each distinct word once by its rarity among the recall's turns
// (rarity; a word it does not weigh counts 1), with "…" where it is
// cut. A long turn (a compaction's summary, a reply that goes on past
// what was asked, a prompt and its long reply, a script) shows why it
// was recalled, not only how it opens, and where its rare matched word
// is apart from its common ones, that word: "which port does the
// spotter server use" shows a hook script's PORT=1100, not its opening
// lines that say Spotter and server. With no matched word in text, its
// opening.
func around(text, snippet string, n int, rarity map[string]float64) string {
	if len(text) <= n {
		return text
	}
	type word struct {
		at   int
		stem string
	}
	var found []word
	// Lower-cased byte for byte, so that an offset in one is the same
	// place in the other.
	lower := strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, text)
	// The words this hit's snippet marks, the prompt's and those the
	// other hits' mark: a snippet is a few words of its message, and
	// the rare word may be far from where they are.
	stems := markedStems(snippet)
	for stem := range rarity {
		stems[stem] = true
	}
	for stem := range stems {
		for i := range wordsStarting(lower, stem) {
			found = append(found, word{i, stem})
		}
	}
	if len(found) == 0 {
		return loom.TruncateBytes(text, n)
	}
	slices.SortFunc(found, func(a, b word) int { return a.at - b.at })
	weight := func(stem string) float64 {
		if w, ok := rarity[stem]; ok {
			return w
		}
		return 1
	}
	// The first place from which the next n/2 bytes hold the most
	// weight of different matched words: a window slid over the
	// matches once.
	best, most := found[0].at, 0.0
	held := map[string]int{}
	sum := 0.0
	end := 0
	for _, w := range found {
		for ; end < len(found) && found[end].at-w.at <= n/2; end++ {
			if held[found[end].stem]++; held[found[end].stem] == 1 {
				sum += weight(found[end].stem)
			}
		}
		// More than by a rounding: a tie goes to the earlier place.
		if sum > most+1e-9 {
			best, most = w.at, sum
		}
		if held[w.stem]--; held[w.stem] == 0 {
			delete(held, w.stem)
			sum -= weight(w.stem)
		}
	}
	start := best - n/4
	if start <= 0 {
		return loom.TruncateBytes(text, n)
	}
	if sp := strings.IndexByte(text[start:best], ' '); sp >= 0 {
		start += sp + 1
	}
	for !utf8.RuneStart(text[start]) {
		start++
	}
	return loom.TruncateBytes("…"+text[start:], n)
}

// markedStems are the stems of the words snippet marks as matched.
func markedStems(snippet string) map[string]bool {
	held := map[string]bool{}
	// The marks open and close alike: every other piece is a match.
	parts := strings.Split(snippet, loom.DefaultMarkStart)
	for j := 1; j < len(parts); j += 2 {
		held[english.Stem(strings.ToLower(parts[j]), false)] = true
	}
	return held
}

// turnRead is how many messages from a hit on are read for its reply.
const turnRead = 8

// latest recalls the titles of the project's latest sessions.
func latest(ctx context.Context, st loom.Reader, o Options, budget int, res *Result) (*Result, error) {
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: o.UserID, ProjectID: o.ProjectID, Limit: maxHits})
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	used := Estimate(res.header())
	for _, s := range list {
		if s.ID == o.Exclude || s.Title == "" {
			continue
		}
		t := Turn{SessionID: s.ID, Title: s.Title, Date: s.UpdatedAt, Role: loom.RoleUser, Text: s.Title}
		if !fit(&t, budget-used) {
			break
		}
		used += Estimate(t.line())
		res.Turns = append(res.Turns, t)
	}
	res.Tokens = Estimate(res.Text())
	return res, nil
}

// fit cuts t's text so that its line costs at most left tokens, and
// reports whether a useful part of it (a few words) is left.
func fit(t *Turn, left int) bool {
	over := Estimate(t.line()) - left
	if over <= 0 {
		return true
	}
	keep := len(t.Text) - 4*over - 4
	if keep < 80 {
		return false
	}
	t.Text = loom.TruncateBytes(t.Text, keep)
	return Estimate(t.line()) <= left
}

// header opens the text of a recall; headerEverywhere that of a recall
// from every project.
const (
	header           = "Past sessions in this project (loom recall; `loom session show ID` reads one):\n"
	headerEverywhere = "Past sessions of every project (loom recall; `loom session show ID` reads one):\n"
)

func (r *Result) header() string {
	if r.Everywhere || r.Scope == ScopeEveryProject {
		return headerEverywhere
	}
	return header
}

// partialLine ends the text of a partial recall: the agent that reads
// it (through a hook, which has no other way to say so) is told that
// these are the best of what was ranked, not necessarily of all.
const partialLine = "(partial: the search ranked part of the matches, in its time or its bounds; these are the best turns of those, not necessarily of all)\n"

// footer is what follows the turns in Text: partialLine for a partial
// recall.
func (r *Result) footer() string {
	if r.Partial {
		return partialLine
	}
	return ""
}

// line is how t reads in Text.
func (t Turn) line() string {
	title := ""
	if t.Title != "" && t.Title != t.Text {
		title = fmt.Sprintf(" %q", t.Title)
	}
	also := ""
	if len(t.AlsoIn) > 0 {
		also = " (also in " + strings.Join(t.AlsoIn, ", ") + ")"
	}
	return fmt.Sprintf("- [%s, session %s%s%s, %s] %s\n", t.Date.UTC().Format("2006-01-02"), t.SessionID, also, title, t.Role, t.Text)
}

// Text renders r for an agent's context: one line per turn under a
// header, and a line saying so when r is partial; "" when nothing was
// recalled.
func (r *Result) Text() string {
	if len(r.Turns) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(r.header())
	for _, t := range r.Turns {
		b.WriteString(t.line())
	}
	b.WriteString(r.footer())
	return b.String()
}
