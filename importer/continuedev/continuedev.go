package continuedev

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom/importer"
)

// Format reads the sessions of Continue: its CLI (cn) and its VS Code
// and JetBrains extensions, which keep them in the same place and form.
// It implements importer.Format.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Continue's name in loom: the surface of its imported sessions
// and the TOOL of `loom session import --from TOOL`.
const Tool = "continue"

// globalEnv is the variable that moves Continue's global directory
// (~/.continue).
const globalEnv = "CONTINUE_GLOBAL_DIR"

// indexName is the list of sessions Continue keeps beside them.
const indexName = "sessions.json"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Continue records the title of the model a session
// used, not its provider.
func (Format) Provider() string { return "" }

// Roots is Continue's sessions directory: $CONTINUE_GLOBAL_DIR/sessions,
// else ~/.continue/sessions.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, globalEnv, ".continue"), "sessions")
}

// Bundles finds the session files under root: Continue's global
// directory, its sessions directory, or one session file. Each
// <session id>.json is a bundle; sessions.json, the list of sessions, is
// read beside them for their start times but is no session's file, so
// that a session is read again only when its own file changed.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		if isSession(filepath.Base(root)) {
			return []importer.Bundle{{Files: []string{root}}}, nil
		}
		return nil, nil
	}
	if sub := filepath.Join(root, "sessions"); isDir(sub) {
		root = sub
	}
	return importer.FilesIn(ctx, Tool, root, isSession)
}

// isSession reports whether a directory entry is a session file: a
// .json file other than the list of sessions, not hidden or temporary.
func isSession(name string) bool {
	return strings.HasSuffix(name, ".json") && name != indexName && !strings.HasPrefix(name, ".") && len(name) > len(".json")
}

func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

// Read reads one session file.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, f, fi, err := importer.OpenBundle(Tool, b, importer.MaxDocument)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("continue: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := strings.TrimSuffix(filepath.Base(name), ".json")
	created := index(filepath.Join(filepath.Dir(name), indexName))[id]
	return parse(name, data, created, fi.ModTime())
}

// index is the start time of each session sessions.json lists, read
// once per version of the file.
func index(path string) map[string]time.Time {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > importer.MaxDocument {
		return nil
	}
	indexCache.Lock()
	defer indexCache.Unlock()
	if c, ok := indexCache.m[path]; ok && c.size == fi.Size() && c.mod.Equal(fi.ModTime()) {
		return c.times
	}
	f, _, err := importer.Open(path, importer.MaxDocument)
	if err != nil {
		return nil
	}
	defer f.Close()
	var list []struct {
		SessionID   string          `json:"sessionId"`
		DateCreated json.RawMessage `json:"dateCreated"`
	}
	if json.NewDecoder(f).Decode(&list) != nil {
		return nil
	}
	times := make(map[string]time.Time, len(list))
	for _, s := range list {
		if t := millis(s.DateCreated); !t.IsZero() {
			times[s.SessionID] = t
		}
	}
	if indexCache.m == nil {
		indexCache.m = map[string]indexEntry{}
	}
	indexCache.m[path] = indexEntry{size: fi.Size(), mod: fi.ModTime(), times: times}
	return times
}

var indexCache struct {
	sync.Mutex
	m map[string]indexEntry
}

type indexEntry struct {
	size  int64
	mod   time.Time
	times map[string]time.Time
}

// millis reads Continue's time in milliseconds since the epoch, a
// number or a string of digits; the zero time for anything else.
func millis(raw json.RawMessage) time.Time {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f < 95_617_584_000_000) {
		return time.Time{}
	}
	return time.UnixMilli(int64(f)).UTC()
}
