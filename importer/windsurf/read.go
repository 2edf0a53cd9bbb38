package windsurf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// What a trajectory is made of: a header (the second form is older), a
// note under it, and turns under level-three headings.
var headers = []string{"# Chat Conversation", "# Cascade Chat Conversation"}

const (
	userHeading     = "### User Input"
	plannerHeading  = "### Planner Response"
	notePrefix      = "Note: _This is purely the output of the chat conversation"
	systemGenerated = "This is a system-generated message"
)

// Where the reading of a file is.
const (
	preamble = iota // before the header
	front           // in the YAML front matter some tools put above it
	head            // after the header, before the first turn
	turns           // in the turns
)

// Block kinds.
const (
	userBlock = iota + 1
	plannerBlock
	unknownBlock
)

// maxFront bounds the front matter: a file whose front matter goes on
// longer is no trajectory.
const maxFront = 100

// maxReplays bounds how often the last turn is read again because a
// code fence in it never closed (see reader.finish).
const maxReplays = 16

// errNotTrajectory stops reading a file that does not start as a
// trajectory.
var errNotTrajectory = errors.New("not a trajectory")

type numbered struct {
	n    int
	text string
}

// block is one turn's lines, under its heading.
type block struct {
	kind  int
	name  string // an unknown heading's
	lines []numbered
}

// fence is a fenced code block's opening: its character, how many, and
// its line.
type fence struct {
	ch   byte
	n    int
	line int
	open bool
}

// reader holds what reading one trajectory learns on the way.
type reader struct {
	path string
	mod  time.Time
	res  *importer.Result

	stage     int
	frontSeen bool
	front     map[string]string
	outside   int // lines between the header and the first turn
	// notText says a line read before the header was not text: the
	// file is garbage, not a Markdown file that is no trajectory.
	notText bool

	cur       *block
	fence     fence
	candidate bool         // a turn heading was met inside the open fence
	noFence   map[int]bool // fences that never closed: text, not fences
	fencesOff bool

	msgs      []*loom.Message
	spare     []numbered // the lines of the last turn, for the next one's
	text      []string   // the text lines of a part being gathered
	first     string     // the first turn's text, part of the session's id
	firstSeen bool
	root      []string // the directory every path met so far is under
	rootSeen  bool
}

// read reads a trajectory from r: one session, none (counted as skipped)
// when r does not hold a trajectory.
func read(ctx context.Context, path string, mod time.Time, r io.Reader) (*importer.Result, error) {
	rd := &reader{path: path, mod: mod.UTC(), res: &importer.Result{}, front: map[string]string{}, noFence: map[int]bool{}}
	err := importer.Lines(ctx, r, rd.line, func(n int) {
		rd.res.Problemf(path, n, fmt.Sprintf("line longer than %d bytes, skipped", importer.MaxLine))
	})
	switch {
	case errors.Is(err, errNotTrajectory):
		return rd.notTrajectory(), nil
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		rd.res.Problemf(path, 0, "reading stopped: "+err.Error())
	}
	if rd.stage < head {
		return rd.notTrajectory(), nil
	}
	rd.finish()
	return rd.res, nil
}

// notTrajectory is what a file that is no trajectory gives: a Markdown
// file (notes beside the trajectories) is passed over, counted; one
// that is not text is garbage (importer/badinput.go), one line.
func (rd *reader) notTrajectory() *importer.Result {
	res := &importer.Result{}
	if rd.notText {
		res.NotText(rd.path)
		return res
	}
	res.Skip("not-a-trajectory")
	return res
}

