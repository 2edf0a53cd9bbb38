package session

import (
	"bytes"
	"encoding/json"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/share"
)

// hidePaths replaces, in the sessions of an export for people, what
// they say of this machine: each session's project root by <project>,
// home directories by ~, usernames by <user> (share.Hider), in the
// session's fields and in every text of its messages, tool inputs and
// outputs among them. data is the export's own copy, loaded for it.
func hidePaths(data []*loom.SessionData) {
	for _, d := range data {
		h := share.NewHider(d.Session.Project.Root)
		hide := func(s *string) { *s, _ = h.Hide(*s) }
		s := *d.Session
		if s.Project.Root != "" {
			s.Project.Root = "<project>"
		}
		for _, f := range []*string{&s.Cwd, &s.Title, &s.Description, &s.LastPrompt} {
			hide(f)
		}
		if s.Source != nil {
			src := *s.Source
			hide(&src.Path)
			s.Source = &src
		}
		d.Session = &s
		for _, m := range d.Messages {
			if m.Error != nil {
				hide(&m.Error.Message)
			}
			for i := range m.Parts {
				p := &m.Parts[i]
				for _, f := range []*string{&p.Text, &p.Title, &p.Error, &p.Filename, &p.URL} {
					hide(f)
				}
				if p.Source != nil {
					src := *p.Source
					hide(&src.Path)
					p.Source = &src
				}
				p.Input, p.Output, p.Metadata = hideJSON(h, p.Input), hideJSON(h, p.Output), hideJSON(h, p.Metadata)
			}
		}
	}
}

// hideJSON is hidePaths for a JSON value: the replacements hold no
// character JSON escapes, so the bytes are replaced as they are, and
// kept only if they are still JSON.
func hideJSON(h *share.Hider, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !bytes.ContainsAny(raw, "/\\") {
		return raw
	}
	s, n := h.Hide(string(raw))
	if n == 0 || !json.Valid([]byte(s)) {
		return raw
	}
	return json.RawMessage(s)
}
