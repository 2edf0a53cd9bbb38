package gemini

import (
	"strconv"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// session is a built session with what its sub-agents inherit.
type session struct {
	sourceID string
	cwd      string
	// s is the session as built.
	s *importer.Session
	// runs maps the id of a sub-agent session to the call that ran it.
	runs map[string]agentRun
}

// build turns a main recording into its session and the branches its
// rewinds abandoned. It returns nil when the recording holds no message.
func (r *reader) build(rec *recording, projectRoot string) *session {
	return r.buildAs(rec, rec.sessionID, loom.KindMain, "", projectRoot)
}

func (r *reader) buildAs(rec *recording, sourceID, kind, parentID, cwd string) *session {
	sourceID, parentID = oneLine(sourceID), oneLine(parentID)
	if d := rec.hdr.Directories; len(d) > 0 && d[0] != "" {
		cwd = d[0]
	} else if rec.hdr.ProjectRoot != "" {
		cwd = rec.hdr.ProjectRoot
	}
	cwd = oneLine(cwd)
	c := r.converter(rec, sourceID)
	msgs := c.convert(rec.chain.nodes(), 0)
	if len(msgs) == 0 && len(rec.branches) == 0 {
		r.skip("empty-session")
		return nil
	}
	if kind == loom.KindMain && !resumable(msgs) && len(rec.branches) == 0 && (rec.path != r.segPath || r.seg.From == 0) {
		// Gemini CLI starts a recording for a resumed session in a
		// file of its own, which gets its session context and nothing
		// more; it lists no such file, and deletes it. Its session is
		// another file's. (A segment of a big recording other than its
		// first may hold notices only; its session is the file's.)
		r.skip("empty-session")
		return nil
	}
	s := &importer.Session{
		SourceID:  sourceID,
		Kind:      kind,
		Cwd:       cwd,
		Path:      rec.path,
		CreatedAt: importer.RFC3339Time(rec.hdr.StartTime),
		UpdatedAt: importer.RFC3339Time(rec.hdr.LastUpdated),
		Messages:  msgs,
	}
	if kind == loom.KindSubagent {
		s.ParentSourceID = parentID
	}
	if kind == loom.KindMain && rec.hdr.LoomHandoff != nil && rec.hdr.LoomHandoff.SessionID != "" {
		s.Origin = rec.hdr.LoomHandoff
	}
	if sum := rec.hdr.Summary; sum != nil && !importer.IsJSONText(*sum) {
		// A summary that is JSON (a sub-agent's, {"response": …}) is
		// the agent's output, not words to title it with.
		s.Title = *sum
	}
	fill(s)
	r.res.Sessions = append(r.res.Sessions, s)
	built := &session{sourceID: sourceID, cwd: cwd, s: s, runs: map[string]agentRun{}}
	built.noteAgents(s)
	for _, b := range rec.branches {
		if r.ctx.Err() != nil {
			break
		}
		c := r.converter(rec, sourceID)
		nodes := append(append(make([]*node, 0, len(b.prefix)+len(b.removed)), b.prefix...), b.removed...)
		msgs := c.convert(nodes, len(b.prefix))
		shared := c.from[len(b.prefix)]
		if shared == len(msgs) {
			continue
		}
		f := &importer.Session{
			SourceID:       sourceID + "@" + c.id(b.removed[0].msg),
			Kind:           loom.KindFork,
			ParentSourceID: sourceID,
			ForkTurn:       forkTurn(msgs, shared),
			Cwd:            cwd,
			Path:           rec.path,
			CreatedAt:      s.CreatedAt,
			Messages:       msgs,
		}
		fill(f)
		r.res.Sessions = append(r.res.Sessions, f)
		built.noteAgents(f)
	}
	return built
}

// resumable reports whether msgs hold what Gemini CLI resumes: a prompt,
// a reply or a summary, more than context and notices.
func resumable(msgs []*loom.Message) bool {
	for _, m := range msgs {
		if m.Role != loom.RoleSystem {
			return true
		}
	}
	return false
}

// forkTurn is the last turn a branch shares whole with its parent: the
// user messages before the first removed one, less the last turn when
// the branch leaves in the middle of it.
func forkTurn(msgs []*loom.Message, shared int) int {
	users := 0
	for _, m := range msgs[:shared] {
		if m.Role == loom.RoleUser {
			users++
		}
	}
	if msgs[shared].Role != loom.RoleUser && users > 0 {
		users--
	}
	return users
}

// fill sets a session's model, provider and missing times from its
// messages.
func fill(s *importer.Session) {
	for _, m := range s.Messages {
		if m.Role == loom.RoleAssistant {
			if m.Model != "" {
				s.Model = m.Model
			}
			s.Provider = Provider
		}
	}
	if n := len(s.Messages); n > 0 {
		if s.CreatedAt.IsZero() {
			s.CreatedAt = s.Messages[0].CreatedAt
		}
		if last := s.Messages[n-1].CreatedAt; s.UpdatedAt.IsZero() || s.Kind == loom.KindFork {
			s.UpdatedAt = last
		}
	}
}

// dedupe makes source ids unique within the result, and message ids
// unique within each session.
func (r *reader) dedupe() {
	seen := map[string]bool{}
	for _, s := range r.res.Sessions {
		s.SourceID = unique(seen, oneLine(s.SourceID))
		ids := map[string]bool{}
		for _, m := range s.Messages {
			m.ID = unique(ids, m.ID)
		}
	}
}

func unique(seen map[string]bool, id string) string {
	u := id
	for n := 2; seen[u]; n++ {
		u = id + "~" + strconv.Itoa(n)
	}
	seen[u] = true
	return u
}
