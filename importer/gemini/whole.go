package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom/importer"
)

// settle bounds how long a one-document recording caught in the middle
// of a write is waited for. Gemini CLI writes that file whole on every
// change, by truncating it and writing it again (not by renaming a new
// file over it), so a read can find it empty, its JSON cut short, or
// changing while it is read. Such a read waits for the file to change
// and reads it again, as long as the file changed less than settle ago;
// a file that stayed cut short that long is what it is, an error.
const settle = 3 * time.Second

// Polling for a change starts at pollFirst and doubles up to pollMax.
const (
	pollFirst = time.Millisecond
	pollMax   = 25 * time.Millisecond
)

// testHookWait, when set, is called each time a read waits for a
// one-document recording to change.
var testHookWait func(file string)

// cutShort is a read of a one-document recording that found it as
// Gemini CLI leaves it only while it writes it.
type cutShort struct {
	// err says what is wrong with the document; nil when it was whole
	// but the file changed while it was read.
	err error
	// fi is the file as the read left it, and changed says it is not as
	// the read found it: the read went across a write.
	fi      fs.FileInfo
	changed bool
}

// readWhole reads a one-document recording (or a JSONL recording named
// .json), and reads it again while it is caught in the middle of a write
// (see settle): at once after a first read that was cut short, since a
// read across a rewrite may leave the file's size and time as they
// were, and at once after a read across a write; else when the file
// changes.
func (r *reader) readWhole(file string) (*recording, error) {
	var deadline time.Time
	for tries := 0; ; tries++ {
		late := tries > 0 && !time.Now().Before(deadline)
		rec, cut, err := r.readWholeOnce(file, late)
		if cut == nil {
			return rec, err
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = cut.fi.ModTime()
			if deadline.After(now) {
				deadline = now
			}
			deadline = deadline.Add(settle)
		}
		if !now.Before(deadline) {
			if cut.err == nil {
				continue // whole, if read across a write: taken as it is
			}
			reason := cut.err.Error()
			if tries > 0 {
				reason += ", still so after " + settle.String()
			}
			return nil, fmt.Errorf("gemini: %s: not a Gemini CLI chat recording: %s", file, reason)
		}
		if tries == 0 || cut.changed {
			continue
		}
		if testHookWait != nil {
			testHookWait(file)
		}
		if err := waitChange(r.ctx, file, cut.fi, deadline); err != nil {
			return nil, fmt.Errorf("gemini: %s: %w", file, err)
		}
	}
}

// readWholeOnce reads a .json recording once, a message at a time (see
// decodeDocument). A document caught in the middle of a write is read
// into nothing and returned as cutShort; late takes a whole document even
// when the file changed while it was read.
func (r *reader) readWholeOnce(file string, late bool) (*recording, *cutShort, error) {
	f, fi, err := importer.Open(file, importer.MaxFile)
	if err != nil {
		return nil, nil, fmt.Errorf("gemini: %w", err)
	}
	defer f.Close()
	doc, jsonl, err := r.decodeDocument(f)
	if cerr := r.ctx.Err(); cerr != nil {
		return nil, nil, fmt.Errorf("gemini: %s: %w", file, cerr)
	}
	after := fi
	if now, serr := f.Stat(); serr == nil {
		after = now
	}
	cut := &cutShort{fi: after, changed: changed(fi, after)}
	switch {
	case err != nil && !caughtWriting(err):
		return nil, nil, fmt.Errorf("gemini: %s: not a Gemini CLI chat recording: %w", file, err)
	case err != nil:
		cut.err = describeCut(err)
		return nil, cut, nil
	case cut.changed && !late && !jsonl:
		// A JSONL recording grows by lines appended: what was read of
		// it stays as it was.
		return nil, cut, nil
	}
	rec := newRecording(file, fi)
	if doc == nil {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, nil, fmt.Errorf("gemini: %w", err)
		}
		if err := r.readLines(rec, f); err != nil {
			return nil, nil, err
		}
		rec, err = r.read(rec, fi)
		return rec, nil, err
	}
	if doc.hdr.SessionID == "" && !doc.listed {
		return nil, nil, fmt.Errorf("gemini: %s: not a Gemini CLI chat recording: no sessionId or messages", file)
	}
	r.applyHeader(rec, doc.hdr)
	rec.records++
	for _, p := range doc.problems {
		r.problem(file, 0, p)
	}
	if doc.notList {
		r.problem(file, 0, "messages is not a list")
	}
	if doc.listed {
		rec.chain.snapshot(doc.ids, doc.msgs)
	}
	rec, err = r.read(rec, fi)
	return rec, nil, err
}

