// Package chatgpttui reads the conversations of j178's chatgpt (the
// terminal client github.com/j178/chatgpt, a Go program) for loom's
// importer.
//
// chatgpt keeps every conversation in one JSON document,
// conversations.json of its configuration directory ($CHATGPT_CONFIG_DIR,
// else ~/.config/chatgpt), written again whole when its interface
// quits and every so often while it runs: conversations, a list of
// {config (prompt, model, …), forgotten, context, pending}, each of
// the last three question-and-answer pairs ({question, answer}):
// forgotten the pairs that fell out of the context window, context the
// pairs still sent, pending a question whose answer was arriving.
//
// A conversation is a session; as chatgpt keeps no id, its id is made
// of its first pair (a digest of its question and answer), which stays
// as the conversation grows and when another is removed. Each pair is
// a prompt and a reply (of the conversation's model), in the order
// forgotten, context, pending. chatgpt keeps no time, no usage and no
// tool call: every message has the file's modification time. A document
// that is not JSON is a problem.
//
// The format is the one chatgpt v1.3.5 wrote when run offline against
// a fake model (testdata/real).
package chatgpttui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads chatgpt's conversations. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is j178's chatgpt's name in loom.
const Tool = "chatgpt-tui"

// file is the document of every conversation.
const file = "conversations.json"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": chatgpt talks to whatever its endpoint names.
func (Format) Provider() string { return "" }

// Roots is chatgpt's configuration directory.
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.EnvPath(env, home)("CHATGPT_CONFIG_DIR"); d != "" {
		return []string{d}
	}
	return importer.Under(home, ".config", "chatgpt")
}

// Bundles is the conversations.json under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool { return d.Name() == file })
}

// pair is a question and its answer.
type pair struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// document is conversations.json.
type document struct {
	Conversations *[]struct {
		Config struct {
			Model string `json:"model"`
		} `json:"config"`
		Forgotten []pair `json:"forgotten"`
		Context   []pair `json:"context"`
		Pending   *pair  `json:"pending"`
	} `json:"conversations"`
}

// Read reads every conversation of one document.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// parse reads every conversation of the document data of file name,
// modified at modified.
func parse(name string, data []byte, modified time.Time) *importer.Result {
	res := &importer.Result{}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil || doc.Conversations == nil {
		reason := "no conversations"
		if err != nil {
			reason = importer.Excerpt(err.Error())
		}
		res.Problemf(name, 0, "not chatgpt's conversations: "+reason)
		return res
	}
	res.CheckUTF8(name, 0, data)
	seen := map[string]int{}
	for _, c := range *doc.Conversations {
		pairs := append(append([]pair{}, c.Forgotten...), c.Context...)
		if c.Pending != nil {
			pairs = append(pairs, *c.Pending)
		}
		if len(pairs) == 0 {
			res.Skip("empty-session")
			continue
		}
		sum := sha256.Sum256([]byte(pairs[0].Question + "\x00" + pairs[0].Answer))
		id := "c-" + hex.EncodeToString(sum[:8])
		if n := seen[id]; n > 0 {
			seen[id]++
			id += "-" + strconv.Itoa(n)
		} else {
			seen[id] = 1
		}
		model := importer.Clip(c.Config.Model, 256)
		t := &importer.Transcript{Res: res}
		for i, p := range pairs {
			mid := strconv.Itoa(i)
			t.Add(text(mid+"/q", loom.RoleUser, "", p.Question, modified))
			if strings.TrimSpace(p.Answer) != "" {
				t.Add(text(mid+"/a", loom.RoleAssistant, model, p.Answer, modified))
			}
		}
		if s := t.Session(id, name); s != nil {
			s.Model = model
			res.Sessions = append(res.Sessions, s)
		}
	}
	return res
}

// text is a message of one text part.
func text(id, role, model, s string, at time.Time) *loom.Message {
	m := &loom.Message{ID: id, Role: role, Model: model, CreatedAt: at}
	if strings.TrimSpace(s) != "" {
		m.Parts = []loom.Part{{ID: id + "/0", Type: loom.PartText, Text: s}}
	}
	return m
}

// CountSessions counts the conversations of one document that hold a
// question, as Read makes sessions of them: `--from list` counts each.
func (f Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	res, err := f.Read(ctx, b)
	if err != nil {
		return 0, err
	}
	if len(res.Problems) > 0 {
		return 0, errors.New(res.Problems[0].String())
	}
	return len(res.Sessions), nil
}
