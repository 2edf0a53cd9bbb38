package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/loomhq/loom/importer"
)

var _ importer.Expander = Format{}

// docField marks the header line of a one-document recording written as
// lines (Expand): its messages are named by their place in the list, as
// a reading of the document names them.
const docField = "loomDocument"

// Compressed reports whether the main file name is a one-document
// recording (.json, indented as Gemini CLI writes it) bigger than a
// segment (importer.Expander): it is written as lines, one message a
// line, to a temporary file read a segment at a time, so that memory is
// bounded by a segment, not by the recording. A smaller one, and a
// document on one line (or JSONL named .json), is read whole.
func (Format) Compressed(name string) bool {
	if !strings.HasSuffix(name, ".json") || isSubagentFile(name) {
		return false
	}
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular() && fi.Size() > importer.SegmentSize() && !firstLineAlone(f)
}

// Expand opens the one-document recording name as the lines of a JSONL
// recording (importer.Expander): a header line of its fields other than
// its messages (with the project's root from its .project_root marker
// when it names none, since the lines are read away from its
// directory), then a line per message. It is read twice, a message at a
// time: once for its fields, wherever they are, and to know it whole,
// then for its messages. A document cut short, or one that changes
// while it is read, is an error, read again at the next import.
func (Format) Expand(ctx context.Context, name string) (io.ReadCloser, error) {
	f, fi, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	root := ""
	if marker := markerFor(name); marker != "" {
		root = readMarker(marker)
	}
	pr, pw := io.Pipe()
	go func() {
		defer f.Close()
		err := writeLines(ctx, f, root, pw)
		if err == nil {
			if now, serr := f.Stat(); serr == nil && changed(fi, now) {
				err = errors.New("it changed while it was read")
			}
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				err = cerr
			} else if caughtWriting(err) {
				err = describeCut(err)
			}
			err = fmt.Errorf("not a Gemini CLI chat recording: %w", err)
		}
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// writeLines writes the document read from f as lines to w.
func writeLines(ctx context.Context, f *os.File, root string, w io.Writer) error {
	lists := 0
	fields, err := walkDocument(ctx, f, func(dec *json.Decoder) error {
		lists++
		return eachMessage(dec, func(json.RawMessage) error { return nil })
	})
	if err != nil {
		return err
	}
	h, err := headerOf(fields)
	if err != nil {
		return err
	}
	if h.ProjectRoot == "" && root != "" {
		fields["projectRoot"], _ = json.Marshal(root)
	}
	fields[docField] = json.RawMessage("true")
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := writeLine(bw, fields); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// A list given twice is the one given last, as a reading of the
	// document takes it.
	var buf bytes.Buffer
	n := 0
	_, err = walkDocument(ctx, f, func(dec *json.Decoder) error {
		n++
		return eachMessage(dec, func(el json.RawMessage) error {
			if n < lists {
				return nil
			}
			buf.Reset()
			if err := json.Compact(&buf, el); err != nil {
				return err
			}
			buf.WriteByte('\n')
			_, err := bw.Write(buf.Bytes())
			return err
		})
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// walkDocument reads one JSON object from r, which must hold nothing
// more, and returns its fields but its messages, whose value messages
// reads.
func walkDocument(ctx context.Context, r io.Reader, messages func(*json.Decoder) error) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(importer.ContextReader{Ctx: ctx, R: r}, 64<<10))
	fields, err := walkObject(dec, messages)
	if err != nil {
		return nil, err
	}
	if _, end := dec.Token(); end != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return fields, nil
}

// walkObject reads one JSON object from dec and returns its fields but
// its messages, whose value messages reads. A field given twice holds
// what it was given last, as encoding/json decodes it.
func walkObject(dec *json.Decoder, messages func(*json.Decoder) error) (map[string]json.RawMessage, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("the document is not a JSON object")
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, unexpectedEnd(err)
		}
		name, _ := tok.(string)
		if strings.EqualFold(name, "messages") {
			if err := messages(dec); err != nil {
				return nil, unexpectedEnd(err)
			}
			continue
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, unexpectedEnd(err)
		}
		fields[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, unexpectedEnd(err)
	}
	return fields, nil
}

// headerOf is the header a document's fields (walkObject) give.
func headerOf(fields map[string]json.RawMessage) (header, error) {
	var h header
	if len(fields) == 0 {
		return h, nil
	}
	obj, err := json.Marshal(fields)
	if err != nil {
		return h, err
	}
	err = json.Unmarshal(obj, &h)
	return h, err
}

// eachMessage gives fn each element of a document's list of messages;
// a value that is no list gives none.
func eachMessage(dec *json.Decoder, fn func(json.RawMessage) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		return skipValue(dec, tok)
	}
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return err
		}
		if err := fn(el); err != nil {
			return err
		}
	}
	_, err = dec.Token() // ]
	return err
}

// writeLine writes v as one line of JSON.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