// document is a one-document recording as decodeDocument read it.
type document struct {
	hdr header
	// listed says the document holds a list of messages: ids and msgs,
	// in order; notList says its messages are something else.
	listed, notList bool
	ids             []string
	msgs            []*message
	// problems are the messages of the list that could not be read.
	problems []string
}

// decodeDocument decodes a one-document recording a message at a time,
// so that what it holds beyond the messages read is one message of the
// file, never the whole document: a recording of any size up to
// importer.MaxFile is read in the memory its messages take. It returns
// nil and no error when the file is not one document but lines: it holds
// more than one JSON value, or its first line stands alone (jsonl: a
// JSONL recording named .json).
func (r *reader) decodeDocument(f *os.File) (doc *document, jsonl bool, err error) {
	dec := json.NewDecoder(bufio.NewReaderSize(importer.ContextReader{Ctx: r.ctx, R: f}, 64<<10))
	if doc, err = r.streamDocument(dec); err == nil {
		if _, end := dec.Token(); end == io.EOF {
			return doc, false, nil
		}
	}
	if cerr := r.ctx.Err(); cerr != nil {
		return nil, false, cerr
	}
	if firstLineAlone(f) {
		return nil, true, nil
	}
	return nil, false, err
}

// streamDocument reads one JSON object from dec: the fields of its
// header whole, the elements of its messages list one at a time. A field
// given twice holds what it was given last, as encoding/json decodes it.
func (r *reader) streamDocument(dec *json.Decoder) (*document, error) {
	doc := &document{}
	fields, err := walkObject(dec, func(dec *json.Decoder) error { return r.streamMessages(dec, doc) })
	if err != nil {
		return nil, err
	}
	if doc.hdr, err = headerOf(fields); err != nil {
		return nil, err
	}
	return doc, nil
}

// streamMessages reads the value of a document's messages field into
// doc, a message at a time. It stops when the context ends, leaving the
// list cut short: Read then returns the context's error.
func (r *reader) streamMessages(dec *json.Decoder, doc *document) error {
	doc.listed, doc.notList = false, false
	doc.ids, doc.msgs, doc.problems = nil, nil, nil
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case nil:
		return nil
	case json.Delim('['):
	default:
		doc.notList = true
		return skipValue(dec, tok)
	}
	doc.listed = true
	for i := 0; dec.More(); i++ {
		if i%1024 == 1023 && r.ctx.Err() != nil {
			return r.ctx.Err()
		}
		m := &message{}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if !utf8.Valid(raw) {
			// Kept, with U+FFFD where they stood.
			doc.problems = append(doc.problems, "message "+strconv.Itoa(i)+" of the list: "+importer.NotUTF8)
		}
		if err := json.Unmarshal(raw, m); err != nil {
			var typ *json.UnmarshalTypeError
			if !errors.As(err, &typ) {
				return err
			}
			// The element was read whole; only its shape is wrong.
			doc.problems = append(doc.problems, "message "+strconv.Itoa(i)+" of the list: "+err.Error())
			continue
		}
		m.pos = "msg-" + strconv.Itoa(i)
		m.modelType()
		doc.ids = append(doc.ids, messageKey(m))
		doc.msgs = append(doc.msgs, m)
	}
	_, err = dec.Token() // ]
	return err
}

// skipValue reads the rest of a value whose first token was tok.
func skipValue(dec *json.Decoder, tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// unexpectedEnd is err, from a read inside a document, with the end of
// the file there said to be unexpected: the document was cut short.
func unexpectedEnd(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// firstLineAlone reports whether f's first line is a JSON value of its
// own, as a JSONL recording's first line is; a one-document recording's
// is not, but for a document all on one line. f is read from its start
// and left there.
func firstLineAlone(f *os.File) bool {
	defer f.Seek(0, io.SeekStart)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false
	}
	first, _ := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	return json.Valid(bytes.TrimSpace(first))
}

// caughtWriting reports whether err, from decoding a document, is what
// a read of a file in the middle of its writing may meet: no JSON yet,
// JSON that ends early, or JSON broken where one write's bytes meet
// another's.
func caughtWriting(err error) bool {
	var syntax *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syntax)
}

// describeCut says what a decoding error that caughtWriting accepts
// found.
func describeCut(err error) error {
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("it is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("its JSON ends early (unexpected EOF)")
	}
	return err
}

// changed reports whether b is not the file a was: another size, another
// modification time, or another file.
func changed(a, b fs.FileInfo) bool {
	return a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) || !os.SameFile(a, b)
}

// waitChange waits until the file at path is no longer as fi says (or is
// gone), or deadline passes; it returns early with ctx's error when ctx
// ends.
func waitChange(ctx context.Context, path string, fi fs.FileInfo, deadline time.Time) error {
	for wait := pollFirst; ; wait = min(2*wait, pollMax) {
		if now, err := os.Stat(path); err != nil || changed(fi, now) {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
