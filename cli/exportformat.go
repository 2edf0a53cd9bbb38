package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/loomhq/loom"
)

// Export formats. jsonl and json carry every field of the store and
// round-trip through import; markdown is for people.
const (
	formatJSONL    = "jsonl"
	formatJSON     = "json"
	formatMarkdown = "markdown"
)

// exportVersion is the version of the json export document.
const exportVersion = 1

// jsonlRecord is one line of a jsonl export.
type jsonlRecord struct {
	Type    string        `json:"type"`
	Session *loom.Session `json:"session,omitempty"`
	Message *loom.Message `json:"message,omitempty"`
}

// exportDocument is the json export.
type exportDocument struct {
	Version  int                 `json:"version"`
	Sessions []*loom.SessionData `json:"sessions"`
}

// sessionFamily returns root followed by its sub-agent sessions, depth
// first, each parent's children oldest first, read in one store query.
func sessionFamily(ctx context.Context, st loom.Store, user string, root *loom.Session) ([]*loom.Session, error) {
	family, err := st.Family(ctx, loom.FamilyQuery{IDs: []string{root.ID}, UserID: user, SubagentsOnly: true})
	if err != nil {
		return nil, err
	}
	if len(family) == 0 || family[0].ID != root.ID {
		// The session left the store (or the trash took it) since it
		// was resolved.
		return nil, loom.NotFound(root.ID)
	}
	return family, nil
}

// orderForExport puts a whole store's sessions in export order: oldest
// first, each followed by its sub-agent sessions, so that a parent always
// comes before its children.
func orderForExport(all []*loom.Session) []*loom.Session {
	sortOldestFirst(all)
	byID := make(map[string]bool, len(all))
	children := map[string][]*loom.Session{}
	for _, s := range all {
		byID[s.ID] = true
	}
	for _, s := range all {
		if s.Kind == loom.KindSubagent && s.ParentID != "" && byID[s.ParentID] {
			children[s.ParentID] = append(children[s.ParentID], s)
		}
	}
	out := make([]*loom.Session, 0, len(all))
	seen := map[string]bool{}
	var add func(s *loom.Session)
	add = func(s *loom.Session) {
		if seen[s.ID] {
			return
		}
		seen[s.ID] = true
		out = append(out, s)
		for _, c := range children[s.ID] {
			add(c)
		}
	}
	for _, s := range all {
		if s.Kind == loom.KindSubagent && byID[s.ParentID] {
			continue
		}
		add(s)
	}
	// Cycles (which the store never makes) would leave sessions out;
	// nothing may be lost from an export.
	for _, s := range all {
		add(s)
	}
	return out
}

