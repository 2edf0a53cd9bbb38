// Package chatgptcli reads the threads of ChatGPT CLI (kardolus's
// chatgpt-cli, the chatgpt command, a Go program) for loom's importer.
//
// ChatGPT CLI keeps each thread as one JSON document, <thread>.json, in
// its history directory ($OPENAI_DATA_HOME, else the history directory
// of its configuration directory, $OPENAI_CONFIG_HOME or
// ~/.chatgpt-cli). A document is a list of messages in the Chat
// Completions form, each with the time it was made: role system (the
// role the thread was asked to play), user or assistant, content a
// string or a list of parts, timestamp. ChatGPT CLI writes the whole
// document again after each reply, and drops the oldest messages but
// the first when the thread outgrows its context window.
//
// A thread is a session named by the thread; each message is a loom
// message whose id is its time, role and rank among the messages of
// that time and role, so that a message keeps its id when older ones
// are dropped (an early file without times falls back to the message's
// index). ChatGPT CLI keeps no usage, no model and no tool call in a
// thread (its agent mode keeps the goal and the final answer; an MCP
// call's result is kept as a reply). A document that is not JSON is a
// problem.
//
// The format is the one ChatGPT CLI v1.10.11 wrote when run offline
// against a fake model (testdata/real).
package chatgptcli

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom/importer"
)

// Format reads ChatGPT CLI's threads. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is ChatGPT CLI's name in loom.
const Tool = "chatgpt-cli"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": ChatGPT CLI talks to whatever its url names.
func (Format) Provider() string { return "" }

// Roots is ChatGPT CLI's history directory, as it finds it.
func (Format) Roots(env func(string) string, home string) []string {
	get := importer.EnvPath(env, home)
	if d := get("OPENAI_DATA_HOME"); d != "" {
		return []string{d}
	}
	if d := get("OPENAI_CONFIG_HOME"); d != "" {
		return []string{filepath.Join(d, "history")}
	}
	return importer.Under(home, ".chatgpt-cli", "history")
}

// Bundles lists each thread's document under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".json")
	})
}

// entry is a message of a thread.
type entry struct {
	importer.ChatLine
	Timestamp time.Time `json:"timestamp"`
}

// Read reads one thread's document.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// parse reads the thread document data of file name, modified at
// modified.
func parse(name string, data []byte, modified time.Time) *importer.Result {
	res := &importer.Result{}
	var entries []entry
	if err := json.Unmarshal(data, &entries); err != nil {
		res.Problemf(name, 0, "not a ChatGPT CLI thread: "+importer.Excerpt(err.Error()))
		return res
	}
	res.CheckUTF8(name, 0, data)
	t := &importer.Transcript{Res: res}
	seen := map[string]int{}
	for i, e := range entries {
		at, mid := e.Timestamp.UTC(), "n"+strconv.Itoa(i)
		if at.IsZero() || at.Year() < 2000 {
			at = modified
		} else {
			key := at.Format(time.RFC3339Nano) + "/" + importer.TypeName(e.Role)
			mid = key + "/" + strconv.Itoa(seen[key])
			seen[key]++
		}
		t.AddChat(mid, e.ChatLine, at, false)
	}
	thread := strings.TrimSuffix(filepath.Base(name), ".json")
	s := t.Session(thread, name)
	if s == nil {
		return res
	}
	s.Title = thread
	res.Sessions = append(res.Sessions, s)
	return res
}
