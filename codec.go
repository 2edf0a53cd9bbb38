package loom

import (
	"bytes"
	"encoding/json"
	"fmt"

	gojson "github.com/goccy/go-json"
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
func EncodeParts(m *Message) (string, error) {
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

// DecodeParts reads parts as EncodeParts stored them. The slice is
// made to the number of parts, counted by the id each stored part
// starts with (a nested object with an id only makes it longer): left
// to itself the decoder makes room for at least four parts, most
// messages have one, and a part is some 300 bytes.
func DecodeParts(b []byte) ([]Part, error) {
	var parts []Part
	if n := bytes.Count(b, partStart); n > 0 {
		parts = make([]Part, 0, n)
	}
	if err := gojson.Unmarshal(b, &parts); err != nil {
		return nil, fmt.Errorf("decode parts: %w", err)
	}
	return parts, nil
}

// EncodeError returns how a message's error is stored: its JSON, or nil
// (NULL) when there is none.
func EncodeError(e *MessageError) any {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e)
	return string(b)
}

// DecodeError reads an error as EncodeError stored it: nil for NULL, and
// text that is not JSON (written by hand) as the error's message.
func DecodeError(b []byte, valid bool) *MessageError {
	if !valid {
		return nil
	}
	e := &MessageError{}
	if json.Unmarshal(b, e) != nil {
		e.Message = string(b)
	}
	return e
}
