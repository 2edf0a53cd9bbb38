package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loomhq/loom"
)

// ReadOptions say where the records Read reads come from and whose they
// become.
type ReadOptions struct {
	// Name is what errors call the input: a file name, or "<stdin>".
	Name string
	// UserID, when set, replaces every session's user: an imported
	// session belongs to whoever imports it.
	UserID string
	// Parent reports whether the session a fork or sub-agent session
	// names as its parent is where the sessions go (the store, or an
	// input read before), as the user's. A session whose parent is
	// neither in the input nor there is refused with its line; without
	// Parent, every parent must be in the input.
	Parent func(id string) (bool, error)
}

// Read reads a jsonl or json export, recognising the format from the
// content. Every record is checked as it is read, by the rules of every
// import (loom.SessionData.Validate), and fields loom does not know are
// refused, so that a bad record is reported as NAME:LINE: reason and
// nothing is returned. Errors about the content are coded EINVALID.
func Read(r io.Reader, opts ReadOptions) ([]*loom.SessionData, error) {
	content, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", opts.Name, err)
	}
	content = bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(content, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, loom.Errorf(loom.EINVALID, "%s: empty file: nothing to import", opts.Name)
	}
	if trimmed[0] != '{' {
		return nil, lineError(opts.Name, lineAt(content, len(content)-len(trimmed)), "not a loom export: expected jsonl records or a json document starting with {")
	}
	c := &recordChecker{opts: opts, ids: map[string]int{}, msgs: map[string]int{}}
	if isJSONL(trimmed) {
		err = readJSONL(c, content)
	} else {
		err = readDocument(c, content)
	}
	if err != nil {
		return nil, err
	}
	if len(c.data) == 0 {
		return nil, loom.Errorf(loom.EINVALID, "%s: no sessions in the file", opts.Name)
	}
	if err := c.checkParents(); err != nil {
		return nil, err
	}
	return c.data, nil
}

// checkParents refuses a session whose parent is neither in the input
// (anywhere in it) nor where opts.Parent looks: an import never links a
// session to one that is not there, or is another user's.
func (c *recordChecker) checkParents() error {
	for _, d := range c.data {
		s := d.Session
		if s.ParentID == "" {
			continue
		}
		if _, ok := c.ids[s.ParentID]; ok {
			continue
		}
		found := false
		if c.opts.Parent != nil {
			var err error
			if found, err = c.opts.Parent(s.ParentID); err != nil {
				return fmt.Errorf("%s: look for the parent of session %s: %w", c.opts.Name, s.ID, err)
			}
		}
		if !found {
			what := "a fork"
			if s.Kind == loom.KindSubagent {
				what = "a sub-agent session"
			}
			return lineError(c.opts.Name, c.ids[s.ID], "session %s is %s of session %s, which is neither in the file nor in the store: import its parent first, or export both together (loom session export --all)",
				s.ID, what, s.ParentID)
		}
	}
	return nil
}

// lineError is a malformed record, located by its input's name and line.
func lineError(name string, line int, format string, args ...any) error {
	return loom.Errorf(loom.EINVALID, "%s:%d: %s", name, line, fmt.Sprintf(format, args...))
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

// recordChecker checks records in input order as they are read.
type recordChecker struct {
	opts ReadOptions
	cur  *loom.SessionData
	data []*loom.SessionData
	ids  map[string]int // session id → line
	msgs map[string]int // message id → line, in the current session
}

func (c *recordChecker) fail(line int, err error) error {
	return lineError(c.opts.Name, line, "%s", loom.ErrorMessage(err))
}

func (c *recordChecker) session(line int, s *loom.Session) error {
	if s != nil {
		s.Lock = nil
		if c.opts.UserID != "" {
			s.UserID = c.opts.UserID
		}
	}
	d := &loom.SessionData{Session: s}
	if err := d.Validate(); err != nil {
		return c.fail(line, err)
	}
	if prev, ok := c.ids[s.ID]; ok {
		return lineError(c.opts.Name, line, "session %s appears twice (first on line %d)", s.ID, prev)
	}
	c.ids[s.ID] = line
	// A fork holds its parent's messages themselves, ids included: an id
	// is unique within a session.
	clear(c.msgs)
	c.cur = d
	c.data = append(c.data, d)
	return nil
}

func (c *recordChecker) message(line int, m *loom.Message) error {
	if c.cur == nil {
		return lineError(c.opts.Name, line, "message before any session record")
	}
	c.cur.Messages = append(c.cur.Messages, m)
	if err := c.cur.ValidateMessage(len(c.cur.Messages) - 1); err != nil {
		return c.fail(line, err)
	}
	if prev, ok := c.msgs[m.ID]; ok {
		return lineError(c.opts.Name, line, "message id %s appears twice (first on line %d)", m.ID, prev)
	}
	c.msgs[m.ID] = line
	return nil
}

func readJSONL(c *recordChecker, content []byte) error {
	name := c.opts.Name
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
			return lineError(name, lineNo, "%s", jsonReason(err))
		}
		if dec.More() {
			return lineError(name, lineNo, "more than one JSON value on the line")
		}
		switch rec.Type {
		case "session":
			var s *loom.Session
			if err := strictUnmarshal(rec.Session, &s); err != nil {
				return lineError(name, lineNo, "session: %s", jsonReason(err))
			}
			if err := c.session(lineNo, s); err != nil {
				return err
			}
		case "message":
			var m *loom.Message
			if err := strictUnmarshal(rec.Message, &m); err != nil {
				return lineError(name, lineNo, "message: %s", jsonReason(err))
			}
			if err := c.message(lineNo, m); err != nil {
				return err
			}
		case "":
			return lineError(name, lineNo, "record has no type")
		default:
			return lineError(name, lineNo, "unknown record type %q", rec.Type)
		}
	}
	return nil
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
