package openhands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads the conversations OpenHands' command-line agent and SDK
// keep on disk. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is OpenHands' name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "openhands"

// The files of a conversation's directory.
const (
	stateFile = "base_state.json"
	eventsDir = "events"
)

// The variables OpenHands reads for its directories.
const (
	envConversations = "OPENHANDS_CONVERSATIONS_DIR"
	envPersistence   = "OPENHANDS_PERSISTENCE_DIR"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": the conversation's model names its provider.
func (Format) Provider() string { return "" }

// Roots is OpenHands' conversations directory:
// $OPENHANDS_CONVERSATIONS_DIR, else $OPENHANDS_PERSISTENCE_DIR/conversations,
// else ~/.openhands/conversations.
func (Format) Roots(env func(string) string, home string) []string {
	if env != nil {
		if d := env(envConversations); d != "" {
			return []string{d}
		}
	}
	return importer.Under(importer.ToolDir(env, home, envPersistence, ".openhands"), "conversations")
}

// Bundles finds the conversations under root (the conversations
// directory, one conversation's directory, or one of its files): one
// bundle per directory holding an events directory, its base_state.json
// first when it has one, then its events in order.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		root = filepath.Dir(root)
		if filepath.Base(root) == eventsDir {
			root = filepath.Dir(root)
		}
	}
	files, err := importer.FileBundles(ctx, Tool, root, func(path string, d fs.DirEntry) bool {
		n := d.Name()
		return (n == stateFile && isDir(filepath.Join(filepath.Dir(path), eventsDir))) ||
			(filepath.Base(filepath.Dir(path)) == eventsDir && strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, "."))
	})
	if err != nil && files == nil {
		return nil, err
	}
	// The state first, naming the bundle; then the events, which
	// OpenHands names in order (event-00000-<id>.json).
	out := importer.ByDir(files, func(p string) string {
		dir := filepath.Dir(p)
		if filepath.Base(dir) == eventsDir {
			dir = filepath.Dir(dir)
		}
		return dir
	}, sortKey, func(string) bool { return true })
	return out, err
}

func sortKey(p string) string {
	if filepath.Base(p) == stateFile {
		return ""
	}
	return filepath.Base(p)
}

func isDir(p string) bool {
	fi, err := importer.StatRoot(Tool, p)
	return err == nil && fi != nil && fi.IsDir()
}

// maxEvents bounds the events of one conversation read, each of which is
// a file; together they are read up to importer.MaxFile bytes.
const maxEvents = 100_000

// Read reads one conversation's state and events.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if b.Name() == "" {
		return nil, errors.New("openhands: empty bundle")
	}
	c := conversation{dir: filepath.Dir(b.Name())}
	if filepath.Base(c.dir) == eventsDir {
		c.dir = filepath.Dir(c.dir)
	}
	var total int64
	for i, name := range b.Files {
		if i > maxEvents {
			return nil, fmt.Errorf("openhands: more than %d events in %s", maxEvents, c.dir)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, fi, err := importer.Open(name, importer.MaxDocument)
		if err == nil {
			if total += fi.Size(); total > importer.MaxFile {
				f.Close()
				return nil, fmt.Errorf("openhands: the events of %s are over %d bytes", c.dir, int64(importer.MaxFile))
			}
		}
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("openhands: %w", err)
			}
			c.missing = append(c.missing, importer.PathProblem(name, err))
			continue
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("openhands: %w", err)
		}
		if filepath.Base(name) == stateFile {
			c.state, c.statePath = data, name
			continue
		}
		c.events = append(c.events, file{path: name, data: data})
	}
	return c.parse(), nil
}
