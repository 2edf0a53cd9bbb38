package qwen

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/gemini"
)

// Format reads Qwen Code's session files. The zero value is ready to
// use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Qwen Code's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "qwen"

func init() { importer.Register(Format{}) }

// The variables Qwen Code reads for its directories: QWEN_HOME replaces
// ~/.qwen, and QWEN_RUNTIME_DIR, when set, holds the projects instead.
const (
	EnvHome       = "QWEN_HOME"
	EnvRuntimeDir = "QWEN_RUNTIME_DIR"
)

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Qwen Code speaks to many providers (OpenAI-compatible,
// Anthropic, Gemini, Qwen's own), and the file does not say which.
func (Format) Provider() string { return "" }

// Roots are $QWEN_RUNTIME_DIR/projects when that is set,
// $QWEN_HOME/projects (~/.qwen/projects by default), and $QWEN_HOME/tmp,
// where Qwen Code 0.1 kept its recordings.
func (Format) Roots(env func(string) string, home string) []string {
	var roots []string
	if env != nil && env(EnvRuntimeDir) != "" {
		roots = append(roots, filepath.Join(env(EnvRuntimeDir), "projects"))
	}
	if base := importer.ToolDir(env, home, EnvHome, ".qwen"); base != "" {
		if dir := filepath.Join(base, "projects"); len(roots) == 0 || filepath.Clean(roots[0]) != dir {
			roots = append(roots, dir)
		}
		roots = append(roots, filepath.Join(base, "tmp"))
	}
	return roots
}

// Bundles lists every chats/<session id>.jsonl under root, each with the
// transcripts of its sub-agents (../subagents/<session id>/agent-*.jsonl,
// and their .meta.json), and every chats/session-*.json, the one-document
// recording of Qwen Code 0.1 (tmp/<project hash>/chats/); root itself may
// be one chat file, read whatever its name.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bundles, err := importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		return filepath.Base(filepath.Dir(path)) == "chats" && (strings.HasSuffix(d.Name(), ".jsonl") || isEarly(d.Name()))
	})
	if fi, serr := os.Stat(root); err == nil && serr == nil && !fi.IsDir() {
		bundles = []importer.Bundle{{Files: []string{root}}}
	}
	// The other chats come with their sub-agents also when a file could
	// not be listed (a directory in a chat file's place: err says so).
	for i := range bundles {
		if !isEarly(filepath.Base(bundles[i].Name())) {
			bundles[i].Files = append(bundles[i].Files, subagentFiles(bundles[i].Name())...)
		}
	}
	return bundles, err
}

// isEarly reports whether a chat file's name is that of Qwen Code 0.1's
// recordings, session-<time>-<id prefix>.json: Gemini CLI's one-document
// form, its replies typed "qwen".
func isEarly(name string) bool {
	return strings.HasPrefix(name, "session-") && strings.HasSuffix(name, ".json")
}

// subagentFiles are the sub-agent transcripts and their metadata beside
// a chat file, sorted: <project>/subagents/<session id>/agent-*.
func subagentFiles(chat string) []string {
	id := strings.TrimSuffix(filepath.Base(chat), ".jsonl")
	dir := filepath.Join(filepath.Dir(filepath.Dir(chat)), "subagents", safeName(id))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, "agent-") && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".meta.json")) && e.Type().IsRegular() {
			files = append(files, filepath.Join(dir, n))
		}
	}
	sort.Strings(files)
	return files
}

// safeName is a file name component as Qwen Code makes one.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// Read reads one chat file and its sub-agents' transcripts.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path := b.Name()
	if path == "" {
		return nil, fmt.Errorf("qwen: a bundle without a file")
	}
	if isEarly(filepath.Base(path)) {
		res, err := gemini.Format{}.Read(ctx, importer.Bundle{Files: []string{path}})
		if err != nil && ctx.Err() == nil {
			return nil, earlyError{err}
		}
		return res, err
	}
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("qwen: %w", err)
	}
	defer f.Close()
	res := &importer.Result{}
	main, err := readChat(ctx, res, path, f, "")
	if err != nil {
		return nil, err
	}
	if main == nil {
		return res, nil
	}
	res.Sessions = append(res.Sessions, main)
	metas := map[string]meta{}
	for _, p := range b.Files[1:] {
		if strings.HasSuffix(p, ".meta.json") {
			if m, ok := readMeta(res, p); ok {
				metas[strings.TrimSuffix(p, ".meta.json")+".jsonl"] = m
			}
		}
	}
	for _, p := range b.Files[1:] {
		if !strings.HasSuffix(p, ".jsonl") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sub, err := readSubagent(ctx, res, p, main, metas[p])
		if err != nil {
			res.Problemf(p, 0, err.Error())
			continue
		}
		if sub != nil {
			res.Sessions = append(res.Sessions, sub)
		}
	}
	return res, nil
}

// earlyError is the error of Gemini CLI's reader about a Qwen Code 0.1
// recording, told as Qwen Code's, as the errors about its JSONL files
// are, not in the name of the reader lent.
type earlyError struct{ err error }

func (e earlyError) Error() string {
	msg := strings.TrimPrefix(e.err.Error(), "gemini: ")
	msg = strings.Replace(msg, "not a Gemini CLI chat recording", "not a Qwen Code chat file", 1)
	return "qwen: " + msg
}

func (e earlyError) Unwrap() error { return e.err }
