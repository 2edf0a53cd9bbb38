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
// <id>.messages.json, beside its <id>.json.
const messagesSuffix = ".messages.json"

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
// the session's record, when there is one. root itself may be one
// messages file.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), messagesSuffix)
	})
	for i, b := range bs {
		record := strings.TrimSuffix(b.Name(), messagesSuffix) + ".json"
		if fi, err := os.Stat(record); err == nil && fi.Mode().IsRegular() {
			bs[i].Files = append(bs[i].Files, record)
		}
	}
	return bs, err
}

// Read reads one session's messages file and its record.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if b.Name() == "" {
		return nil, errors.New("cline: empty bundle")
	}
	data, mod, err := readFile(b.Name())
	if err != nil {
		return nil, err
	}
	var record []byte
	if len(b.Files) > 1 {
		// A record that cannot be read leaves the session without its
		// title, directory and parent; the messages are still read.
		record, _, _ = readFile(b.Files[1])
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return parse(b.Name(), data, record, mod)
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
