// Package omp reads the sessions of Oh My Pi (@oh-my-pi/pi-coding-agent,
// the omp command), a fork of the Pi coding agent that keeps pi's session
// format, for loom's importer.
//
// omp keeps one JSONL file per session under its agent directory's
// sessions/ (~/.omp/agent/sessions; $PI_CODING_AGENT_DIR replaces
// ~/.omp/agent, $PI_CODING_AGENT_SESSION_DIR the sessions directory), in
// a directory per working directory. A sub-agent's transcript is
// <session>/<agent>.jsonl beside its parent's <session>.jsonl. Each file
// is read by pi's reader (package pi: header, entry tree, messages,
// tools, compactions, branches as forks); omp's header title names the
// session, a sub-agent's file is a sub-agent of the session beside it,
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
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

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
	path := b.Name()
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	defer f.Close()
	rt := newRetyped(f)
	res, err := pi.ReadAs(ctx, Tool, path, rt)
	if err != nil {
		return nil, err
	}
	rt.recount(res)
	title := header(path).Title
	parent := header(filepath.Dir(path) + ".jsonl").ID
	for _, s := range res.Sessions {
		if s.Kind != loom.KindMain {
			continue
		}
		if s.Title == "" {
			s.Title = title
		}
		if parent != "" && parent != s.SourceID {
			s.Kind, s.ParentSourceID = loom.KindSubagent, parent
		}
	}
	return res, nil
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
