package antigravity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads what Google's Antigravity keeps of its conversations in a
// form that can be read: their artifacts. The zero value is ready to
// use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Antigravity's name in loom: the surface of its imported
// sessions and the TOOL of `loom session import --from TOOL`.
const Tool = "antigravity"

// The directories of Antigravity's data: each conversation's artifacts
// under brain/<conversation id>/, the conversation itself, encrypted,
// in conversations/<conversation id>.pb.
const (
	brainDir         = "brain"
	conversationsDir = "conversations"
	metaSuffix       = ".metadata.json"
)

// known are the artifacts Antigravity's agent writes as it works, in
// the order it writes them; others follow by name.
var known = []string{"task.md", "implementation_plan.md", "walkthrough.md"}

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Google's.
func (Format) Provider() string { return "google" }

// Roots is Antigravity's data directory, ~/.gemini/antigravity.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(home, ".gemini", "antigravity")
}

// Bundles finds the conversations' artifact directories under root (the
// data directory, its brain directory, one conversation's, or one of
// its files): one bundle per directory of brain/ holding a markdown
// artifact, its artifacts in the order they are read, each with its
// metadata file when it has one.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		root = filepath.Dir(root)
	}
	files, err := importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		n := d.Name()
		return filepath.Base(filepath.Dir(filepath.Dir(path))) == brainDir && !strings.HasPrefix(n, ".") &&
			(strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".md"+metaSuffix))
	})
	if err != nil && files == nil {
		return nil, err
	}
	out := importer.ByDir(files, filepath.Dir, rank, func(first string) bool {
		return strings.HasSuffix(first, ".md") // else metadata of artifacts that are gone
	})
	return out, err
}

// rank orders a conversation's files: the known artifacts in the order
// they are written, the others by name, each artifact's metadata after
// it.
func rank(path string) string {
	n := filepath.Base(path)
	art := strings.TrimSuffix(n, metaSuffix)
	i := slices.Index(known, art)
	if i < 0 {
		i = len(known)
	}
	return fmt.Sprintf("%d %s %t", i, art, art != n)
}

// Read reads one conversation's artifacts.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if b.Name() == "" {
		return nil, errors.New("antigravity: empty bundle")
	}
	dir := filepath.Dir(b.Name())
	id := filepath.Base(dir)
	res := &importer.Result{}
	arts := map[string]*artifact{}
	var names []string
	for _, name := range b.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, fi, err := importer.Open(name, importer.MaxDocument)
		if err != nil {
			if name == b.Name() {
				return nil, fmt.Errorf("antigravity: %w", err)
			}
			res.Problems = append(res.Problems, importer.PathProblem(name, err))
			continue
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("antigravity: %w", err)
		}
		base := filepath.Base(name)
		art := strings.TrimSuffix(base, metaSuffix)
		// The rule for bad input (importer/badinput.go), for each file
		// of the conversation: an artifact is Markdown, which any text
		// is, so its garbage is bytes that are not text.
		var meta metadata
		switch {
		case res.Empty(name):
			continue
		case art != base && json.Unmarshal(data, &meta) != nil:
			res.Unreadablef(name, 0, "not an artifact's metadata")
			continue
		case art == base && !importer.IsText(data):
			res.NotText(name)
			continue
		case art != base:
			res.CheckUTF8(name, 0, data)
		}
		a := arts[art]
		if a == nil {
			a = &artifact{}
			arts[art] = a
			names = append(names, art)
		}
		if art != base {
			a.meta = meta
			continue
		}
		a.text, a.modified, a.path = string(data), fi.ModTime(), name
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(dir)), conversationsDir, id+".pb")); err == nil {
		// The conversation itself: encrypted, not read.
		res.Skip("encrypted-conversation")
	}
	return build(res, id, names, arts), nil
}

// artifact is one markdown artifact with its metadata.
type artifact struct {
	path     string
	text     string
	modified time.Time
	meta     metadata
}

// metadata is an artifact's metadata file.
type metadata struct {
	ArtifactType string `json:"artifactType"`
	Summary      string `json:"summary"`
	UpdatedAt    string `json:"updatedAt"`
}

func build(res *importer.Result, id string, names []string, arts map[string]*artifact) *importer.Result {
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Provider: "google"}
	for _, n := range names {
		a := arts[n]
		if a.path == "" || strings.TrimSpace(a.text) == "" {
			res.Skip("empty-artifact")
			continue
		}
		if s.Path == "" {
			s.Path = a.path
		}
		at := a.modified.UTC()
		if t, err := time.Parse(time.RFC3339Nano, a.meta.UpdatedAt); err == nil {
			at = t.UTC()
		}
		mid := n
		p := loom.Part{ID: mid + "/0", Type: loom.PartText, Text: a.text}
		meta := map[string]string{"artifact": n}
		if a.meta.ArtifactType != "" {
			meta["artifact_type"] = a.meta.ArtifactType
		}
		if a.meta.Summary != "" {
			meta["summary"] = a.meta.Summary
		}
		p.Metadata, _ = json.Marshal(meta)
		s.Messages = append(s.Messages, &loom.Message{ID: mid, Role: loom.RoleAssistant, Provider: "google", Parts: []loom.Part{p}, CreatedAt: at, CompletedAt: &at})
		if s.Title == "" && n == "task.md" {
			s.Title = heading(a.text)
		}
		if s.CreatedAt.IsZero() || at.Before(s.CreatedAt) {
			s.CreatedAt = at
		}
		if at.After(s.UpdatedAt) {
			s.UpdatedAt = at
		}
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res
	}
	res.Sessions = []*importer.Session{s}
	return res
}

// heading is the text of a markdown document's first heading.
func heading(md string) string {
	for _, l := range strings.Split(md, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "#"); ok {
			return strings.TrimSpace(strings.TrimLeft(t, "#"))
		}
	}
	return ""
}
