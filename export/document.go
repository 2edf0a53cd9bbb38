package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/loomhq/loom"
)

// documentParser walks a json export token by token, so that each
// session and message is checked with the line it starts on.
type documentParser struct {
	name    string
	content []byte
	dec     *json.Decoder
}

// nextLine returns the line where the next value starts.
func (p *documentParser) nextLine() int {
	off := int(p.dec.InputOffset())
	for off < len(p.content) && strings.IndexByte(" \t\r\n,:", p.content[off]) >= 0 {
		off++
	}
	return lineAt(p.content, off)
}

func (p *documentParser) fail(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	line := p.nextLine()
	switch {
	case errors.As(err, &se):
		line = lineAt(p.content, int(se.Offset))
	case errors.As(err, &te):
		line = lineAt(p.content, int(te.Offset))
	}
	return lineError(p.name, line, "%s", jsonReason(err))
}

func (p *documentParser) delim(want json.Delim) error {
	line := p.nextLine()
	tok, err := p.dec.Token()
	if err != nil {
		return p.fail(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return lineError(p.name, line, "expected %q", string(want))
	}
	return nil
}

// object calls field for each key of the object that comes next.
func (p *documentParser) object(field func(key string, line int) error) error {
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
func (p *documentParser) array(elem func(line int) error) error {
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

// readDocument reads a json Document.
func readDocument(c *recordChecker, content []byte) error {
	name := c.opts.Name
	p := &documentParser{name: name, content: content, dec: json.NewDecoder(bytes.NewReader(content))}
	p.dec.DisallowUnknownFields()
	version := 0
	err := p.object(func(key string, line int) error {
		switch key {
		case "version":
			if err := p.dec.Decode(&version); err != nil {
				return p.fail(err)
			}
			if version != Version {
				return lineError(name, line, "unsupported export version %d (this loom reads version %d)", version, Version)
			}
			return nil
		case "sessions":
			return p.array(func(int) error { return readDocumentSession(p, c) })
		default:
			return lineError(name, line, "unknown field %q", key)
		}
	})
	if err != nil {
		return err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return lineError(name, p.nextLine(), "unexpected data after the document")
	}
	if version == 0 {
		return loom.Errorf(loom.EINVALID, "%s: not a loom export: no version", name)
	}
	return nil
}

// readDocumentSession reads one element of a Document's sessions.
func readDocumentSession(p *documentParser, c *recordChecker) error {
	seen := false
	return p.object(func(key string, line int) error {
		switch key {
		case "session":
			var s *loom.Session
			if err := p.dec.Decode(&s); err != nil {
				return p.fail(err)
			}
			seen = true
			return c.session(line, s)
		case "messages":
			if !seen {
				return lineError(p.name, line, "messages must follow their session")
			}
			return p.array(func(mline int) error {
				var m *loom.Message
				if err := p.dec.Decode(&m); err != nil {
					return p.fail(err)
				}
				return c.message(mline, m)
			})
		default:
			return lineError(p.name, line, "unknown field %q", key)
		}
	})
}
