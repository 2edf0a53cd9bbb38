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
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/safefile"
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

// readWholeOnce reads a .json recording once. A document caught in the
// middle of a write is read into nothing and returned as cutShort; late
// takes a whole document even when the file changed while it was read.
func (r *reader) readWholeOnce(file string, late bool) (*recording, *cutShort, error) {
	f, fi, err := importer.Open(file, importer.MaxFile)
	if err != nil {
		return nil, nil, fmt.Errorf("gemini: %w", err)
	}
	defer f.Close()
	if fi.Size() > importer.MaxDocument && !firstLineAlone(f) {
		return nil, nil, fmt.Errorf("gemini: %w (a one-document recording is read whole)", safefile.TooLarge(fi.Size(), importer.MaxDocument))
	}
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
	if doc.SessionID == "" && isNull(doc.Messages) {
		return nil, nil, fmt.Errorf("gemini: %s: not a Gemini CLI chat recording: no sessionId or messages", file)
	}
	r.applyHeader(rec, doc.header)
	rec.records++
	r.putList(rec, doc.Messages, 0, "msg-")
	rec, err = r.read(rec, fi)
	return rec, nil, err
}

// decodeDocument decodes a one-document recording. It returns nil and no
// error when the file is not one document but lines: it holds more than
// one JSON value, or its first line stands alone (jsonl: a JSONL
// recording named .json).
func (r *reader) decodeDocument(f *os.File) (doc *record, jsonl bool, err error) {
	dec := json.NewDecoder(bufio.NewReaderSize(importer.ContextReader{Ctx: r.ctx, R: f}, 64<<10))
	var d record
	if err = dec.Decode(&d); err == nil {
		if _, end := dec.Token(); end == io.EOF {
			return &d, false, nil
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
