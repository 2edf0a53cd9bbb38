package claudecode

import (
	"slices"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// titles are a file's title lines.
type titles struct {
	custom, ai []string
	summaries  []*summaryLine
	byNode     map[int]*summaryLine // by the node of its leafUuid, once read
	usedCustom bool
	usedAI     bool
}

type summaryLine struct {
	leaf, text string
	used       bool
}

// main is the title of the session along path: the latest custom title
// (from /rename), else the latest AI title, else the summary of the
// deepest message of path that has one, else def.
func (ti *titles) main(t *tree, path []int, def string) string {
	if n := len(ti.custom); n > 0 && ti.custom[n-1] != "" {
		ti.usedCustom = true
		return ti.custom[n-1]
	}
	if n := len(ti.ai); n > 0 && ti.ai[n-1] != "" {
		ti.usedAI = true
		return ti.ai[n-1]
	}
	if s := ti.summary(t, path); s != "" {
		return s
	}
	return def
}

// summary is the text of the summary line whose leafUuid is the deepest
// on path (the later line on a tie).
func (ti *titles) summary(t *tree, path []int) string {
	if len(ti.summaries) == 0 {
		return ""
	}
	if ti.byNode == nil {
		ti.byNode = map[int]*summaryLine{}
		for _, s := range ti.summaries {
			if i, ok := t.byUUID[s.leaf]; ok && s.text != "" {
				ti.byNode[t.node[i]] = s
			}
		}
	}
	for k := len(path) - 1; k >= 0; k-- {
		if s, ok := ti.byNode[path[k]]; ok {
			s.used = true
			return s.text
		}
	}
	return ""
}

// count counts the title lines that named no session.
func (ti *titles) count(res *importer.Result) {
	for i := range ti.custom {
		if !ti.usedCustom || i != len(ti.custom)-1 {
			res.Skip("custom-title")
		}
	}
	for i := range ti.ai {
		if !ti.usedAI || i != len(ti.ai)-1 {
			res.Skip("ai-title")
		}
	}
	for _, s := range ti.summaries {
		if !s.used {
			res.Skip("summary")
		}
	}
}

// compactionTitle is the title of a compaction agent's session: its
// prompt is the instructions Claude Code gives every compaction, which
// say nothing of the session.
func compactionTitle(parent string) string {
	if parent == "" {
		return "Compaction summary"
	}
	return "Compaction of " + parent
}

// titleSubagent gives a sub-agent session without a title, whose first
// prompt is raw JSON (a tool's input passed on as it is, which
// importer.FirstPrompt does not take for a title), a title made of the
// kind of agent that ran it (agentType, the call's subagent_type)
// rather than none.
func titleSubagent(s *importer.Session, agentType string) {
	if s.Kind != loom.KindSubagent || s.Title != "" || importer.FirstPrompt(s.Messages) != "" || !hasPrompt(s.Messages) {
		return
	}
	if agentType == "" {
		s.Title = "Sub-agent"
		return
	}
	s.Title = agentType + " sub-agent"
}

// hasPrompt reports whether msgs hold a user message with text.
func hasPrompt(msgs []*loom.Message) bool {
	return slices.ContainsFunc(msgs, func(m *loom.Message) bool {
		return m.Role == loom.RoleUser && m.Text() != ""
	})
}
