package claudecode

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads Claude Code's session files. It implements
// importer.Format; the zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// New returns the Claude Code format.
func New() Format { return Format{} }

// Tool is Claude Code's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL`.
const Tool = "claude-code"

func init() { importer.Register(Format{}) }

// Provider is the provider of the models Claude Code calls.
const Provider = "anthropic"

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider returns Provider.
func (Format) Provider() string { return Provider }

// Roots is $CLAUDE_CONFIG_DIR/projects when that variable is set, else
// ~/.claude/projects.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "CLAUDE_CONFIG_DIR", ".claude"), "projects")
}

// Bundles finds the session files under root, a directory searched
// recursively or a single file. A session file <id>.jsonl makes one
// bundle with the sub-agent transcripts <id>/subagents/*.jsonl beside it,
// but for those bigger than a segment (importer.SegmentSize): each of
// those is a bundle of its own, read a segment at a time as its main
// file (importer.BigAlone), after the session bundles. Read alone, its
// session is the one a reading with its session gives it (agentBundle),
// so the session's calls still link to it.
// Sub-agent transcripts without their session file and the project-level
// agent-*.jsonl files of Claude Code 1.x and 2.0 are bundles of their own;
// they come after all session bundles, since the session they belong to
// is read in another bundle. Symbolic links are followed: a linked
// projects directory, project directory, subagents directory or session
// file counts as what it leads to. A root that does not exist has no
// bundles; a subdirectory that cannot be listed is reported beside the
// bundles found (importer.Unreadable).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	info, err := importer.StatRoot(Tool, root)
	if info == nil {
		return nil, err
	}
	if !info.IsDir() {
		return fileBundle(root), nil
	}
	var sessions, agents []string
	subs := map[string][]string{} // session file -> its sub-agent files
	var unreadable importer.Unreadable
	err = importer.WalkDir(ctx, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			// A directory that cannot be listed is a problem of the
			// import; the rest is still read. A link to nowhere is one
			// where it is named as a session file.
			if !importer.IsLink(d) || strings.HasSuffix(p, ".jsonl") {
				unreadable.Add(p, err)
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if unreadable.NamedDir(p, d, p != root && strings.HasSuffix(d.Name(), ".jsonl")) {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		switch {
		case isSubagentPath(p):
			owner := filepath.Dir(filepath.Dir(p)) + ".jsonl"
			subs[owner] = append(subs[owner], p)
		case strings.HasPrefix(d.Name(), "agent-"):
			agents = append(agents, p)
		default:
			sessions = append(sessions, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claude-code: walking %s: %w", root, err)
	}
	var out, big []importer.Bundle
	for _, s := range sessions {
		small, alone := importer.BigAlone(subs[s])
		delete(subs, s)
		out = append(out, importer.Bundle{Files: append([]string{s}, small...)})
		big = append(big, alone...)
	}
	out = append(out, big...)
	// Sub-agent files whose session file is gone, then project-level
	// agent files: each is read alone.
	owners := make([]string, 0, len(subs))
	for o := range subs {
		owners = append(owners, o)
	}
	slices.Sort(owners)
	for _, o := range owners {
		for _, f := range subs[o] {
			out = append(out, importer.Bundle{Files: []string{f}})
		}
	}
	for _, a := range agents {
		out = append(out, importer.Bundle{Files: []string{a}})
	}
	return out, unreadable.Err()
}

// fileBundle is the bundle of a root that is one file: a session file
// with its sub-agents' files (the subagents directory and its files may
// be symbolic links; a session file that is a link has them beside the
// file it leads to when not beside the link), or a sub-agent's file
// alone.
func fileBundle(path string) []importer.Bundle {
	if isAgentFile(path) {
		return []importer.Bundle{{Files: []string{path}}}
	}
	var files []string
	dir := filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if real, rerr := filepath.EvalSymlinks(path); rerr == nil && real != path {
			dir = filepath.Join(strings.TrimSuffix(real, ".jsonl"), "subagents")
			entries, err = os.ReadDir(dir)
		}
	}
	if err == nil {
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".jsonl") || !importer.EntryMode(dir, e).IsRegular() {
				continue // not a transcript, not a file, or a dangling link
			}
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	small, big := importer.BigAlone(files)
	return append([]importer.Bundle{{Files: append([]string{path}, small...)}}, big...)
}

// isSubagentPath reports whether p is <session>/subagents/<file>.
func isSubagentPath(p string) bool {
	return filepath.Base(filepath.Dir(p)) == "subagents"
}

// isAgentFile reports whether p holds one sub-agent's transcript: a file
// under a session's subagents directory or a project-level agent-*.jsonl.
func isAgentFile(p string) bool {
	return isSubagentPath(p) || strings.HasPrefix(filepath.Base(p), "agent-")
}

// isCompactionFile reports whether p is the transcript of a compaction
// agent: subagents/agent-acompact-*.jsonl.
func isCompactionFile(p string) bool {
	return strings.HasPrefix(filepath.Base(p), "agent-acompact")
}
