package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/safefile"
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

// Limits on what Read reads, so that no input (a device, a sparse file,
// an endless pipe) can hold the import or fill memory. They are in
// docs/import.md.
const (
	// MaxSize bounds a whole input.
	MaxSize = 1 << 30
	// MaxDocument bounds an input in the json form, which is held whole
	// while it is read (the jsonl form is read a record at a time).
	MaxDocument = 256 << 20
	// MaxRecord bounds one line of the jsonl form: one session or
	// message.
	MaxRecord = 64 << 20
)

// The limits in force; tests lower them.
var (
	maxSize     int64 = MaxSize
	maxDocument int64 = MaxDocument
	maxRecord         = MaxRecord
)

// Read is ReadContext without a context.
func Read(r io.Reader, opts ReadOptions) ([]*loom.SessionData, error) {
	return ReadContext(context.Background(), r, opts)
}

// ReadContext reads a jsonl or json export, recognising the format from
// the content. Every record is checked as it is read, by the rules of
// every import (loom.SessionData.Validate), and fields loom does not know
// are refused, so that a bad record is reported as NAME:LINE: reason and
// nothing is returned. Errors about the content are coded EINVALID. The
// jsonl form is read a record at a time; input that does not start like
// an export is refused before more of it is read, and an input over the
// limits (MaxSize, MaxDocument, MaxRecord) as soon as it passes them.
// Reading stops with ctx's error when ctx ends.
func ReadContext(ctx context.Context, r io.Reader, opts ReadOptions) ([]*loom.SessionData, error) {
	in := &input{name: opts.Name, br: bufio.NewReaderSize(safefile.NewReader(ctx, r, maxSize), 64<<10)}
	if b, _ := in.br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		in.br.Discard(3)
	}
	// Blank lines before the first record count for line numbers only.
	lineNo := 1
	for {
		c, err := in.br.ReadByte()
		if err == io.EOF {
			return nil, loom.Errorf(loom.EINVALID, "%s: empty file: nothing to import", opts.Name)
		}
		if err != nil {
			return nil, in.err(err)
		}
		if c == '\n' {
			lineNo++
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' {
			continue
		}
		in.br.UnreadByte()
		if c != '{' {
			return nil, lineError(opts.Name, lineNo, "not a loom export: expected jsonl records or a json document starting with {")
		}
		break
	}
	c := &recordChecker{opts: opts, ids: map[string]int{}, msgs: map[string]int{}}
	first, whole, err := in.line(maxRecord)
	if err != nil {
		return nil, err
	}
	if whole && isJSONL(first) {
		err = readJSONL(c, in, lineNo, first)
	} else if !whole && bytes.HasPrefix(bytes.TrimSpace(first), []byte(`{"type"`)) {
		err = lineError(opts.Name, lineNo, "record longer than %s", safefile.Size(int64(maxRecord)))
	} else {
		var content []byte
		if content, err = in.document(lineNo, in.buf); err == nil {
			err = readDocument(c, content)
		}
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

// input is an export being read.
type input struct {
	name string
	br   *bufio.Reader
	buf  []byte
}

// err is a read error as Read returns it: the context's error as it is,
// a limit passed as a line that says so.
func (in *input) err(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, safefile.ErrTooLarge):
		return loom.Errorf(loom.EINVALID, "%s: too large: over the limit of %s an import reads", in.name, safefile.Size(maxSize))
	}
	return fmt.Errorf("read %s: %w", in.name, err)
}

// line reads the next line, without its newline. whole is false when
// the line is longer than max: what was read of it is returned (max
// bytes or more), the rest is left unread. At the end of the input it
// returns io.EOF and no line.
func (in *input) line(max int) (line []byte, whole bool, err error) {
	in.buf = in.buf[:0]
	for {
		chunk, err := in.br.ReadSlice('\n')
		in.buf = append(in.buf, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if len(in.buf) > max {
				return in.buf, false, nil
			}
			continue
		case err == io.EOF:
			if len(in.buf) == 0 {
				return nil, true, io.EOF
			}
		case err != nil:
			return nil, false, in.err(err)
		}
		if len(in.buf) > max+1 {
			return in.buf, false, nil
		}
		return bytes.TrimSuffix(in.buf, []byte("\n")), true, nil
	}
}

// document reads the rest of a json document whose first line (or what
// was read of it), newline included, is first, starting on line lineNo,
// within MaxDocument.
// The content returned keeps the document's line numbers.
func (in *input) document(lineNo int, first []byte) ([]byte, error) {
	content := append(bytes.Repeat([]byte("\n"), lineNo-1), first...)
	rest, err := io.ReadAll(io.LimitReader(in.br, maxDocument+1-int64(len(first))))
	if err != nil {
		return nil, in.err(err)
	}
	content = append(content, rest...)
	if int64(len(content)-(lineNo-1)) > maxDocument {
		return nil, loom.Errorf(loom.EINVALID, "%s: too large: a json export is read whole, up to %s; export as jsonl (the default) for more", in.name, safefile.Size(maxDocument))
	}
	return content, nil
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

// readJSONL reads the jsonl form a line at a time: first is line
// lineNo, the rest comes from in.
func readJSONL(c *recordChecker, in *input, lineNo int, first []byte) error {
	line := first
	for {
		if err := jsonlRecord(c, lineNo, line); err != nil {
			return err
		}
		next, whole, err := in.line(maxRecord)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		lineNo++
		if !whole {
			return lineError(c.opts.Name, lineNo, "record longer than %s", safefile.Size(int64(maxRecord)))
		}
		line = next
	}
}

// jsonlRecord reads one line of the jsonl form.
func jsonlRecord(c *recordChecker, lineNo int, line []byte) error {
	name := c.opts.Name
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
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
		return c.session(lineNo, s)
	case "message":
		var m *loom.Message
		if err := strictUnmarshal(rec.Message, &m); err != nil {
			return lineError(name, lineNo, "message: %s", jsonReason(err))
		}
		return c.message(lineNo, m)
	case "":
		return lineError(name, lineNo, "record has no type")
	default:
		return lineError(name, lineNo, "unknown record type %q", rec.Type)
	}
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
