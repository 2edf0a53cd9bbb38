// Package omp reads the sessions of Oh My Pi (@oh-my-pi/pi-coding-agent,
// the omp command), a fork of the Pi coding agent that keeps pi's session
// format, for loom's importer.
//
// omp keeps one JSONL file per session under its agent directory's
// sessions/ (~/.omp/agent/sessions; $PI_CODING_AGENT_DIR replaces
// ~/.omp/agent, $PI_CODING_AGENT_SESSION_DIR the sessions directory), in
// a directory per working directory. A sub-agent's transcript is
// <session>/<id>.jsonl beside its parent's <session>.jsonl (the task
// tool's artifacts directory; omp 18 names the parent's file in its
// header's parentSession). Each file is read by pi's reader (package
// pi: header, entry tree, messages, tools, compactions, branches as
// forks); omp's header title names the session, a sub-agent's file is
// a sub-agent of the session beside it (not the fork pi's reader makes
// of a parentSession), a task call has an agent part for each sub-agent
// it ran (by the names its input gives and the ids its result names),
// and omp's own entry types (model_usage, service_tier_change, title
// slots) are counted as skipped.
//
// The layout and entries were learnt from omp's source as npm ships it
// (src/session/session-entries.ts, session-manager.ts) and from
// agentsview's reader of it.
package omp

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/pi"
)

// Format reads Oh My Pi's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Oh My Pi's name in loom.
const Tool = "omp"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": omp calls many providers and every reply names its own.
func (Format) Provider() string { return "" }

// Roots are $PI_CODING_AGENT_SESSION_DIR when set, and the agent
// directory's sessions/: $PI_CODING_AGENT_DIR, else ~/.omp/agent.
func (Format) Roots(env func(string) string, home string) []string {
	env = importer.EnvPath(env, home)
	var roots []string
	if d := env(pi.EnvSessionDir); d != "" {
		roots = append(roots, d)
	}
	if agent := importer.ToolDir(env, home, pi.EnvAgentDir, ".omp", "agent"); agent != "" {
		roots = append(roots, filepath.Join(agent, "sessions"))
	}
	return roots
}

// Bundles lists every *.jsonl file under root, one bundle each; a
// parent's file sorts before the directory of its sub-agents.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
}

// Read reads one session file with pi's reader, then what omp adds: the
// header's title and, for a sub-agent's file, its parent.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, f, _, err := importer.OpenBundle(Tool, b, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rt := newRetyped(f)
	res, err := pi.ReadAs(ctx, Tool, path, rt)
	if err != nil {
		return nil, err
	}
	rt.recount(res, path)
	title := header(path).Title
	parent := header(filepath.Dir(path) + ".jsonl").ID
	for _, s := range res.Sessions {
		// omp 18 names the parent's file as the sub-agent's
		// parentSession, which pi's reader takes for a fork of it.
		if s.Kind != loom.KindMain && (s.Kind != loom.KindFork || s.ParentSourceID != parent) {
			continue
		}
		if s.Title == "" {
			s.Title = title
		}
		if parent != "" && parent != s.SourceID {
			s.Kind, s.ParentSourceID, s.ForkTurn = loom.KindSubagent, parent, 0
		}
	}
	linkTasks(res, strings.TrimSuffix(path, ".jsonl"))
	return res, nil
}

// taskTool is omp's tool that runs sub-agents.
const taskTool = "task"

// taskResultID finds the sub-agents a task call's result names: its
// <task-result id="…"> envelopes and agent://<id> pointers
// (prompts/tools/task-summary.md).
var taskResultID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<task-result id="([A-Za-z0-9_.-]+)"|agent://([A-Za-z0-9_.-]+)`)
})

// linkTasks gives each task call of res's sessions an agent part for
// each sub-agent it ran whose file is in dir, the session's artifacts
// directory: omp writes a sub-agent to <dir>/<id>.jsonl, its id the
// name the call gave it (name, or each of tasks[].name) or one omp
// made up, which the call's result names.
func linkTasks(res *importer.Result, dir string) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return
	}
	subs := map[string]string{} // file id → session id
	sub := func(id string) string {
		if sid, ok := subs[id]; ok {
			return sid
		}
		sid := ""
		if !strings.ContainsAny(id, `/\`) && id != "." && id != ".." {
			sid = header(filepath.Join(dir, id+".jsonl")).ID
		}
		subs[id] = sid
		return sid
	}
	for _, s := range res.Sessions {
		if s.Kind == loom.KindSubagent {
			continue
		}
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				if p.Type != loom.PartTool || p.Name != taskTool {
					continue
				}
				seen := map[string]bool{}
				for _, id := range taskIDs(p) {
					sid := sub(id)
					if sid == "" || seen[sid] || sid == s.SourceID {
						continue
					}
					seen[sid] = true
					if len(seen) == 1 {
						importer.AddAgentPart(m, p, sid)
						continue
					}
					m.Parts = append(m.Parts, loom.Part{ID: p.ID + "/agent/" + strconv.Itoa(len(seen)), Type: loom.PartAgent, Name: p.Name, SessionID: sid})
				}
			}
		}
	}
}

// taskIDs are the ids of the sub-agents a task call names, in order:
// the names its input gives, then those its result names.
func taskIDs(p loom.Part) []string {
	var in struct {
		Name  string `json:"name"`
		Tasks []struct {
			Name string `json:"name"`
		} `json:"tasks"`
	}
	var ids []string
	if json.Unmarshal(p.Input, &in) == nil {
		ids = append(ids, in.Name)
		for _, t := range in.Tasks {
			ids = append(ids, t.Name)
		}
	}
	for _, m := range taskResultID().FindAllStringSubmatch(loom.JSONText(p.Output), -1) {
		ids = append(ids, cmp.Or(m[1], m[2]))
	}
	out := ids[:0]
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// sessionHeader is the first line of a session file.
type sessionHeader struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Title string `json:"title"`
}

// header reads the header of the session file at path, with the title
// of the title entry omp 18 writes before it; empty when there is none.
func header(path string) sessionHeader {
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return sessionHeader{}
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	title := ""
	for range 2 {
		line, _ := br.ReadSlice('\n')
		var h sessionHeader
		if json.Unmarshal(line, &h) != nil {
			return sessionHeader{}
		}
		switch h.Type {
		case "title":
			title = strings.TrimSpace(h.Title)
			continue
		case "session":
			h.ID, h.Title = importer.LineID(h.ID), strings.TrimSpace(cmp.Or(h.Title, title))
			return h
		}
		break
	}
	return sessionHeader{}
}
