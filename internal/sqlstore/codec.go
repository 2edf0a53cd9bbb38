package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"github.com/loomhq/loom"
)

// How engines store what a message holds. Parts are a JSON array and a
// message's error a JSON object; both engines write and read them alike,
// so that an export from either is the same bytes. The encoder of parts
// is goccy/go-json, which writes what encoding/json writes at a fraction
// of the cost of reading and writing the hot path's parts.

// partStart begins each part EncodeParts writes: ID is Part's first
// field.
var partStart = []byte(`{"id":`)

// EncodeParts returns how m's parts are stored, after giving each part
// without an id a new one: a JSON array, "[]" when m has none.
func EncodeParts(m *loom.Message) (string, error) {
	if m.Parts == nil {
		return "[]", nil
	}
	m.AssignPartIDs()
	b, err := gojson.Marshal(m.Parts)
	if err != nil {
		return "", fmt.Errorf("encode parts of message %d: %w", m.Seq, err)
	}
	return string(b), nil
}

// EncodeBody returns how an engine that keeps a message's search text
// in a column of its own stores m: its parts as EncodeParts writes them,
// and SearchText. When the text is all the message says (its one part
// is text or reasoning), the parts leave it out, so that it is stored
// once, and JoinText puts it back.
func EncodeBody(m *loom.Message) (parts, text string, err error) {
	text = m.SearchText()
	if !textOnly(m.Parts) {
		parts, err = EncodeParts(m)
		return parts, text, err
	}
	m.AssignPartIDs()
	p := m.Parts[0]
	p.Text = ""
	parts, err = EncodeParts(&loom.Message{Seq: m.Seq, Parts: []loom.Part{p}})
	if err == nil && !strings.HasSuffix(parts, TextOnlyEnds[0]) && !strings.HasSuffix(parts, TextOnlyEnds[1]) {
		// The part says more than its text (metadata, times): a read
		// gives the text back only to parts that end as TextOnlyEnds, so
		// this one keeps its text.
		parts, err = EncodeParts(m)
	}
	return parts, text, err
}

// JoinText gives parts read from a body that EncodeBody wrote their text
// back: text is the body's search text.
func JoinText(parts []loom.Part, text []byte) {
	if len(text) > 0 && textOnly(parts) && parts[0].Text == "" {
		parts[0].Text = string(text)
	}
}

// textOnly says whether parts are one part of text or reasoning, whose
// text is then all of a message's search text.
func textOnly(parts []loom.Part) bool {
	return len(parts) == 1 && (parts[0].Type == loom.PartText || parts[0].Type == loom.PartReasoning)
}

// DecodeParts reads parts as EncodeParts stored them. The slice is
// made to the number of parts, counted by the id each stored part
// starts with (a nested object with an id only makes it longer): left
// to itself the decoder makes room for at least four parts, most
// messages have one, and a part is some 300 bytes.
func DecodeParts(b []byte) ([]loom.Part, error) {
	if p, ok := decodeTextOnly(b); ok {
		return p, nil
	}
	var parts []loom.Part
	if n := bytes.Count(b, partStart); n > 0 {
		parts = make([]loom.Part, 0, n)
	}
	if err := gojson.Unmarshal(b, &parts); err != nil {
		return nil, fmt.Errorf("decode parts: %w", err)
	}
	return parts, nil
}

// How EncodeBody stores the part of a text-only message: its id and its
// type, the text left out. TextOnlyEnds are how such parts end, text
// then reasoning: a message whose parts end otherwise has its text in
// them.
var (
	textOnlyStart = []byte(`[{"id":"`)
	TextOnlyEnds  = [2]string{`","type":"text"}]`, `","type":"reasoning"}]`}
)

// decodeTextOnly reads parts that are one text or reasoning part with
// nothing but an id, as EncodeBody stores most messages, without the
// JSON decoder: it is most of what reading such a message costs. Any
// other bytes, an id with an escape among them, are not for it.
func decodeTextOnly(b []byte) ([]loom.Part, bool) {
	rest, ok := bytes.CutPrefix(b, textOnlyStart)
	if !ok {
		return nil, false
	}
	typ := loom.PartText
	id, ok := bytes.CutSuffix(rest, []byte(TextOnlyEnds[0]))
	if !ok {
		if id, ok = bytes.CutSuffix(rest, []byte(TextOnlyEnds[1])); !ok {
			return nil, false
		}
		typ = loom.PartReasoning
	}
	for _, c := range id {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return []loom.Part{{ID: string(id), Type: typ}}, true
}

// EncodeError returns how a message's error is stored: its JSON, or nil
// (NULL) when there is none.
func EncodeError(e *loom.MessageError) any {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e)
	return string(b)
}

// DecodeError reads an error as EncodeError stored it: nil for NULL, and
// text that is not JSON (written by hand) as the error's message.
func DecodeError(b []byte, valid bool) *loom.MessageError {
	if !valid {
		return nil
	}
	e := &loom.MessageError{}
	if json.Unmarshal(b, e) != nil {
		e.Message = string(b)
	}
	return e
}

// Body is a message's parts and search text as an engine stores them.
type Body struct {
	Parts, Text string
}
