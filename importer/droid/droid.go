package droid

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads Factory's droid sessions. It implements importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is droid's name in loom: the surface of its imported sessions and
// the TOOL of `loom session import --from TOOL`.
const Tool = "droid"

// EnvHome is the variable droid takes for the home directory under
// which it keeps .factory.
const EnvHome = "FACTORY_HOME_OVERRIDE"

// settingsSuffix ends the name of the file droid keeps beside each
// session's <id>.jsonl: the session's settings and its token totals.
const settingsSuffix = ".settings.json"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": droid names the model of each reply, not its provider.
func (Format) Provider() string { return "" }

// Roots is droid's sessions directory: $FACTORY_HOME_OVERRIDE/.factory/sessions,
// else ~/.factory/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	if env != nil {
		if h := env(EnvHome); h != "" {
			home = h
		}
	}
	return importer.Under(home, ".factory", "sessions")
}

// Bundles lists every session under root (droid keeps a directory of
// sessions per working directory): each <id>.jsonl, with its
// <id>.settings.json when there is one, so that a change of the token
// totals alone is noticed. root itself may be one session file.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
	for i, b := range bs {
		settings := strings.TrimSuffix(b.Name(), ".jsonl") + settingsSuffix
		if fi, err := os.Stat(settings); err == nil && fi.Mode().IsRegular() {
			bs[i].Files = append(bs[i].Files, settings)
		}
	}
	return bs, err
}

var errEmpty = errors.New("droid: empty bundle")

// Read reads one session file and the token totals beside it.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path := b.Name()
	if path == "" {
		return nil, errEmpty
	}
	f, fi, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("droid: %w", err)
	}
	defer f.Close()
	res, err := read(ctx, path, f, fi.ModTime())
	if err != nil || len(res.Sessions) == 0 {
		return res, err
	}
	if len(b.Files) > 1 {
		totals(res, b.Files[1])
	}
	return res, nil
}
