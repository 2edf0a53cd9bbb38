package aider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// header starts each run of Aider in its chat history.
const header = "# aider chat started at "

// timeLayout is how Aider writes a run's start, in local time.
const timeLayout = "2006-01-02 15:04:05"

// block kinds: what the lines being gathered are.
const (
	none = iota
	user
	output
	reply
)

// whether a run's lines of Aider's end with its mark (two spaces).
const (
	unknown = iota
	withMarks
	markless
)

// reader holds what reading one history file learns on the way.
type reader struct {
	path string
	// key is the file's part of every session's source id: the first 12
	// hex digits of SHA-256 of its real path.
	key  string
	cwd  string
	res  *importer.Result
	seen map[string]int // source ids given, for runs started in the same second

	s       *importer.Session
	start   int // the line of the session's header
	model   string
	last    *loom.Message // the last reply since the last prompt
	kind    int
	first   int // the line the block starts on
	lines   []string
	blanks  int  // blank lines after a reply's last line, kept if it goes on
	inFence bool // inside a fenced code block of a reply
	outside int  // lines before the first header
	runs    int  // headers read
	// afterBlank says the line before was blank.
	afterBlank bool
	marks      int // whether the run's lines carry Aider's mark
}

// read reads a chat history from r.
func read(ctx context.Context, path string, r io.Reader) (*importer.Result, error) {
	rd := &reader{path: path, res: &importer.Result{}, seen: map[string]int{}, cwd: filepath.Dir(path)}
	real := path
	if abs, err := filepath.Abs(path); err == nil {
		real = abs
		rd.cwd = filepath.Dir(abs)
	}
	if p, err := filepath.EvalSymlinks(real); err == nil {
		real = p
	}
	sum := sha256.Sum256([]byte(real))
	rd.key = hex.EncodeToString(sum[:6])
	err := importer.Lines(ctx, r, rd.line, func(n int) {
		rd.res.Problemf(path, n, fmt.Sprintf("line longer than %d bytes, skipped", importer.MaxLine))
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rd.res.Problemf(path, 0, "reading stopped: "+err.Error())
	}
	rd.endSession()
	if rd.runs == 0 && rd.outside > 0 {
		return nil, fmt.Errorf("aider: %s: not an Aider chat history (no %q line)", path, strings.TrimSpace(header))
	}
	for range rd.outside {
		rd.res.Skip("before-first-run")
	}
	return rd.res, nil
}

// line takes in line n of the file.
func (rd *reader) line(n int, b []byte) error {
	line := strings.ToValidUTF8(string(b), "\uFFFD")
	if rest, ok := strings.CutPrefix(line, header); ok {
		rd.endSession()
		rd.startSession(n, strings.TrimSpace(rest))
		return nil
	}
	if rd.s == nil {
		if strings.TrimSpace(line) != "" {
			rd.outside++
		}
		return nil
	}
	blankBefore := rd.afterBlank
	rd.afterBlank = strings.TrimSpace(line) == ""
	if rd.afterBlank {
		rd.blank()
		return nil
	}
	// Aider ends each line of a prompt and of its own output with two
	// spaces (a Markdown line break); a reply's lines are the model's
	// text as it is. A line so marked is Aider's, also in the middle of
	// a reply; one without the mark (a heading or a quote in a reply,
	// or a file whose trailing spaces an editor removed) is the reply's
	// while a reply goes on.
	marked := strings.HasSuffix(line, "  ")
	isUser := strings.HasPrefix(line, "#### ") || strings.TrimRight(line, " ") == "####"
	isOutput := strings.HasPrefix(line, "> ") || strings.TrimRight(line, " ") == ">"
	if (isUser || isOutput) && rd.marks == unknown && rd.kind != reply {
		// The run's first line of Aider's tells whether its lines
		// carry the mark.
		rd.marks = markless
		if marked {
			rd.marks = withMarks
		}
	}
	// Without marks, a prefixed line outside a code block is Aider's.
	ours := marked || rd.kind != reply || (rd.marks == markless && !rd.inFence) ||
		(!rd.inFence && strings.HasPrefix(line, "> Tokens: ")) // a usage report over two lines
	switch {
	case isUser && ours:
		rd.add(n, user, strings.TrimPrefix(strings.TrimPrefix(line, "####"), " "), marked)
	case isOutput && !rd.inFence && ours:
		rd.add(n, output, strings.TrimPrefix(strings.TrimPrefix(line, ">"), " "), marked)
	case rd.kind == output && (!blankBefore || strings.HasPrefix(line, "Cost: $")):
		// Aider quotes only the first line of an output that holds
		// line breaks (a usage report's cost, the command line of a
		// run given a multi-line --message); a reply always starts
		// after a blank line.
		rd.add(n, output, line, marked)
	default:
		rd.replyLine(n, line)
	}
	return nil
}

// blank takes in a blank line: it ends a prompt, and is kept in a reply
// if the reply goes on.
func (rd *reader) blank() {
	switch rd.kind {
	case user:
		rd.endBlock()
	case reply:
		rd.blanks++
	}
}

// replyLine adds line n, the model's, to the reply, which it starts
// when another block was being read.
func (rd *reader) replyLine(n int, line string) {
	if rd.kind != reply {
		rd.endBlock()
		rd.kind, rd.first = reply, n
	}
	for ; rd.blanks > 0; rd.blanks-- {
		rd.lines = append(rd.lines, "")
	}
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		rd.inFence = !rd.inFence
	}
	rd.lines = append(rd.lines, line)
}

