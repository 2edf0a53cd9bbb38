package cursor

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads Cursor's sessions: the transcripts its agent CLI
// (cursor-agent) writes under ~/.cursor/projects, and the chats of the
// editor's agent (Composer) in its state.vscdb database. It implements
// importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Cursor's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "cursor"

// The names Cursor gives what the reader reads.
const (
	// configEnv moves ~/.cursor, where the CLI keeps its projects.
	configEnv = "CURSOR_CONFIG_DIR"
	// appDataEnv moves the editor's application data directory, as it
	// does VS Code's, on which the editor is built.
	appDataEnv     = "VSCODE_APPDATA"
	transcriptsDir = "agent-transcripts"
	subagentsDir   = "subagents"
	stateDB        = "state.vscdb"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Cursor routes each chat to the model it names.
func (Format) Provider() string { return "" }

// Roots are the CLI's projects directory ($CURSOR_CONFIG_DIR/projects,
// else ~/.cursor/projects) and the editor's global storage
// (Cursor/User/globalStorage in the application data directory:
// $VSCODE_APPDATA, else the platform's, importer.AppConfigDir: ~/.config
// on Linux ($XDG_CONFIG_HOME when absolute), ~/Library/Application
// Support on macOS, %APPDATA% on Windows).
func (Format) Roots(env func(string) string, home string) []string {
	get := importer.Getenv(env)
	var roots []string
	if dir := importer.ToolDir(get, home, configEnv, ".cursor"); dir != "" {
		roots = append(roots, filepath.Join(dir, "projects"))
	}
	appData := cmp.Or(get(appDataEnv), importer.AppConfigDir(get, home))
	if appData != "" {
		roots = append(roots, filepath.Join(appData, "Cursor", "User", "globalStorage"))
	}
	return roots
}

// Bundles finds Cursor's sessions under root: the editor's state.vscdb
// when root holds it (one bundle, with its write-ahead log), else every
// transcript in an agent-transcripts directory, each with the
// transcripts of its sub-agents. Of a transcript written both as .jsonl and as .txt (an
// older version's form), the .jsonl is read.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		if filepath.Base(root) == stateDB || strings.HasSuffix(root, ".vscdb") {
			return []importer.Bundle{importer.SQLiteBundle(root)}, nil
		}
		return []importer.Bundle{{Files: []string{root}}}, nil
	}
	if db := filepath.Join(root, stateDB); importer.RegularFile(db) == nil {
		// The editor's global storage: the rest of it is other
		// extensions' state, not transcripts.
		return []importer.Bundle{importer.SQLiteBundle(db)}, nil
	}
	files, err := importer.NamedFiles(ctx, Tool, root, func(string) bool { return true })
	var found []transcript
	for _, b := range files {
		if t, ok := locate(b.Name()); ok {
			found = append(found, t)
		}
	}
	return group(found), err
}

// transcript is where a transcript file is: its session, and the
// session that ran it when it is a sub-agent's.
type transcript struct {
	path, dir, id, parent string
}

// locate reads a transcript's place in its agent-transcripts directory:
// <id>.jsonl, <id>/<id>.jsonl, or <parent>/subagents/<id>.jsonl (or
// .txt).
func locate(path string) (transcript, bool) {
	ext := filepath.Ext(path)
	if ext != ".jsonl" && ext != ".txt" {
		return transcript{}, false
	}
	id := strings.TrimSuffix(filepath.Base(path), ext)
	d1 := filepath.Dir(path)
	d2 := filepath.Dir(d1)
	d3 := filepath.Dir(d2)
	switch {
	case filepath.Base(d1) == transcriptsDir:
		return transcript{path: path, dir: d1, id: id}, id != ""
	case filepath.Base(d2) == transcriptsDir && filepath.Base(d1) == id:
		return transcript{path: path, dir: d2, id: id}, id != ""
	case filepath.Base(d3) == transcriptsDir && filepath.Base(d1) == subagentsDir:
		parent := filepath.Base(d2)
		return transcript{path: path, dir: d3, id: id, parent: parent}, id != "" && parent != id
	}
	return transcript{}, false
}

