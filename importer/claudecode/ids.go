package claudecode

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
)

// sessionID is the session's id: the file's name when it is a UUID (a
// resumed session's file may hold lines of the session it resumed), else
// the sessionId of its latest message line.
func sessionID(path string, recs []*record) string {
	stem := cleanID(strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	if isUUID(stem) {
		return stem
	}
	if id := linesSessionID(recs); id != "" {
		return id
	}
	return stem
}

// linesSessionID is the sessionId of the latest message line that names
// one (Claude Code's session ids are UUIDs; anything else is ignored).
func linesSessionID(recs []*record) string {
	for i := len(recs) - 1; i >= 0; i-- {
		if r := recs[i]; (r.Type == "user" || r.Type == "assistant") && isUUID(r.SessionID) {
			return r.SessionID
		}
	}
	return ""
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// uniqueIDs makes the message ids of a session, and the part ids, unique:
// ids come from the file's uuids, which a damaged or hostile file may
// repeat in ways the reader's derived ids collide with.
func uniqueIDs(msgs []*loom.Message) {
	msgIDs, partIDs := idSet{}, idSet{}
	for _, m := range msgs {
		m.ID = msgIDs.unique(m.ID)
		for i := range m.Parts {
			m.Parts[i].ID = partIDs.unique(m.Parts[i].ID)
		}
	}
}

// idSet hands out unique ids: an id taken already gets a suffix #2, #3 …
type idSet map[string]int

func (s idSet) unique(id string) string {
	n, taken := s[id]
	if !taken {
		s[id] = 1
		return id
	}
	for k := max(n, 1) + 1; ; k++ {
		c := id + "#" + strconv.Itoa(k)
		if _, t := s[c]; !t {
			s[id], s[c] = k, 1
			return c
		}
	}
}