// add adds a line of kind k (a prompt's or Aider's output) at line n.
func (rd *reader) add(n, k int, text string, marked bool) {
	if rd.kind != k {
		rd.endBlock()
		rd.kind, rd.first = k, n
	}
	if marked {
		text = strings.TrimSuffix(text, "  ")
	}
	rd.lines = append(rd.lines, text)
}

// startSession starts the session of the run whose header, at line n,
// says it started at stamp.
func (rd *reader) startSession(n int, stamp string) {
	s := &importer.Session{Kind: loom.KindMain, Path: rd.path, Cwd: rd.cwd}
	at, err := time.ParseInLocation(timeLayout, stamp, time.Local)
	name := at.Format("20060102T150405")
	if err != nil {
		rd.res.Problemf(rd.path, n, fmt.Sprintf("a run's start %q is not a time", loom.Truncate(stamp, 40)))
		name = "line" + strconv.Itoa(n)
	} else {
		s.CreatedAt, s.UpdatedAt = at, at
	}
	id := rd.key + "-" + name
	rd.seen[id]++
	if k := rd.seen[id]; k > 1 {
		id += "-" + strconv.Itoa(k)
	}
	s.SourceID = id
	rd.runs++
	rd.s, rd.start, rd.model, rd.last = s, n, "", nil
	rd.kind, rd.lines, rd.blanks, rd.inFence, rd.marks = none, nil, 0, false, unknown
}

// endSession ends the session being read: one with neither a prompt nor
// a reply (Aider started and quit) is left out and counted.
func (rd *reader) endSession() {
	rd.endBlock()
	s := rd.s
	if s == nil {
		return
	}
	rd.s = nil
	for _, m := range s.Messages {
		if m.Role == loom.RoleUser || m.Role == loom.RoleAssistant {
			s.Model = rd.model
			rd.res.Sessions = append(rd.res.Sessions, s)
			return
		}
	}
	rd.res.Skip("empty-session")
}

// endBlock turns the lines gathered into a message.
func (rd *reader) endBlock() {
	kind, lines := rd.kind, rd.lines
	rd.kind, rd.lines, rd.blanks, rd.inFence = none, nil, 0, false
	if kind == none || rd.s == nil {
		return
	}
	text := strings.Join(lines, "\n")
	switch kind {
	case user:
		rd.prompt(text)
	case output:
		rd.output(lines, text)
	case reply:
		thinking, answer := splitReasoning(text)
		m := rd.message(loom.RoleAssistant, answer)
		if thinking != "" {
			// The reasoning first, as the model gave it.
			m.Parts = []loom.Part{{ID: m.ID + "/0", Type: loom.PartReasoning, Text: thinking}}
			if answer != "" {
				m.Parts = append(m.Parts, loom.Part{ID: m.ID + "/1", Type: loom.PartText, Text: answer})
			}
		}
		m.Model, m.Provider = rd.model, providerOf(rd.model)
		rd.last = m
	}
}

// reasoningTag starts the tag Aider wraps a reasoning model's thinking
// in, in the reply it writes (<thinking-content-<hash>>…</…>).
const reasoningTag = "<thinking-content-"

// splitReasoning splits a reply into the reasoning Aider wrapped in its
// tag and the answer around it; a reply cut short inside the tag (an
// error while streaming) is all reasoning.
func splitReasoning(text string) (thinking, answer string) {
	i := strings.Index(text, reasoningTag)
	if i < 0 {
		return "", strings.TrimSpace(text)
	}
	end := strings.IndexByte(text[i:], '>')
	if end < 0 {
		return "", strings.TrimSpace(text)
	}
	name := text[i+1 : i+end]
	rest := text[i+end+1:]
	before := strings.TrimSpace(text[:i])
	inner, after, closed := strings.Cut(rest, "</"+name+">")
	if !closed {
		inner, after = rest, ""
	}
	answer = strings.TrimSpace(before + "\n\n" + strings.TrimSpace(after))
	return strings.TrimSpace(inner), answer
}