// line takes in line n.
func (rd *reader) line(n int, b []byte) error {
	if rd.stage < head && !importer.IsText(b) {
		rd.notText = true
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if n == 1 {
		s = strings.TrimPrefix(s, "\uFEFF")
	}
	t := strings.TrimSpace(s)
	switch rd.stage {
	case preamble:
		switch {
		case t == "":
		case t == "---" && !rd.frontSeen:
			rd.stage, rd.frontSeen = front, true
		case isHeader(t):
			rd.stage = head
		default:
			return errNotTrajectory
		}
	case front:
		if t == "---" {
			rd.stage = preamble
			return nil
		}
		if len(rd.front) >= maxFront || n > maxFront+2 {
			return errNotTrajectory
		}
		if k, v, ok := strings.Cut(t, ":"); ok {
			rd.front[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	case head:
		switch {
		case t == "" || strings.HasPrefix(t, notePrefix):
		case headingKind(s) != 0:
			rd.stage = turns
			rd.cur = &block{kind: headingKind(s)}
		case strings.HasPrefix(s, "### "):
			// A heading of a kind this reader does not know: what is
			// under it, up to the next turn, is counted, not read.
			rd.stage = turns
			rd.cur = &block{kind: unknownBlock, name: strings.TrimSpace(strings.TrimPrefix(s, "### "))}
		default:
			rd.outside++
		}
	default:
		rd.turnLine(n, s)
	}
	return nil
}

// turnLine takes in line n, in the turns: a turn's heading outside a
// fenced code block ends the turn before it.
func (rd *reader) turnLine(n int, s string) {
	if rd.fence.open {
		if closesFence(s, rd.fence) {
			rd.fence, rd.candidate = fence{}, false
		} else if headingKind(s) != 0 {
			rd.candidate = true
		}
		rd.cur.lines = append(rd.cur.lines, numbered{n, s})
		return
	}
	if k := headingKind(s); k != 0 {
		rd.endBlock()
		rd.cur = &block{kind: k, lines: rd.spare[:0]}
		return
	}
	if f, ok := rd.opens(n, s); ok {
		rd.fence = f
	}
	rd.cur.lines = append(rd.cur.lines, numbered{n, s})
}

// opens reports whether line n opens a fenced code block.
func (rd *reader) opens(n int, s string) (fence, bool) {
	if rd.fencesOff || rd.noFence[n] {
		return fence{}, false
	}
	ch, k, ok := openFence(s)
	return fence{ch: ch, n: k, line: n, open: ok}, ok
}

// finish ends the reading: a code fence still open at the end of the
// file never was one (a reply cut short in the middle of its code), so
// turn headings met inside it are headings after all: the last turn is
// read again with that fence taken for text, as often as that happens,
// and past maxReplays with no fences at all.
func (rd *reader) finish() {
	for tries := 0; rd.fence.open && rd.candidate && rd.cur != nil; tries++ {
		if tries >= maxReplays {
			rd.fencesOff = true
		}
		rd.noFence[rd.fence.line] = true
		b := rd.cur
		rd.cur, rd.fence, rd.candidate = &block{kind: b.kind, name: b.name}, fence{}, false
		for _, l := range b.lines {
			rd.turnLine(l.n, l.text)
		}
	}
	rd.endBlock()
	for range rd.outside {
		rd.res.Skip("before-first-turn")
	}
	if len(rd.msgs) == 0 {
		rd.res.Skip("empty-trajectory")
		return
	}
	rd.res.Sessions = append(rd.res.Sessions, rd.session())
}

// session is the session of the messages read.
func (rd *reader) session() *importer.Session {
	sum := sha256.Sum256([]byte(filepath.Base(rd.path) + "\n" + rd.first))
	id := hex.EncodeToString(sum[:8])
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: rd.path, Title: rd.front["title"],
		CreatedAt: rd.mod, UpdatedAt: rd.mod, Messages: rd.msgs}
	if w, ok := localPath(rd.front["workspace"]); ok {
		s.Cwd = filepath.FromSlash(w)
	} else if len(rd.root) > 1 {
		s.Cwd = filepath.FromSlash(strings.Join(rd.root, "/"))
	}
	for i, m := range rd.msgs {
		m.ID = id + "-" + strconv.Itoa(i+1)
		for j := range m.Parts {
			p := &m.Parts[j]
			p.ID = m.ID + "/" + strconv.Itoa(j)
			if p.Type == loom.PartTool {
				p.CallID = p.ID
			}
		}
	}
	return s
}

// endBlock turns the turn read into messages.
func (rd *reader) endBlock() {
	b := rd.cur
	rd.cur, rd.fence, rd.candidate = nil, fence{}, false
	if b == nil {
		return
	}
	if b.kind == unknownBlock {
		rd.res.Skip("unknown:" + loom.Truncate(b.name, 60))
		return
	}
	if !rd.firstSeen {
		rd.firstSeen = true
		var raw []string
		for _, l := range b.lines {
			raw = append(raw, l.text)
		}
		rd.first = keyText(strings.TrimSpace(strings.Join(raw, "\n")))
	}
	pieces := rd.pieces(b.lines)
	rd.spare = b.lines
	if b.kind == userBlock {
		// What the user typed comes before the first step; the steps
		// after it are Cascade's, done before it wrote a response.
		i := 0
		for i < len(pieces) && pieces[i].Type == loom.PartText {
			i++
		}
		var texts []string
		for _, p := range pieces[:i] {
			texts = append(texts, p.Text)
		}
		text := strings.Join(texts, "\n\n")
		switch {
		case text != "":
			role := loom.RoleUser
			if strings.HasPrefix(text, systemGenerated) {
				role = loom.RoleSystem
			}
			rd.add(role, append([]loom.Part{{Type: loom.PartText, Text: text}}, mentions(text)...))
		case i == len(pieces):
			rd.res.Skip("empty-input")
		}
		if i < len(pieces) {
			rd.add(loom.RoleAssistant, pieces[i:])
		}
		return
	}
	if len(pieces) == 0 {
		rd.res.Skip("empty-response")
		return
	}
	rd.add(loom.RoleAssistant, pieces)
}

// keyLen bounds how much of the first turn keys the session: a file
// read while it is written (its first bytes are written at once) keys
// the same session as the whole.
const keyLen = 512

// keyText is the start of the first turn's text that keys the session.
func keyText(s string) string {
	if len(s) <= keyLen {
		return s
	}
	// A character cut in two is left out.
	return strings.ToValidUTF8(s[:keyLen], "")
}

// add adds a message of role with parts; its id is given once the
// session's is known.
func (rd *reader) add(role string, parts []loom.Part) {
	at := rd.mod
	rd.msgs = append(rd.msgs, &loom.Message{Role: role, Parts: parts, CreatedAt: at, CompletedAt: &at})
}

// pieces are a turn's lines as parts: its text, cut by each step (a tool
// call Cascade made) into a tool part. Inside a fenced code block
// everything is text.
func (rd *reader) pieces(lines []numbered) []loom.Part {
	var parts []loom.Part
	text := rd.text[:0]
	defer func() { rd.text = text[:0] }()
	flush := func() {
		if t := trimBlank(text); t != "" {
			parts = append(parts, loom.Part{Type: loom.PartText, Text: rd.rewrite(t)})
		}
		text = text[:0]
	}
	var in fence
	for _, l := range lines {
		if in.open {
			if closesFence(l.text, in) {
				in = fence{}
			}
			text = append(text, l.text)
			continue
		}
		if p, ok := rd.step(l.text); ok {
			flush()
			parts = append(parts, p)
			continue
		}
		if f, ok := rd.opens(l.n, l.text); ok {
			in = f
		}
		text = append(text, l.text)
	}
	flush()
	return parts
}

// trimBlank joins lines, without the blank lines around them and the
// spaces at their end.
func trimBlank(lines []string) string {
	i, j := 0, len(lines)
	for i < j && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	for j > i && strings.TrimSpace(lines[j-1]) == "" {
		j--
	}
	return strings.TrimRight(strings.Join(lines[i:j], "\n"), " \t")
}

func isHeader(t string) bool {
	for _, h := range headers {
		if t == h {
			return true
		}
	}
	return false
}

// headingKind is the kind of turn line s starts, 0 when it starts none.
func headingKind(s string) int {
	switch strings.TrimRight(s, " \t") {
	case userHeading:
		return userBlock
	case plannerHeading:
		return plannerBlock
	}
	return 0
}

// openFence reports whether s opens a fenced code block (CommonMark: up
// to three spaces, then three or more backticks, with no backtick after
// them, or tildes), with its character and length.
func openFence(s string) (byte, int, bool) {
	s = indentOK(s)
	if len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0, false
	}
	ch := s[0]
	k := 0
	for k < len(s) && s[k] == ch {
		k++
	}
	if k < 3 || (ch == '`' && strings.IndexByte(s[k:], '`') >= 0) {
		return 0, 0, false
	}
	return ch, k, true
}

// closesFence reports whether s closes the code block f opened: the same
// character, at least as many, nothing after.
func closesFence(s string, f fence) bool {
	s = indentOK(s)
	k := 0
	for k < len(s) && s[k] == f.ch {
		k++
	}
	return k >= f.n && strings.TrimSpace(s[k:]) == ""
}

// indentOK is s without up to three leading spaces; "" when it is
// indented more (an indented code block's line).
func indentOK(s string) string {
	for i := 0; i < 4 && i < len(s); i++ {
		if s[i] != ' ' {
			return s[i:]
		}
	}
	if strings.HasPrefix(s, "    ") {
		return ""
	}
	return strings.TrimLeft(s, " ")
}
