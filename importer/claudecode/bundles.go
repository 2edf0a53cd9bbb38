package claudecode

import (
	"path/filepath"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// subagent is a sub-agent's transcript file of a session bundle.
type subagent struct {
	f        *file
	t        *tree
	b        *builder
	sourceID string
	// inline says the transcript is what the session file repeats of
	// it (inlineAgents).
	inline bool
}

func (rd *reader) sessionBundle(paths []string) error {
	f, err := rd.load(paths[0], true)
	if err != nil {
		return err
	}
	sid := sessionID(paths[0], f.nodes)
	mainTree := newTree(f.nodes, true, rd.res)
	sideTree := newTree(f.side, false, rd.res)
	mb, sb := newBuilder(mainTree, rd.res), newBuilder(sideTree, rd.res)

	var subs []*subagent
	for _, p := range paths[1:] {
		sf, err := rd.load(p, false)
		if err != nil {
			rd.res.Problemf(p, 0, err.Error())
			continue
		}
		t := newTree(sf.nodes, false, rd.res)
		stem := cleanID(strings.TrimSuffix(filepath.Base(p), ".jsonl"))
		subs = append(subs, &subagent{f: sf, t: t, b: newBuilder(t, rd.res), sourceID: sid + "/" + stem})
	}

	// A sub-agent whose file is a bundle of its own (importer.BigAlone)
	// is read from it, not from what this file repeats of it.
	big := bigAgentStems(paths[0])
	have := map[string]bool{}
	for stem := range big {
		have[sid+"/"+stem] = true
	}
	for _, sa := range subs {
		have[sa.sourceID] = true
	}
	inline := rd.inlineAgents(sid, paths[0], append(f.nodes[:len(f.nodes):len(f.nodes)], f.side...), have)
	for _, sa := range inline {
		sa.inline = true
	}
	subs = append(subs, inline...)

	titles := map[string]string{} // sub-agent SourceID -> its task's description
	calls := taskCalls(mainTree)
	linkAgents(sid, mainTree, mb, calls, titles)
	sideTops, sideLeaves := sideTree.leaves()
	sideIDs := linkSidechains(sid, sideTree, sideTops, mb, calls, titles)
	linkCompactions(mainTree, mb, subs)

	base := importer.Session{SourceID: sid, Kind: loom.KindMain, Path: paths[0], Provider: Provider}
	tops, leaves := mainTree.leaves()
	var all []int
	for _, top := range tops {
		all = append(all, leaves[top]...)
	}
	for _, n := range f.nodes {
		if n.LoomHandoff != nil && n.LoomHandoff.SessionID != "" {
			base.Origin = n.LoomHandoff
			break
		}
	}
	if len(all) > 0 {
		rd.sessions(mainTree, mb, all, base, &f.titles, f.nodes)
	}
	base.Origin = nil
	byTop := recsByTop(sideTree)
	for i, top := range sideTops {
		s := base
		s.SourceID, s.Kind, s.ParentSourceID, s.Title = sideIDs[i], loom.KindSubagent, sid, titles[sideIDs[i]]
		rd.sessions(sideTree, sb, sideLeaves[top], s, nil, byTop[top])
	}
	var parentTitle string
	if len(rd.res.Sessions) > 0 && rd.res.Sessions[0].SourceID == sid {
		parentTitle = importer.Title(rd.res.Sessions[0])
	}
	rd.bigAgentTitles(sid, big, titles)
	for _, sa := range subs {
		s := base
		s.SourceID, s.Kind, s.ParentSourceID, s.Title, s.Path = sa.sourceID, loom.KindSubagent, sid, titles[sa.sourceID], sa.f.path
		s.Inline = sa.inline
		if isCompactionFile(sa.f.path) {
			s.Title = compactionTitle(parentTitle)
			if rd.segFrom > 0 {
				// A segment's first prompt is not the session's: the
				// segment at the file's start titled it.
				s.Title = ""
			}
		}
		rd.treeSessions(sa.t, sa.b, s, &sa.f.titles, sa.f.nodes)
		sa.b.unused()
		sa.f.titles.count(rd.res)
	}
	mb.unused()
	sb.unused()
	f.titles.count(rd.res)
	types := map[string]string{}
	for _, a := range mb.agents {
		types[a.sourceID] = a.agentType
	}
	for _, s := range rd.res.Sessions {
		titleSubagent(s, types[s.SourceID])
	}
	return nil
}

// bigAgentTitles gives the result the titles of the sub-agents whose
// files, bigger than a segment, are bundles of their own (big, by the
// file's stem): their task calls' descriptions, which a reading of the
// sub-agent's file alone does not see.
func (rd *reader) bigAgentTitles(sid string, big map[string]bool, titles map[string]string) {
	for id, title := range titles {
		if stem, ok := strings.CutPrefix(id, sid+"/"); !ok || !big[stem] || title == "" {
			continue
		}
		if rd.res.Titles == nil {
			rd.res.Titles = map[string]string{}
		}
		rd.res.Titles[id] = title
	}
}

// bigAgentStems are the stems (cleaned, as in a SourceID) of the
// sub-agent files beside the session file path that are bundles of
// their own (importer.BigAlone).
func bigAgentStems(path string) map[string]bool {
	out := map[string]bool{}
	for _, b := range fileBundle(path)[1:] {
		out[cleanID(strings.TrimSuffix(filepath.Base(b.Name()), ".jsonl"))] = true
	}
	return out
}

// agentBundle reads a sub-agent's file alone: a project-level agent-*.jsonl
// of Claude Code 1.x and 2.0, or a subagents/ file whose session file is
// gone or which is bigger than a segment (importer.BigAlone). Its
// parent is the session whose subagents directory holds it, else the
// one its lines name.
func (rd *reader) agentBundle(path string) error {
	f, err := rd.load(path, false)
	if err != nil {
		return err
	}
	// The parent's id as a reading with its session file gives it
	// (sessionID): the session file's name, when it is a UUID, else
	// what the lines name.
	var parent string
	if isSubagentPath(path) {
		if dir := cleanID(filepath.Base(filepath.Dir(filepath.Dir(path)))); isUUID(dir) {
			parent = dir
		}
	}
	if parent == "" {
		parent = linesSessionID(f.nodes)
	}
	if parent == "" && isSubagentPath(path) {
		parent = cleanID(filepath.Base(filepath.Dir(filepath.Dir(path))))
	}
	stem := cleanID(strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	s := importer.Session{SourceID: stem, Kind: loom.KindMain, Path: path, Provider: Provider}
	if parent != "" {
		s.SourceID, s.Kind, s.ParentSourceID = parent+"/"+stem, loom.KindSubagent, parent
	}
	if isCompactionFile(path) {
		s.Title = compactionTitle("")
	}
	t := newTree(f.nodes, false, rd.res)
	b := newBuilder(t, rd.res)
	rd.treeSessions(t, b, s, &f.titles, f.nodes)
	b.unused()
	f.titles.count(rd.res)
	for _, s := range rd.res.Sessions {
		titleSubagent(s, "")
	}
	return nil
}
