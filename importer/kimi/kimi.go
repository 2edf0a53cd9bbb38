package kimi

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/kimiwork"
)

// Format reads Kimi CLI's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Kimi CLI's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "kimi"

// provider is Moonshot AI's, whose Kimi models the CLI calls.
const provider = "moonshot"

// The files of a session's directory, and the variable that moves
// Kimi's directory (~/.kimi).
const (
	contextFile = "context.jsonl"
	wireFile    = "wire.jsonl"
	envShare    = "KIMI_SHARE_DIR"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Moonshot AI's.
func (Format) Provider() string { return provider }

// Roots is Kimi's sessions directory: $KIMI_SHARE_DIR/sessions, else
// ~/.kimi/sessions and Kimi Code's ~/.kimi-code/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	dir := importer.ToolDir(env, home, envShare, ".kimi")
	if dir == "" {
		return nil
	}
	if rest, ok := strings.CutPrefix(dir, "~"+string(filepath.Separator)); ok && home != "" {
		dir = filepath.Join(home, rest)
	}
	roots := []string{filepath.Join(dir, "sessions")}
	if home != "" && (env == nil || env(envShare) == "") {
		// Kimi Code, the CLI under its later name, keeps its sessions
		// in ~/.kimi-code: in this layout, or its kernel's (each
		// session's agents' wire logs alone, read as Kimi Work's are).
		roots = append(roots, filepath.Join(home, ".kimi-code", "sessions"))
	}
	return roots
}

// Bundles finds the sessions under root (the sessions directory, a work
// directory's, a session's, or one of its files): each context.jsonl,
// with the wire.jsonl beside it, is a bundle; so is each <session
// id>.jsonl directly in a work directory's directory, the form of early
// versions; and each <session>/agents/<agent>/wire.jsonl of Kimi Code's
// kernel, alone.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() && filepath.Base(root) == wireFile && !kimiwork.IsWire(root) {
		root = filepath.Join(filepath.Dir(root), contextFile)
	}
	bs, err := importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		n := d.Name()
		// Kimi Code's kernel keeps a session's agents' wire logs alone,
		// <session>/agents/<agent>/wire.jsonl, read as Kimi Work's are.
		return n == contextFile || kimiwork.IsWire(path) ||
			(strings.HasSuffix(n, ".jsonl") && n != wireFile && !strings.HasPrefix(n, "context") && isHash(filepath.Base(filepath.Dir(path))))
	})
	for i := range bs {
		if filepath.Base(bs[i].Name()) != contextFile {
			continue
		}
		if w := filepath.Join(filepath.Dir(bs[i].Name()), wireFile); regular(w) {
			bs[i].Files = append(bs[i].Files, w)
		}
	}
	return bs, err
}

// isHash reports whether name is a work directory's directory: the MD5
// of its path, in hex.
func isHash(name string) bool {
	if len(name) != 32 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}

func regular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Read reads one session's context, with its wire log when it has one.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	if name == "" {
		return nil, errors.New("kimi: empty bundle")
	}
	if kimiwork.IsWire(name) {
		return kimiwork.ReadWire(ctx, Tool, name)
	}
	f, fi, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("kimi: %w", err)
	}
	defer f.Close()
	dir := filepath.Dir(name)
	id := filepath.Base(dir)
	hashDir := filepath.Dir(dir)
	if filepath.Base(name) != contextFile {
		// An early version's <session id>.jsonl.
		id, hashDir = strings.TrimSuffix(filepath.Base(name), ".jsonl"), dir
	}
	s := &reading{res: &importer.Result{}, name: name, id: id, modified: fi.ModTime()}
	s.cwd = workDir(filepath.Dir(filepath.Dir(hashDir)), filepath.Base(hashDir))
	if len(b.Files) > 1 {
		if w, _, err := importer.Open(b.Files[1], importer.MaxFile); err == nil {
			err = s.wire(ctx, b.Files[1], w)
			w.Close()
			if err != nil {
				return nil, fmt.Errorf("kimi: %w", err)
			}
		}
	}
	if err := s.context(ctx, f); err != nil {
		return nil, fmt.Errorf("kimi: %w", err)
	}
	return s.result(), nil
}

// workDir is the work directory whose sessions are in the directory
// named hash, from the list of work directories Kimi keeps in kimi.json
// in its directory share.
func workDir(share, hash string) string {
	f, _, err := importer.Open(filepath.Join(share, "kimi.json"), 16<<20)
	if err != nil {
		return ""
	}
	defer f.Close()
	var meta struct {
		WorkDirs []struct {
			Path string `json:"path"`
		} `json:"work_dirs"`
	}
	if json.NewDecoder(f).Decode(&meta) != nil {
		return ""
	}
	for _, w := range meta.WorkDirs {
		sum := md5.Sum([]byte(w.Path))
		if hex.EncodeToString(sum[:]) == hash {
			return w.Path
		}
	}
	return ""
}
