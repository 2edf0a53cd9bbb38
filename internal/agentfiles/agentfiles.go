// Package agentfiles writes copies of real agents' session files as new
// sessions, where and as each agent names a session of its own: every
// UUID in the file replaced by another derived from it and a seed (so
// each copy is a session of its own, with messages of its own), under
// the file name the agent gives that session id. Tests and benchmarks
// use it to fill an agent's directory with sessions it did write.
package agentfiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

var (
	uuidRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	})
	geminiTim = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(lastUpdated|startTime)":"[^"]*"`) })
)

// Fresh is data with every UUID replaced by one derived from it and
// seed: the same seed gives the same copy.
func Fresh(data []byte, seed string) []byte {
	return uuidRE().ReplaceAllFunc(data, func(u []byte) []byte {
		return []byte(uuid.NewSHA1(uuid.NameSpaceOID, append([]byte(seed+"/"), u...)).String())
	})
}

// firstID is the string value of key in the first JSON line of data
// that has one (under payload for Codex's session_meta).
func firstID(data []byte, key string) (string, error) {
	for _, line := range strings.Split(string(data), "\n") {
		var v map[string]any
		if json.Unmarshal([]byte(line), &v) != nil {
			continue
		}
		if s, ok := v[key].(string); ok && s != "" {
			return s, nil
		}
		if p, ok := v["payload"].(map[string]any); ok {
			if s, ok := p[key].(string); ok && s != "" {
				return s, nil
			}
		}
	}
	return "", fmt.Errorf("no %s in the file", key)
}

func write(path string, data []byte, at time.Time) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	if !at.IsZero() {
		if err := os.Chtimes(path, at, at); err != nil {
			return "", err
		}
	}
	return path, nil
}

// ClaudeCode writes a fresh copy of data, a Claude Code session file, as
// projects/<slug>/<session id>.jsonl, modified at at (zero: now).
func ClaudeCode(projects, slug string, data []byte, seed string, at time.Time) (string, error) {
	data = Fresh(data, seed)
	id, err := firstID(data, "sessionId")
	if err != nil {
		return "", err
	}
	return write(filepath.Join(projects, slug, id+".jsonl"), data, at)
}

// Codex writes a fresh copy of data, a Codex rollout, as
// sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl of at, modified at at.
func Codex(sessions string, data []byte, seed string, at time.Time) (string, error) {
	data = Fresh(data, seed)
	id, err := firstID(data, "id")
	if err != nil {
		return "", err
	}
	if at.IsZero() {
		at = time.Now()
	}
	name := "rollout-" + at.UTC().Format("2006-01-02T15-04-05") + "-" + id + ".jsonl"
	return write(filepath.Join(sessions, at.UTC().Format("2006/01/02"), name), data, at)
}

// Gemini writes a fresh copy of data, a Gemini CLI chat recording in
// JSON lines, into chats as session-<time>-<id prefix>.jsonl, its
// startTime and lastUpdated set to at and the file modified at at.
func Gemini(chats string, data []byte, seed string, at time.Time) (string, error) {
	data = Fresh(data, seed)
	id, err := firstID(data, "sessionId")
	if err != nil {
		return "", err
	}
	if len(id) < 8 {
		return "", errors.New("a session id shorter than 8")
	}
	if at.IsZero() {
		at = time.Now()
	}
	stamp := at.UTC().Format("2006-01-02T15:04:05.000Z")
	data = geminiTim().ReplaceAllFunc(data, func(m []byte) []byte {
		k, _, _ := strings.Cut(string(m), ":")
		return []byte(k + `:"` + stamp + `"`)
	})
	name := "session-" + at.UTC().Format("2006-01-02T15-04") + "-" + id[:8] + ".jsonl"
	return write(filepath.Join(chats, name), data, at)
}
