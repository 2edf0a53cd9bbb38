package cline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads the sessions of Cline's CLI (cline 3). It implements
// importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is the Cline CLI's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL`.
const Tool = "cline"

// The variables that move Cline's directories, as Cline reads them:
// its sessions directory, its data directory (--data-dir) and its own
// directory (~/.cline).
const (
	EnvSessionDir = "CLINE_SESSION_DATA_DIR"
	EnvDataDir    = "CLINE_DATA_DIR"
	EnvDir        = "CLINE_DIR"
)

// messagesSuffix ends the name of a session's messages file,
// <id>.messages.json, beside its <id>.json; compactionSuffix the name
// of its latest compaction's, <id>.compaction.json.
const (
	messagesSuffix   = ".messages.json"
	compactionSuffix = ".compaction.json"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": each session names its provider.
func (Format) Provider() string { return "" }

// Roots is Cline's sessions directory: $CLINE_SESSION_DATA_DIR, else
// $CLINE_DATA_DIR/sessions, else $CLINE_DIR/data/sessions, else
// ~/.cline/data/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	get := func(k string) string {
		if env == nil {
			return ""
		}
		return strings.TrimSpace(env(k))
	}
	switch {
	case get(EnvSessionDir) != "":
		return []string{get(EnvSessionDir)}
	case get(EnvDataDir) != "":
		return []string{filepath.Join(get(EnvDataDir), "sessions")}
	case get(EnvDir) != "":
		return []string{filepath.Join(get(EnvDir), "data", "sessions")}
	case home == "":
		return nil
	}
	return []string{filepath.Join(home, ".cline", "data", "sessions")}
}

// Bundles lists every session under root (a directory per session,
// sessions/<id>/): its messages file <id>.messages.json, with <id>.json,
// the session's record, <id>.compaction.json, its latest compaction,
// and the messages files of its sub-agents beside them
// (<agent id>.messages.json), when there are. root itself may be one
// messages file.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bs, err := importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), messagesSuffix) && !isSubagentFile(path)
	})
	for i, b := range bs {
		base := strings.TrimSuffix(b.Name(), messagesSuffix)
		for _, side := range []string{base + ".json", base + compactionSuffix} {
			if fi, err := os.Stat(side); err == nil && fi.Mode().IsRegular() {
				bs[i].Files = append(bs[i].Files, side)
			}
		}
		if filepath.Base(base) != filepath.Base(filepath.Dir(base)) {
			continue
		}
		entries, _ := os.ReadDir(filepath.Dir(base))
		for _, e := range entries {
			if path := filepath.Join(filepath.Dir(base), e.Name()); e.Type().IsRegular() && strings.HasSuffix(e.Name(), messagesSuffix) && isSubagentFile(path) {
				bs[i].Files = append(bs[i].Files, path)
			}
		}
	}
	return bs, err
}

// isSubagentFile reports whether the messages file at path is a
// sub-agent's: not named after the session directory it is in, which
// holds that session's own messages file.
func isSubagentFile(path string) bool {
	dir := filepath.Dir(path)
	own := filepath.Base(dir) + messagesSuffix
	if filepath.Base(path) == own {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, own))
	return err == nil && fi.Mode().IsRegular()
}

// Read reads one session's messages file, its record and compaction,
// and its sub-agents' messages files.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if b.Name() == "" {
		return nil, errors.New("cline: empty bundle")
	}
	data, mod, err := readFile(b.Name())
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(b.Name(), messagesSuffix)
	var record, compaction []byte
	var subs []string
	for _, f := range b.Files[1:] {
		// A record or compaction that cannot be read leaves the session
		// without its title, directory and parent, or its summary; the
		// messages are still read.
		switch {
		case f == base+".json":
			record, _, _ = readFile(f)
		case f == base+compactionSuffix:
			compaction, _, _ = readFile(f)
		case strings.HasSuffix(f, messagesSuffix):
			subs = append(subs, f)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := parse(b.Name(), data, record, compaction, mod)
	if err != nil || len(res.Sessions) == 0 {
		return res, err
	}
	for _, f := range subs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, mod, err := readFile(f)
		if err != nil {
			res.Problemf(f, 0, err.Error())
			continue
		}
		sub, err := parse(f, data, nil, nil, mod)
		if err != nil {
			return nil, err
		}
		res.Problems = append(res.Problems, sub.Problems...)
		for k, n := range sub.Skipped {
			if res.Skipped == nil {
				res.Skipped = map[string]int{}
			}
			res.Skipped[k] += n
		}
		for _, s := range sub.Sessions {
			s.Kind, s.ParentSourceID = loom.KindSubagent, res.Sessions[0].SourceID
			res.Sessions = append(res.Sessions, s)
		}
	}
	linkSubagents(res.Sessions)
	return res, nil
}

func readFile(name string) ([]byte, fs.FileInfo, error) {
	f, fi, err := importer.Open(name, importer.MaxDocument)
	if err != nil {
		return nil, nil, fmt.Errorf("cline: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("cline: %w", err)
	}
	return data, fi, nil
}
