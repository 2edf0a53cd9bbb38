package omp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/loomhq/loom/importer"
)

// piTypes are the entry types pi's reader knows. omp writes others
// (model_usage, service_tier_change, title slots) inside the entry tree:
// read as pi's "custom" entries they keep the tree linked, where an
// entry pi's reader passed over would cut the branch below it.
var piTypes = map[string]bool{"session": true, "message": true, "compaction": true, "branch_summary": true,
	"custom_message": true, "session_info": true, "model_change": true, "thinking_level_change": true, "label": true, "custom": true}

// retyped reads a session file as pi's reader is given it: each line
// whose type pi does not know is made a custom entry, and counted by its
// own type in counts.
type retyped struct {
	br     *bufio.Reader
	buf    []byte
	long   bool
	counts map[string]int
	// header says the session header has been read: omp writes a
	// title entry before it (18.2), which pi's reader would take for an
	// entry without a header.
	header bool
	titles int
	// n is the number of the line being read; notUTF8, the title lines
	// made blank that held bytes that are not UTF-8 (pi's reader, which
	// reports them of every other line, does not see them).
	n       int
	notUTF8 []int
}

func newRetyped(r io.Reader) *retyped {
	return &retyped{br: bufio.NewReaderSize(r, importer.MaxLine+1), counts: map[string]int{}}
}

func (r *retyped) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		line, err := r.br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			r.n++
		}
		switch {
		case err == bufio.ErrBufferFull:
			// Longer than a line may be: passed on whole, for the reader
			// to report.
			r.buf, r.long = append(r.buf[:0], line...), true
			continue
		case r.long:
			r.buf, r.long = append(r.buf[:0], line...), false
		default:
			r.buf = append(r.buf[:0], r.retype(line)...)
		}
		if len(r.buf) == 0 && err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// retype is line with its type made "custom" when pi does not know it.
func (r *retyped) retype(line []byte) []byte {
	var e struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type == "" {
		return line
	}
	if e.Type == "session" {
		r.header = true
	}
	if e.Type == "title" && !r.header {
		// A blank line in its place keeps the lines' numbers.
		r.titles++
		if !utf8.Valid(line) {
			r.notUTF8 = append(r.notUTF8, r.n)
		}
		return []byte("\n")
	}
	if piTypes[e.Type] {
		return line
	}
	out := bytes.Replace(line, []byte(`"type":`+strconv.Quote(e.Type)), []byte(`"type":"custom"`), 1)
	if len(out) != len(line) || !bytes.Equal(out, line) {
		r.counts[importer.TypeName(e.Type)]++
	}
	return out
}

// recount moves the lines retyped from pi's count of custom entries to
// their own types.
func (r *retyped) recount(res *importer.Result, path string) {
	for _, n := range r.notUTF8 {
		res.Problemf(path, n, importer.NotUTF8)
	}
	for range r.titles {
		res.Skip("title")
	}
	for t, n := range r.counts {
		if res.Skipped == nil {
			res.Skipped = map[string]int{}
		}
		res.Skipped["custom"] -= n
		if res.Skipped["custom"] <= 0 {
			delete(res.Skipped, "custom")
		}
		res.Skipped[t] += n
	}
}
