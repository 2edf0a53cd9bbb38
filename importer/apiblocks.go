package importer

import (
	"cmp"
	"strings"

	"github.com/loomhq/loom"
)

// APIBlock is a content block in the form of Anthropic's Messages API,
// which several agents keep their messages in: the fields of its text,
// thinking, redacted_thinking and image types.
type APIBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Source    struct {
		MediaType string `json:"media_type"`
		// MediaTypeCamel is the same, as some agents spell it.
		MediaTypeCamel string `json:"mediaType"`
		Data           string `json:"data"`
	} `json:"source"`
}

// AddContent adds to m the part of a text, thinking, redacted_thinking or
// image block, with id id, and reports whether b was one; an empty text
// or thinking block is counted as skipped in res instead.
func (b APIBlock) AddContent(res *Result, m *loom.Message, id string) bool {
	p, skip, ok := b.ContentPart(id)
	switch {
	case !ok:
		return false
	case skip != "":
		res.Skip(skip)
	default:
		m.Parts = append(m.Parts, p)
	}
	return true
}

// ContentPart maps a text, thinking, redacted_thinking or image block
// to the part with id id. ok is false for another type; an empty text or
// thinking block gives no part but the name of what to count as skipped.
func (b APIBlock) ContentPart(id string) (p loom.Part, skip string, ok bool) {
	switch b.Type {
	case "text":
		if strings.TrimSpace(b.Text) == "" {
			return p, "empty-text", true
		}
		return loom.Part{ID: id, Type: loom.PartText, Text: b.Text}, "", true
	case "thinking":
		if b.Thinking == "" {
			return p, "empty-reasoning", true
		}
		p = loom.Part{ID: id, Type: loom.PartReasoning, Text: b.Thinking}
		if b.Signature != "" {
			p.Metadata = Meta("signature", b.Signature)
		}
		return p, "", true
	case "redacted_thinking":
		return loom.Part{ID: id, Type: loom.PartReasoning, Metadata: Meta("redacted", "true")}, "", true
	case "image":
		mime := cmp.Or(b.Source.MediaType, b.Source.MediaTypeCamel)
		p = loom.Part{ID: id, Type: loom.PartFile, Mime: mime}
		if b.Source.Data != "" {
			p.URL = "data:" + cmp.Or(mime, "application/octet-stream") + ";base64," + b.Source.Data
		}
		return p, "", true
	}
	return p, "", false
}
