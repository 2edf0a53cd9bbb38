package gemini

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/loomhq/loom/importer"
)

// homeEnv is the variable Gemini CLI reads in place of the user's home
// directory: its files are then under $GEMINI_CLI_HOME/.gemini.
const homeEnv = "GEMINI_CLI_HOME"

// markerName is the file Gemini CLI keeps in a project's directory under
// ~/.gemini/tmp naming the project's root directory.
const markerName = ".project_root"

// Format reads Gemini CLI chat recordings. It implements importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Gemini CLI's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL`.
const Tool = "gemini"

func init() { importer.Register(Format{}) }

// Provider is the provider of every model reply Gemini CLI records.
const Provider = "google"

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider returns Provider.
func (Format) Provider() string { return Provider }

// Roots is $GEMINI_CLI_HOME/.gemini/tmp when the variable is set, else
// <home>/.gemini/tmp.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, homeEnv), ".gemini", "tmp")
}

// Bundles finds the chat recordings under root: root is Gemini CLI's
// directory (~/.gemini), the directory holding it (the home directory, or
// $GEMINI_CLI_HOME), its tmp directory (holding one directory per
// project), one project's directory, its chats directory, or one
// recording file. Each session-*.json or session-*.jsonl file is one
// bundle, with the sub-agents' recordings that Gemini CLI keeps in
// chats/<session id>/. A session-X.json that has a session-X.jsonl beside
// it is left out: Gemini CLI copied it whole into the .jsonl when it
// resumed it. Symbolic links to directories and to files are followed; a
// project directory reached twice through links is listed once.
//
// A bundle holds recordings only. The project's .project_root marker,
// which every session of the project shares, is read by Read beside the
// recording: the importer records each file under one bundle, and a file
// listed in several bundles would make every one of them look changed on
// every run.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if bs, dir, err := importer.FileRoot(Tool, root); !dir {
		return bs, err
	}
	var unreadable importer.Unreadable
	dirs, err := chatsDirs(ctx, root, &unreadable)
	if err != nil {
		return nil, err
	}
	var out []importer.Bundle
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := chatsBundles(d, &unreadable)
		if err != nil {
			// A problem of the import; the other projects are read.
			unreadable.Add(d, err)
			continue
		}
		out = append(out, b...)
	}
	return out, unreadable.Err()
}

// chatsDirs returns the chats directories under root, each once. root is
// the directory holding .gemini, ~/.gemini, its tmp directory, a
// project's directory or a chats directory; a project may be named tmp
// or chats (Gemini CLI names it after its directory), which is told apart
// by the chats directory it holds.
// A project directory that cannot be looked into is added to unreadable.
func chatsDirs(ctx context.Context, root string, unreadable *importer.Unreadable) ([]string, error) {
	switch {
	case isProject(root):
		return []string{filepath.Join(root, "chats")}, nil
	case filepath.Base(root) == "chats":
		return []string{root}, nil
	case isDir(filepath.Join(root, ".gemini", "tmp")):
		root = filepath.Join(root, ".gemini", "tmp")
	case isDir(filepath.Join(root, "tmp")) && !isProject(filepath.Join(root, "tmp")):
		root = filepath.Join(root, "tmp")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.Type().IsRegular() {
			continue
		}
		// A directory, or a link that may lead to one: os.Stat follows it.
		d := filepath.Join(root, e.Name(), "chats")
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				unreadable.Add(d, err)
			}
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			real = d
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, d)
	}
	return out, nil
}

// isProject reports whether dir is a project's directory: it holds a
// chats directory, which is not itself a project named chats.
func isProject(dir string) bool {
	return isDir(filepath.Join(dir, "chats")) && !isDir(filepath.Join(dir, "chats", "chats"))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// chatsBundles groups one chats directory's files into bundles; a
// directory named as a session file is recorded in u.
func chatsBundles(dir string, u *importer.Unreadable) ([]importer.Bundle, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	names := map[string]bool{}
	var sessions, subdirs []string
	for _, e := range entries {
		name := e.Name()
		switch m := importer.EntryMode(dir, e); {
		case m.IsDir() && isSessionName(name):
			u.Problems = append(u.Problems, importer.Problem{File: filepath.Join(dir, name), Reason: importer.DirReason})
		case m.IsDir():
			subdirs = append(subdirs, name)
		case m.IsRegular() && isSessionName(name):
			names[name] = true
			sessions = append(sessions, name)
		}
	}
	// A recording Gemini CLI migrated to JSONL keeps its old .json copy.
	sessions = slices.DeleteFunc(sessions, func(n string) bool {
		return strings.HasSuffix(n, ".json") && names[n+"l"]
	})
	slices.Sort(sessions)
	subs := map[string][]string{}
	var out, orphans []importer.Bundle
	for _, d := range subdirs {
		files, err := subagentFiles(filepath.Join(dir, d))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			continue
		}
		// A sub-agent's directory is named for its parent's whole session
		// id; the parent's file name ends with the id's first 8
		// characters. Of several candidates the newest (last in name
		// order, the names start with the time) is taken.
		owner := ""
		for _, s := range sessions {
			if id := shortID(s); id != "" && strings.HasPrefix(d, id) {
				owner = s
			}
		}
		if owner == "" {
			orphans = append(orphans, importer.Bundle{Files: files})
			continue
		}
		subs[owner] = append(subs[owner], files...)
	}
	var big []importer.Bundle
	for _, s := range sessions {
		// One bigger than a segment is a bundle of its own; read alone,
		// it is the sub-agent of the session its directory names
		// (buildSubagent), the SourceID a reading with it gives it.
		small, alone := importer.BigAlone(subs[s])
		out = append(out, importer.Bundle{Files: append([]string{filepath.Join(dir, s)}, small...)})
		big = append(big, alone...)
	}
	return append(append(out, big...), orphans...), nil
}

// subagentFiles lists the .jsonl files of one sub-agents' directory.
func subagentFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	var out []string
	for _, e := range entries {
		if importer.EntryMode(dir, e).IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

func isSessionName(name string) bool {
	return strings.HasPrefix(name, "session-") &&
		(strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl"))
}

// shortID is the session id prefix a recording's file name ends with:
// session-<time>-<first 8 characters of the id>.json(l), or
// .loom.jsonl for a recording a hand-off wrote (handoffSuffix).
func shortID(name string) string {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".jsonl"), ".json")
	name = strings.TrimSuffix(name, strings.TrimSuffix(handoffSuffix, ".jsonl"))
	i := strings.LastIndexByte(name, '-')
	if i < 0 || len(name)-i-1 != 8 {
		return ""
	}
	return name[i+1:]
}

// markerFor returns the .project_root marker of the project a recording
// file belongs to, or "" when there is none.
func markerFor(file string) string {
	dir := filepath.Dir(file)
	if filepath.Base(dir) != "chats" {
		dir = filepath.Dir(dir)
		if filepath.Base(dir) != "chats" {
			return ""
		}
	}
	m := filepath.Join(filepath.Dir(dir), markerName)
	if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return m
}

// isSubagentFile reports whether file sits in a sub-agents' directory,
// chats/<parent session id>/.
func isSubagentFile(file string) bool {
	dir := filepath.Dir(file)
	return filepath.Base(dir) != "chats" && filepath.Base(filepath.Dir(dir)) == "chats"
}
