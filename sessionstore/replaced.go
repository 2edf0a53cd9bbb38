package sessionstore

import (
	"bytes"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// RedactedMarker starts every marker `loom secrets redact` writes in
// place of a secret (secrets.MarkerPrefix, which a test holds to it).
const RedactedMarker = "[REDACTED:"

var redactedMarker = []byte(RedactedMarker)

// ReplacesText reports whether part to, taking the place of part from,
// replaces some of its text by redaction markers: a field of to holds a
// marker and differs from from's. Applying such a part update marks the
// store to be scrubbed (ApplySteps.Replaced), so that the text it replaced
// does not stay readable in the store's files. An ordinary part update
// (a tool that finished) costs a search for the marker in its fields.
func ReplacesText(from, to loom.Part) bool {
	texts := [...][2]string{{from.Text, to.Text}, {from.Error, to.Error}, {from.Title, to.Title}, {from.URL, to.URL}}
	for _, t := range texts {
		if t[0] != t[1] && strings.Contains(t[1], RedactedMarker) {
			return true
		}
	}
	raws := [...][2][]byte{{from.Input, to.Input}, {from.Output, to.Output}, {from.Metadata, to.Metadata}}
	for _, r := range raws {
		if bytes.Contains(r[1], redactedMarker) && !bytes.Equal(r[0], r[1]) {
			return true
		}
	}
	if to.Source != nil && strings.Contains(to.Source.Text, RedactedMarker) {
		return from.Source == nil || from.Source.Text != to.Source.Text
	}
	return false
}

// changesToMarkers reports whether metadata change p sets a title or a
// description holding a redaction marker: a redaction's, as far as a
// change can tell.
func changesToMarkers(p *synclog.SessionChanged) bool {
	return p.Title != nil && strings.Contains(*p.Title, RedactedMarker) ||
		p.Description != nil && strings.Contains(*p.Description, RedactedMarker)
}