func sortOldestFirst(ss []*loom.Session) {
	slices.SortStableFunc(ss, func(a, b *loom.Session) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// exportSession prepares a session for export: a lock belongs to a
// running process, not to the session's history, so it is left out.
func exportSession(s *loom.Session) *loom.Session {
	c := *s
	c.Lock = nil
	return &c
}

// writeJSONL writes sessions as jsonl: a session line followed by one line
// per message, for each session in turn.
func writeJSONL(w io.Writer, data []*loom.SessionData) error {
	bw := bufio.NewWriter(w)
	line := func(rec jsonlRecord) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		bw.Write(b)
		return bw.WriteByte('\n')
	}
	for _, d := range data {
		if err := line(jsonlRecord{Type: "session", Session: exportSession(d.Session)}); err != nil {
			return err
		}
		for _, m := range d.Messages {
			if err := line(jsonlRecord{Type: "message", Message: m}); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// writeJSONDocument writes sessions as one indented JSON document.
func writeJSONDocument(w io.Writer, data []*loom.SessionData) error {
	doc := exportDocument{Version: exportVersion, Sessions: make([]*loom.SessionData, len(data))}
	for i, d := range data {
		msgs := d.Messages
		if msgs == nil {
			msgs = []*loom.Message{}
		}
		doc.Sessions[i] = &loom.SessionData{Session: exportSession(d.Session), Messages: msgs}
	}
	return writeJSON(w, doc)
}

// writeMarkdown writes sessions as a readable document: metadata, then
// every message with its parts, reasoning folded away.
func writeMarkdown(w io.Writer, data []*loom.SessionData) error {
	bw := bufio.NewWriter(w)
	for i, d := range data {
		if i > 0 {
			bw.WriteString("---\n\n")
		}
		s := d.Session
		title := s.Title
		if title == "" {
			title = "Untitled session"
		}
		if s.Kind == loom.KindSubagent {
			title = "Sub-agent session: " + title
		}
		fmt.Fprintf(bw, "# %s\n\n", mdEscape(title))
		meta := [][2]string{
			{"id", "`" + s.ID + "`"},
			{"key", codeOrEmpty(s.Key)},
			{"kind", s.Kind},
			{"parent", codeOrEmpty(s.ParentID)},
		}
		if s.Kind == loom.KindFork {
			meta = append(meta, [2]string{"forked at turn", fmt.Sprint(s.ForkTurn)})
		}
		if s.Project.Root != "" {
			meta = append(meta, [2]string{"project", s.Project.Name + " (`" + s.Project.Root + "`)"})
		}
		model := s.Model
		if s.Provider != "" && model != "" {
			model = s.Provider + ":" + model
		}
		meta = append(meta,
			[2]string{"model", model},
			[2]string{"profile", s.Profile},
			[2]string{"created", loom.FormatTime(s.CreatedAt)},
			[2]string{"updated", loom.FormatTime(s.UpdatedAt)},
			[2]string{"messages", fmt.Sprintf("%d in %s", s.MessageCount, plural(s.TurnCount, "turn"))},
		)
		if !s.Usage.IsZero() {
			meta = append(meta, [2]string{"usage", usageSummary(s.Usage)})
		}
		for _, kv := range meta {
			if kv[1] != "" {
				fmt.Fprintf(bw, "- **%s:** %s\n", kv[0], kv[1])
			}
		}
		if s.Description != "" {
			fmt.Fprintf(bw, "\n%s\n", s.Description)
		}
		bw.WriteString("\n")
		for _, m := range d.Messages {
			writeMarkdownMessage(bw, m)
		}
	}
	return bw.Flush()
}

func writeMarkdownMessage(bw *bufio.Writer, m *loom.Message) {
	head := fmt.Sprintf("%d. %s", m.Seq, m.Role)
	if m.Model != "" && m.Role != loom.RoleUser {
		head += " (" + m.Model + ")"
	}
	fmt.Fprintf(bw, "## %s · %s\n\n", head, loom.FormatTime(m.CreatedAt))
	for _, p := range m.Parts {
		switch p.Type {
		case loom.PartText:
			if t := strings.TrimSpace(p.Text); t != "" {
				fmt.Fprintf(bw, "%s\n\n", t)
			}
		case loom.PartReasoning:
			if t := strings.TrimSpace(p.Text); t != "" {
				fmt.Fprintf(bw, "<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", t)
			}
		case loom.PartTool:
			line := fmt.Sprintf("**Tool `%s`** · %s", p.Name, p.Status)
			if p.StartedAt != nil && p.EndedAt != nil {
				line += " · " + formatDuration(p.EndedAt.Sub(*p.StartedAt))
			}
			if p.Title != "" {
				line += " · " + mdEscape(oneLine(p.Title))
			}
			fmt.Fprintf(bw, "%s\n\n", line)
			if len(p.Input) > 0 && string(p.Input) != "null" {
				fmt.Fprintf(bw, "Input:\n\n%s\n\n", fenced("json", indentJSON(p.Input)))
			}
			if len(p.Output) > 0 && string(p.Output) != "null" {
				fmt.Fprintf(bw, "Output:\n\n%s\n\n", fenced("", jsonText(p.Output)))
			}
			if p.Error != "" {
				fmt.Fprintf(bw, "Error:\n\n%s\n\n", fenced("", p.Error))
			}
		case loom.PartFile:
			name := p.Filename
			if name == "" && p.Source != nil {
				name = p.Source.Path
			}
			fmt.Fprintf(bw, "**File** `%s`", name)
			if p.Mime != "" {
				fmt.Fprintf(bw, " (%s)", p.Mime)
			}
			if p.URL != "" && !strings.HasPrefix(p.URL, "data:") {
				fmt.Fprintf(bw, " <%s>", p.URL)
			}
			bw.WriteString("\n\n")
		case loom.PartAgent:
			fmt.Fprintf(bw, "**Sub-agent** `%s`", p.Name)
			if p.SessionID != "" {
				fmt.Fprintf(bw, " → session `%s`", p.SessionID)
			}
			bw.WriteString("\n\n")
		}
	}
	if m.Error != nil && m.Error.Message != "" {
		fmt.Fprintf(bw, "**Error:** %s\n\n", mdEscape(m.Error.Message))
	}
}

func codeOrEmpty(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// mdEscape keeps text from starting Markdown constructs by accident.
func mdEscape(s string) string {
	r := strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;")
	return r.Replace(s)
}

// fenced wraps s in a code fence longer than any run of backticks in it.
func fenced(lang, s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence
}

func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// jsonText shows a JSON string as its text and anything else indented.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return indentJSON(raw)
}

// importError is a malformed import record, located by file and line.
func importError(name string, line int, format string, args ...any) error {
	return loom.Errorf(loom.EINVALID, "%s:%d: %s", name, line, fmt.Sprintf(format, args...))
}

// parseExport reads a jsonl or json export. Every record is checked here,
// so that a bad one is reported with its line and nothing is written.
func parseExport(name string, content []byte) ([]*loom.SessionData, error) {
	content = bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(content, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, loom.Errorf(loom.EINVALID, "%s: empty file: nothing to import", name)
	}
	if trimmed[0] != '{' {
		return nil, importError(name, lineAt(content, len(content)-len(trimmed)), "not a loom export: expected jsonl records or a json document starting with {")
	}
	if isJSONL(trimmed) {
		return parseJSONL(name, content)
	}
	return parseJSONDocument(name, content)
}

// isJSONL reports whether the first line is a whole jsonl record (an
// object with a type). A json document's first line is either an opening
// brace alone or a whole document without a type.
func isJSONL(content []byte) bool {
	first, _, _ := bytes.Cut(content, []byte("\n"))
	var probe map[string]json.RawMessage
	if json.Unmarshal(first, &probe) != nil {
		// A first record cut short is still a jsonl record, reported as
		// such with its line.
		return bytes.HasPrefix(bytes.TrimSpace(first), []byte(`{"type"`))
	}
	_, ok := probe["type"]
	return ok
}

// recordChecker checks records in file order as they are read.
type recordChecker struct {
	name string
	cur  *loom.SessionData
	data []*loom.SessionData
	ids  map[string]int // session id → line
	msgs map[string]int // message id → line
}

func newRecordChecker(name string) *recordChecker {
	return &recordChecker{name: name, ids: map[string]int{}, msgs: map[string]int{}}
}

func (c *recordChecker) session(line int, s *loom.Session) error {
	if s == nil {
		return importError(c.name, line, "session record without a session")
	}
	if strings.TrimSpace(s.ID) == "" {
		return importError(c.name, line, "session has no id")
	}
	if prev, ok := c.ids[s.ID]; ok {
		return importError(c.name, line, "session %s appears twice (first on line %d)", s.ID, prev)
	}
	switch s.Kind {
	case "", loom.KindMain, loom.KindFork, loom.KindSubagent:
	default:
		return importError(c.name, line, "session %s has unknown kind %q", s.ID, s.Kind)
	}
	if s.Kind == loom.KindSubagent && s.ParentID == "" {
		return importError(c.name, line, "sub-agent session %s has no parent_id", s.ID)
	}
	if s.CreatedAt.IsZero() || s.UpdatedAt.IsZero() {
		return importError(c.name, line, "session %s needs created_at and updated_at", s.ID)
	}
	c.ids[s.ID] = line
	s.Lock = nil
	c.cur = &loom.SessionData{Session: s}
	c.data = append(c.data, c.cur)
	return nil
}

func (c *recordChecker) message(line int, m *loom.Message) error {
	if c.cur == nil {
		return importError(c.name, line, "message before any session record")
	}
	if m == nil {
		return importError(c.name, line, "message record without a message")
	}
	s := c.cur.Session
	if m.SessionID != "" && m.SessionID != s.ID {
		return importError(c.name, line, "message belongs to session %s, but follows session %s", m.SessionID, s.ID)
	}
	m.SessionID = s.ID
	if want := int64(len(c.cur.Messages) + 1); m.Seq != want {
		return importError(c.name, line, "message has seq %d, want %d (seq runs 1, 2, 3 … without gaps)", m.Seq, want)
	}
	if strings.TrimSpace(m.ID) == "" {
		return importError(c.name, line, "message %d has no id", m.Seq)
	}
	if prev, ok := c.msgs[m.ID]; ok {
		return importError(c.name, line, "message id %s appears twice (first on line %d)", m.ID, prev)
	}
	if m.CreatedAt.IsZero() {
		return importError(c.name, line, "message %d has no created_at", m.Seq)
	}
	if err := m.Validate(); err != nil {
		return importError(c.name, line, "message %d: %s", m.Seq, loom.ErrorMessage(err))
	}
	for _, p := range m.Parts {
		if p.ID == "" {
			return importError(c.name, line, "message %d has a part without an id", m.Seq)
		}
	}
	c.msgs[m.ID] = line
	c.cur.Messages = append(c.cur.Messages, m)
	return nil
}

func parseJSONL(name string, content []byte) ([]*loom.SessionData, error) {
	c := newRecordChecker(name)
	lineNo := 0
	for len(content) > 0 {
		var line []byte
		line, content, _ = bytes.Cut(content, []byte("\n"))
		lineNo++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec struct {
			Type    string          `json:"type"`
			Session json.RawMessage `json:"session"`
			Message json.RawMessage `json:"message"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, importError(name, lineNo, "%s", jsonReason(err))
		}
		if dec.More() {
			return nil, importError(name, lineNo, "more than one JSON value on the line")
		}
		switch rec.Type {
		case "session":
			var s *loom.Session
			if err := strictUnmarshal(rec.Session, &s); err != nil {
				return nil, importError(name, lineNo, "session: %s", jsonReason(err))
			}
			if err := c.session(lineNo, s); err != nil {
				return nil, err
			}
		case "message":
			var m *loom.Message
			if err := strictUnmarshal(rec.Message, &m); err != nil {
				return nil, importError(name, lineNo, "message: %s", jsonReason(err))
			}
			if err := c.message(lineNo, m); err != nil {
				return nil, err
			}
		case "":
			return nil, importError(name, lineNo, "record has no type")
		default:
			return nil, importError(name, lineNo, "unknown record type %q", rec.Type)
		}
	}
	if len(c.data) == 0 {
		return nil, loom.Errorf(loom.EINVALID, "%s: no sessions in the file", name)
	}
	return c.data, nil
}

// strictUnmarshal decodes one JSON value into v, refusing fields loom
// does not know: an import must not drop anything silently.
func strictUnmarshal(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("missing")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// jsonReason turns a decoding error into a short reason.
func jsonReason(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "invalid JSON: " + se.Error()
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("%s should be %s, not a JSON %s", field, te.Type, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "unexpected end of JSON (the record is cut short)"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(content []byte, off int) int {
	off = min(max(off, 0), len(content))
	return bytes.Count(content[:off], []byte("\n")) + 1
}

// jsonDocParser walks a json export token by token, so that each
// session and message is checked with the line it starts on.
type jsonDocParser struct {
	name    string
	content []byte
	dec     *json.Decoder
}

// next returns the line where the next value starts.
func (p *jsonDocParser) nextLine() int {
	off := int(p.dec.InputOffset())
	for off < len(p.content) && strings.IndexByte(" \t\r\n,:", p.content[off]) >= 0 {
		off++
	}
	return lineAt(p.content, off)
}

func (p *jsonDocParser) fail(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	line := p.nextLine()
	switch {
	case errors.As(err, &se):
		line = lineAt(p.content, int(se.Offset))
	case errors.As(err, &te):
		line = lineAt(p.content, int(te.Offset))
	}
	return importError(p.name, line, "%s", jsonReason(err))
}

func (p *jsonDocParser) delim(want json.Delim) error {
	line := p.nextLine()
	tok, err := p.dec.Token()
	if err != nil {
		return p.fail(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return importError(p.name, line, "expected %q", string(want))
	}
	return nil
}

// object calls field for each key of the object that comes next.
func (p *jsonDocParser) object(field func(key string, line int) error) error {
	if err := p.delim('{'); err != nil {
		return err
	}
	for p.dec.More() {
		line := p.nextLine()
		tok, err := p.dec.Token()
		if err != nil {
			return p.fail(err)
		}
		key, _ := tok.(string)
		if err := field(key, line); err != nil {
			return err
		}
	}
	return p.delim('}')
}

// array calls elem for each element of the array that comes next.
func (p *jsonDocParser) array(elem func(line int) error) error {
	if err := p.delim('['); err != nil {
		return err
	}
	for p.dec.More() {
		if err := elem(p.nextLine()); err != nil {
			return err
		}
	}
	return p.delim(']')
}

func parseJSONDocument(name string, content []byte) ([]*loom.SessionData, error) {
	p := &jsonDocParser{name: name, content: content, dec: json.NewDecoder(bytes.NewReader(content))}
	p.dec.DisallowUnknownFields()
	c := newRecordChecker(name)
	version := 0
	err := p.object(func(key string, line int) error {
		switch key {
		case "version":
			if err := p.dec.Decode(&version); err != nil {
				return p.fail(err)
			}
			if version != exportVersion {
				return importError(name, line, "unsupported export version %d (this loom reads version %d)", version, exportVersion)
			}
			return nil
		case "sessions":
			return p.array(func(line int) error {
				seen := false
				return p.object(func(key string, kline int) error {
					switch key {
					case "session":
						var s *loom.Session
						if err := p.dec.Decode(&s); err != nil {
							return p.fail(err)
						}
						seen = true
						return c.session(kline, s)
					case "messages":
						if !seen {
							return importError(name, kline, "messages must follow their session")
						}
						return p.array(func(mline int) error {
							var m *loom.Message
							if err := p.dec.Decode(&m); err != nil {
								return p.fail(err)
							}
							return c.message(mline, m)
						})
					default:
						return importError(name, kline, "unknown field %q", key)
					}
				})
			})
		default:
			return importError(name, line, "unknown field %q", key)
		}
	})
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, importError(name, p.nextLine(), "unexpected data after the document")
	}
	if version == 0 {
		return nil, loom.Errorf(loom.EINVALID, "%s: not a loom export: no version", name)
	}
	if len(c.data) == 0 {
		return nil, loom.Errorf(loom.EINVALID, "%s: no sessions in the file", name)
	}
	return c.data, nil
}