// prompt stores what the user typed: a prompt, or an in-chat command
// that only ran in Aider (a system message). /ask, /code, /architect
// and /context with a request send it to the model: prompts.
func (rd *reader) prompt(text string) {
	rd.last = nil
	if strings.TrimSpace(text) == "<blank>" || strings.TrimSpace(text) == "" {
		rd.res.Skip("blank-prompt")
		return
	}
	role := loom.RoleUser
	if strings.Contains(text, "(Y)es/(N)o") {
		// The answer to one of Aider's questions that a group of them
		// answered at once ("Create new file? (Y)es/(N)o … [Yes]: a").
		role = loom.RoleSystem
	} else if cmd, rest, _ := strings.Cut(strings.TrimSpace(text), " "); strings.HasPrefix(cmd, "/") || strings.HasPrefix(cmd, "!") {
		switch cmd {
		case "/ask", "/code", "/architect", "/context":
			if strings.TrimSpace(rest) == "" {
				role = loom.RoleSystem
			}
		default:
			role = loom.RoleSystem
		}
	}
	rd.message(role, text)
}

// output stores Aider's own output (announcements, files added, edits
// applied, commits, errors, usage) as a system message, and learns from
// it the version, the model and the last reply's usage.
func (rd *reader) output(lines []string, text string) {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Aider v"):
			if f := strings.Fields(strings.TrimPrefix(l, "Aider v")); len(f) > 0 {
				rd.s.Version = f[0]
			}
		case strings.HasPrefix(l, "Main model: "), strings.HasPrefix(l, "Model: "):
			_, rest, _ := strings.Cut(l, ": ")
			if f := strings.Fields(rest); len(f) > 0 {
				rd.model = f[0]
			}
		case strings.HasPrefix(l, "Tokens: "):
			if rd.last != nil {
				if u, ok := parseUsage(l); ok {
					rd.last.Usage = u
				}
			}
		case strings.HasPrefix(l, "Cost: "):
			// Aider puts the cost on a line of its own when the
			// report is long.
			if rd.last != nil && rd.last.Usage.CostUSD == 0 {
				rd.last.Usage.CostUSD = parseCost(l)
			}
		}
	}
	rd.message(loom.RoleSystem, strings.TrimSpace(text))
}

// message adds a message of role with text, starting at the block's
// first line: its id is the session's id and that line counted from the
// run's header, so that the same run read again, however much the file
// grew, gives the same ids.
func (rd *reader) message(role, text string) *loom.Message {
	s := rd.s
	t := s.CreatedAt
	m := &loom.Message{
		ID:        fmt.Sprintf("%s:%d", s.SourceID, rd.first-rd.start),
		Role:      role,
		CreatedAt: t, CompletedAt: &t,
	}
	m.Parts = []loom.Part{{ID: m.ID + "/0", Type: loom.PartText, Text: text}}
	s.Messages = append(s.Messages, m)
	return m
}

// parseUsage reads Aider's usage line of a reply: "Tokens: 4.5k sent,
// 1.2k cache write, 3.1k cache hit, 250 received. Cost: $0.02 message,
// $0.05 session." Aider rounds the counts (to a hundred above a
// thousand, to a thousand above ten thousand). What it sent includes
// the cached tokens.
func parseUsage(l string) (loom.Usage, bool) {
	var u loom.Usage
	tokens, cost, _ := strings.Cut(strings.TrimPrefix(l, "Tokens: "), "Cost:")
	var sent, hit, write, recv int64
	found := false
	for _, piece := range strings.Split(strings.TrimRight(strings.TrimSpace(tokens), "."), ",") {
		num, what, ok := strings.Cut(strings.TrimSpace(piece), " ")
		if !ok {
			continue
		}
		v, ok := count(num)
		if !ok {
			continue
		}
		switch strings.TrimSpace(what) {
		case "sent":
			sent, found = v, true
		case "received":
			recv, found = v, true
		case "cache hit":
			hit = v
		case "cache write":
			write = v
		}
	}
	if !found {
		return u, false
	}
	u.InputTokens = max(sent-hit-write, 0)
	u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens = hit, write, recv
	u.CostUSD = parseCost("Cost:" + cost)
	return u, true
}

// parseCost reads the cost of a reply from Aider's "Cost: $0.02
// message, $0.05 session." (or "Cost: $0.0123 message, …"); 0 when it
// has none.
func parseCost(l string) float64 {
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "Cost:"))
	if c, _, ok := strings.Cut(rest, " message"); ok {
		if v, err := strconv.ParseFloat(strings.TrimPrefix(c, "$"), 64); err == nil && v > 0 && v < 1e6 {
			return v
		}
	}
	return 0
}

// count reads one of Aider's token counts: 250, 4.5k, 12k, 1.2M.
func count(s string) (int64, bool) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v <= 1e12) {
		return 0, false
	}
	return int64(v*mult + 0.5), true
}

// providerOf is the provider of an Aider model name: the part before
// its first slash (anthropic/claude-…, openrouter/…), else what the
// name says of itself; "" when it says nothing.
func providerOf(model string) string {
	if p, _, ok := strings.Cut(model, "/"); ok {
		return p
	}
	switch m := strings.ToLower(model); {
	case strings.HasPrefix(m, "claude"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "chatgpt"):
		return "openai"
	case strings.HasPrefix(m, "gemini"):
		return "google"
	case strings.HasPrefix(m, "deepseek"):
		return "deepseek"
	}
	return ""
}
