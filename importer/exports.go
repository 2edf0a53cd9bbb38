package importer

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	pathpkg "path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// MaxElement bounds one element of a JSON array read by Elements (one
// conversation of a chat service's export): a longer one is a problem
// and skipped without being held whole.
const MaxElement = 64 << 20

// ErrNotArray is Elements' error for input that is not a JSON array.
var ErrNotArray = errors.New("not a JSON array")

// Elements calls fn with each element of the JSON array that r holds
// (its bytes, valid only until fn returns, and its 0-based index), one
// at a time, so that an array of any length is read in the memory of
// its largest element. An element longer than MaxElement is reported
// through tooLong and skipped. What follows the array is not read.
// Elements stops when ctx ends or fn returns an error, and returns
// that error; input that does not start as an array is ErrNotArray, and
// one that ends inside the array io.ErrUnexpectedEOF. It only splits
// the array: an element that is not valid JSON is fn's to find.
func Elements(ctx context.Context, r io.Reader, fn func(i int, elem []byte) error, tooLong func(i int)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if err := arrayStart(br); err != nil {
		return err
	}
	var buf []byte
	for i, n := 0, 0; ; n++ {
		c, err := skipSpace(br)
		if err != nil {
			return unexpected(err)
		}
		if c == ']' && i == 0 && n == 0 {
			return nil
		}
		if n > 0 {
			// After an element: a comma or the end.
			if c == ']' {
				return nil
			}
			if c != ',' {
				return fmt.Errorf("element %d: %q where a comma or ] belongs", i, c)
			}
			if c, err = skipSpace(br); err != nil {
				return unexpected(err)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var over bool
		if buf, over, err = element(ctx, br, c, buf[:0]); err != nil {
			return err
		}
		if over {
			tooLong(i)
		} else if err := fn(i, buf); err != nil {
			return err
		}
		i++
	}
}

// arrayStart reads what comes before an array's first element: a byte
// order mark, as some editors save JSON, white space and the [.
func arrayStart(br *bufio.Reader) error {
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	c, err := skipSpace(br)
	if err != nil {
		if err == io.EOF {
			return ErrNotArray
		}
		return err
	}
	if c != '[' {
		return ErrNotArray
	}
	return nil
}

// element reads into buf one element of a JSON array, c its first byte,
// up to its last: an object or array to its closing bracket, a scalar
// to before the comma, ] or space that follows it. over says it was
// longer than MaxElement (then buf holds none of it).
func element(ctx context.Context, br *bufio.Reader, c byte, buf []byte) (_ []byte, over bool, err error) {
	var js jsonNesting
	for size := 1; ; size++ {
		if !over {
			if len(buf) >= MaxElement {
				over, buf = true, buf[:0]
			} else {
				buf = append(buf, c)
			}
		}
		js.step(c)
		if js.depth <= 0 && !js.inString {
			if js.depth < 0 || c == '}' || c == ']' || c == '"' {
				return buf, over, nil
			}
			next, err := br.Peek(1)
			if err != nil {
				return buf, over, unexpected(err)
			}
			if next[0] == ',' || next[0] == ']' || isSpace(next[0]) {
				return buf, over, nil
			}
		}
		if c, err = br.ReadByte(); err != nil {
			return buf, over, unexpected(err)
		}
		if size%(4<<20) == 0 {
			if err := ctx.Err(); err != nil {
				return buf, over, err
			}
		}
	}
}

// jsonNesting follows the brackets and strings of JSON a byte at a
// time.
type jsonNesting struct {
	depth             int
	inString, escaped bool
}

func (js *jsonNesting) step(c byte) {
	switch {
	case js.inString:
		switch {
		case js.escaped:
			js.escaped = false
		case c == '\\':
			js.escaped = true
		case c == '"':
			js.inString = false
		}
	case c == '"':
		js.inString = true
	case c == '{' || c == '[':
		js.depth++
	case c == '}' || c == ']':
		js.depth--
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the next byte of br that is not JSON white space.
func skipSpace(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil || !isSpace(c) {
			return c, err
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// IsExportFile reports whether name is the name of a chat service's
// data export of conversations: conversations.json (ChatGPT's and
// Claude.ai's), or one of the numbered parts some exports split it into
// (conversations-000.json).
func IsExportFile(name string) bool {
	if name == "conversations.json" {
		return true
	}
	mid, ok := strings.CutPrefix(name, "conversations-")
	mid, ok2 := strings.CutSuffix(mid, ".json")
	return ok && ok2 && mid != "" && strings.Trim(mid, "0123456789") == ""
}

// ReadExport reads a chat service's data export at path, a JSON array
// of conversations (up to MaxFile bytes), one conversation at a time:
// fn turns element i into sessions of res, and reports what it could
// not read as problems of res. An error of fn stops the reading and is
// returned (the file is not the tool's). A conversation longer than
// MaxElement is a problem, and so is an export that ends early (what
// was read before is kept).
func ReadExport(ctx context.Context, tool, path string, fn func(i int, elem []byte, res *Result) error) (*Result, error) {
	f, fi, err := Open(path, MaxFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	defer f.Close()
	var magic [4]byte
	if n, _ := io.ReadFull(f, magic[:]); n == 4 && string(magic[:]) == "PK\x03\x04" {
		return readZippedExport(ctx, tool, path, f, fi.Size(), fn)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return ReadExportFrom(ctx, tool, path, f, fn)
}

// readZippedExport reads the export files (IsExportFile) of the zip
// archive the service sent, as it is: each expanded up to MaxFile.
func readZippedExport(ctx context.Context, tool, path string, f io.ReaderAt, size int64, fn func(i int, elem []byte, res *Result) error) (*Result, error) {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: not a readable zip archive: %w", tool, path, err)
	}
	res := &Result{}
	found := false
	for _, e := range zr.File {
		if e.FileInfo().IsDir() || !IsExportFile(pathpkg.Base(e.Name)) {
			continue
		}
		found = true
		name := path + "!" + e.Name
		rc, err := e.Open()
		if err != nil {
			res.Problemf(name, 0, err.Error())
			continue
		}
		part, err := ReadExportFrom(ctx, tool, name, &capped{r: rc, left: MaxFile}, fn)
		rc.Close()
		if err != nil {
			return nil, err
		}
		res.Sessions = append(res.Sessions, part.Sessions...)
		res.Problems = append(res.Problems, part.Problems...)
		for k, n := range part.Skipped {
			if res.Skipped == nil {
				res.Skipped = map[string]int{}
			}
			res.Skipped[k] += n
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: %s: a zip archive without conversations.json", tool, path)
	}
	return res, nil
}

// capped reads r, and fails once more than left bytes came out of it.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("expands to more than %d MB", MaxFile>>20)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// ReadExportFrom is ReadExport of the export that r holds, read from
// path.
func ReadExportFrom(ctx context.Context, tool, path string, r io.Reader, fn func(i int, elem []byte, res *Result) error) (*Result, error) {
	res := &Result{}
	err := Elements(ctx, r, func(i int, elem []byte) error {
		return fn(i, elem, res)
	}, func(i int) {
		res.Problemf(path, 0, fmt.Sprintf("conversation %d is longer than %d MB, skipped", i+1, MaxElement>>20))
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, ErrNotArray):
		return nil, fmt.Errorf("%s: %s: not a data export (conversations.json holds a JSON array)", tool, path)
	case errors.Is(err, io.ErrUnexpectedEOF):
		res.Problemf(path, 0, "the export ends early, in the middle of a conversation")
	default:
		var fe *exportError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s: %s: %s", tool, path, fe.msg)
		}
		res.Problemf(path, 0, "reading stopped: "+err.Error())
	}
	return res, nil
}

// exportError is an error of a ReadExport fn that refuses the file.
type exportError struct{ msg string }

func (e *exportError) Error() string { return e.msg }

// NotThisExport is what a ReadExport fn returns for a file that is
// another tool's export: why, in words fit for a problem.
func NotThisExport(why string) error { return &exportError{msg: why} }

// DecodeProblem is why conversation i of an export could not be
// decoded, in the export's terms rather than Go's.
func DecodeProblem(i int, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("conversation %d: its %s is a %s", i+1, te.Field, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("conversation %d is not valid JSON: %v", i+1, err)
	}
	return fmt.Sprintf("conversation %d: %v", i+1, err)
}

// Export is the Format of a chat service's data export: a
// conversations.json the user downloads, with no location of its own
// (Roots is none), found by name below the PATHs given, and read a
// conversation at a time (ReadExport).
type Export struct {
	// Name is the tool's name, Prov its provider.
	Name, Prov string
	// Conversation turns element i of the export at path into sessions
	// of res; an error refuses the file (NotThisExport).
	Conversation func(path string, i int, elem []byte, res *Result) error
}

// Tool returns e.Name.
func (e Export) Tool() string { return e.Name }

// Provider returns e.Prov.
func (e Export) Provider() string { return e.Prov }

// Roots is none: an export is a download, wherever the user put it.
func (Export) Roots(env func(string) string, home string) []string { return nil }

// Bundles lists every export file (IsExportFile) under root, or root
// itself when it is a file.
func (e Export) Bundles(ctx context.Context, root string) ([]Bundle, error) {
	return NamedFiles(ctx, e.Name, root, IsExportFile)
}

// Read reads one export file.
func (e Export) Read(ctx context.Context, b Bundle) (*Result, error) {
	if b.Name() == "" {
		return nil, errors.New(e.Name + ": empty bundle")
	}
	return ReadExport(ctx, e.Name, b.Name(), func(i int, elem []byte, res *Result) error {
		return e.Conversation(b.Name(), i, elem, res)
	})
}

// DecodeConversation decodes element i of the export at path into v,
// and reports whether it could; when it could not, it is a problem of
// res (DecodeProblem).
func DecodeConversation(path string, i int, elem []byte, v any, res *Result) bool {
	if err := json.Unmarshal(elem, v); err != nil {
		res.Problemf(path, 0, DecodeProblem(i, err))
		return false
	}
	if !utf8.Valid(elem) {
		// The conversation is kept, with U+FFFD where they stood.
		res.Problemf(path, 0, fmt.Sprintf("conversation %d: %s", i+1, NotUTF8))
	}
	return true
}

// AddPart appends p to m with an id stable across reads, <message
// id>/<n>, and returns its index.
func AddPart(m *loom.Message, p loom.Part) int {
	p.ID = m.ID + "/" + strconv.Itoa(len(m.Parts))
	m.Parts = append(m.Parts, p)
	return len(m.Parts) - 1
}

// AddConversation adds the session an export's conversation is to res,
// and reports whether it did: one without messages is counted as
// skipped (empty-conversation). Its updated time is never before its
// start.
func AddConversation(res *Result, s *Session) bool {
	if len(s.Messages) == 0 {
		res.Skip("empty-conversation")
		return false
	}
	if s.UpdatedAt.Before(s.CreatedAt) {
		s.UpdatedAt = s.CreatedAt
	}
	res.Sessions = append(res.Sessions, s)
	return true
}