// group makes one bundle of each session's transcript with its
// sub-agents', the .jsonl form before the .txt one.
func group(ts []transcript) []importer.Bundle {
	key := func(dir, id string) string { return dir + "\x00" + id }
	mains := map[string]string{}
	subs := map[string][]string{}
	seen := map[string]bool{}
	// .jsonl sorts before .txt: the first form of a session wins.
	slices.SortFunc(ts, func(a, b transcript) int {
		return cmp.Or(strings.Compare(a.dir, b.dir), strings.Compare(a.parent, b.parent), strings.Compare(a.id, b.id),
			strings.Compare(filepath.Ext(a.path), filepath.Ext(b.path)), strings.Compare(a.path, b.path))
	})
	var order []string
	for _, t := range ts {
		k := key(t.dir, t.id)
		if seen[k] {
			continue
		}
		seen[k] = true
		if t.parent == "" {
			mains[k] = t.path
			order = append(order, k)
			continue
		}
		pk := key(t.dir, t.parent)
		subs[pk] = append(subs[pk], t.path)
	}
	var out []importer.Bundle
	for _, k := range order {
		out = append(out, importer.Bundle{Files: append([]string{mains[k]}, subs[k]...)})
		delete(subs, k)
	}
	// Sub-agents whose parent's transcript is gone: each on its own.
	var orphans []string
	for _, paths := range subs {
		orphans = append(orphans, paths...)
	}
	slices.Sort(orphans)
	for _, p := range orphans {
		out = append(out, importer.Bundle{Files: []string{p}})
	}
	return out
}

// Read reads one bundle: the editor's database, or a session's
// transcripts.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, isDB, wal, err := importer.SQLiteFile(Tool, b)
	if err != nil {
		return nil, err
	}
	if isDB {
		return readEditor(ctx, name, wal)
	}
	if ext := filepath.Ext(name); ext != ".jsonl" && ext != ".txt" {
		return nil, fmt.Errorf("cursor: %s is neither a transcript nor the editor's database", name)
	}
	res := &importer.Result{}
	for i, path := range b.Files {
		if filepath.Ext(path) != ".jsonl" && filepath.Ext(path) != ".txt" {
			continue
		}
		t, ok := locate(path)
		if !ok {
			t = transcript{path: path, id: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}
		}
		s, err := readTranscript(ctx, path, t, res)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			res.Problemf(path, 0, err.Error())
			continue
		}
		if s != nil {
			res.Sessions = append(res.Sessions, s)
		}
	}
	return res, nil
}

// projectDir turns the name Cursor gives a project's directory under
// projects/ (its path with every character other than a letter or digit
// made "-") back into the path, when one such directory exists on this
// machine; "" when none does. It lists at most maxListed directories.
func projectDir(name string) string {
	rem := strings.Trim(name, "-")
	if rem == "" {
		return ""
	}
	root := string(filepath.Separator)
	if runtime.GOOS == "windows" && len(rem) > 2 && rem[1] == '-' {
		root, rem = rem[:1]+":"+root, rem[2:]
	}
	budget := maxListed
	var walk func(dir, rem string) string
	walk = func(dir, rem string) string {
		if budget--; budget < 0 {
			return ""
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return ""
		}
		for _, e := range entries {
			n := encode(e.Name())
			if n == "" || !importer.EntryMode(dir, e).IsDir() {
				continue
			}
			switch {
			case n == rem:
				return filepath.Join(dir, e.Name())
			case strings.HasPrefix(rem, n+"-"):
				if got := walk(filepath.Join(dir, e.Name()), rem[len(n)+1:]); got != "" {
					return got
				}
			}
		}
		return ""
	}
	return walk(root, rem)
}

// maxListed bounds the directories projectDir lists.
const maxListed = 64

// encode is a name as Cursor writes it in a project's directory name.
func encode(name string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, name), "-")
}
