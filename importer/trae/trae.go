// Package trae reads the chats of Trae, ByteDance's editor of the VS
// Code family, for loom's importer; Trae Agent, its open command-line
// agent, is importer/traeagent, and TRAE CLI 2 the traex variant.
//
// Trae keeps its agent's chats in the editor's state databases,
// state.vscdb of workspaceStorage/<hash>/ (the workspace's, whose
// workspace.json names its folder) and of globalStorage/, in the
// user directory of Trae, Trae CN or TRAE SOLO CN: the value of
// ItemTable's key memento/icube-ai-agent-storage is a JSON document
// whose list holds the sessions, each a sessionId, createdAt,
// updatedAt and model, and its messages (role, content, the
// agentTaskContent of an agent's answer, timestamp, model, turnIndex);
// a time is milliseconds, seconds or RFC 3339.
//
// What becomes what: each session of the list is a session under its
// id, its user and assistant messages messages of text (an answer with
// no content takes its agentTaskContent's text: content, text or
// proposal, or its guideline's plan items); other roles are counted as
// skipped. Trae keeps no calls, reasoning or usage there. The later
// builds that keep the agent's data encrypted in ModularData are not
// read.
//
// Learnt from agentsview's reader of it (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad, internal/parser/trae_provider.go
// and trae_layout.go, and its registry's places in types.go); the
// editor cannot run here. testdata is built to that format
// (testdata/README.md).
package trae

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Trae's chats. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Trae's name in loom.
const Tool = "trae"

const (
	stateDB    = "state.vscdb"
	storageKey = "memento/icube-ai-agent-storage"
)

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is none: Trae serves the models of many.
func (Format) Provider() string { return "" }

// Roots are $LOOM_TRAE_DIR when set, else the user directories of
// Trae, Trae CN and TRAE SOLO CN.
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.EnvPath(env, home)("LOOM_TRAE_DIR"); d != "" {
		return []string{d}
	}
	return importer.VSCodeUserDirs(env, home, "Trae", "Trae CN", "TRAE SOLO CN")
}

// Bundles lists each state database under root (with its write-ahead
// log).
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return d.Name() == stateDB
	})
	for i := range bs {
		bs[i] = importer.SQLiteBundle(bs[i].Name())
	}
	return bs, err
}

// stamp is a time as Trae writes it: milliseconds, seconds or RFC 3339.
type stamp struct{ time.Time }

func (s *stamp) UnmarshalJSON(data []byte) error {
	var n float64
	if json.Unmarshal(data, &n) == nil {
		if n > 0 && n < 1e11 {
			n *= 1000
		}
		s.Time = importer.Millis(n)
		return nil
	}
	var v string
	if json.Unmarshal(data, &v) == nil {
		s.Time = importer.ISOTime(v)
	}
	return nil
}

type session struct {
	SessionID string `json:"sessionId"`
	CreatedAt stamp  `json:"createdAt"`
	UpdatedAt stamp  `json:"updatedAt"`
	Model     string `json:"model"`
	Messages  []struct {
		Role      string          `json:"role"`
		Content   string          `json:"content"`
		AgentTask json.RawMessage `json:"agentTaskContent"`
		Timestamp stamp           `json:"timestamp"`
		Model     string          `json:"model"`
	} `json:"messages"`
}

// Read reads the sessions of one state database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name, db, err := importer.OpenDBBundle(ctx, Tool, "Trae", b, "ItemTable")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res := &importer.Result{}
	var value []byte
	err = db.QueryRowContext(ctx, `SELECT CASE WHEN length(value) > ? THEN NULL ELSE value END FROM ItemTable WHERE key = ?`, importer.MaxFile, storageKey).Scan(&value)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return res, nil // another editor's state, or Trae's with no chat
		}
		return nil, importer.SQLiteError(Tool, name, err)
	}
	var store struct {
		List []json.RawMessage `json:"list"`
	}
	if err := json.Unmarshal(value, &store); err != nil {
		res.Problemf(name, 0, storageKey+": "+importer.Excerpt(err.Error()))
		return res, nil
	}
	cwd := workspace(name)
	for i, raw := range store.List {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var s session
		if err := json.Unmarshal(raw, &s); err != nil {
			res.Problemf(name, 0, storageKey+": session "+strconv.Itoa(i)+": "+importer.Excerpt(err.Error()))
			continue
		}
		if !utf8.Valid(raw) {
			res.Problemf(name, 0, storageKey+": session "+strconv.Itoa(i)+": "+importer.NotUTF8)
		}
		t := &importer.Transcript{Res: res}
		at := cmp.Or(s.CreatedAt.Time, s.UpdatedAt.Time)
		for j, m := range s.Messages {
			if ts := m.Timestamp.Time; ts.After(at) {
				at = ts
			}
			mid := strconv.Itoa(j)
			msg := &loom.Message{ID: mid, CreatedAt: at}
			text := strings.TrimSpace(m.Content)
			switch strings.ToLower(strings.TrimSpace(m.Role)) {
			case "user":
				msg.Role = loom.RoleUser
			case "assistant":
				msg.Role, msg.Model = loom.RoleAssistant, cmp.Or(m.Model, s.Model)
				if text == "" {
					text = strings.TrimSpace(taskText(m.AgentTask))
				}
			default:
				res.Skip("unknown:" + importer.TypeName(m.Role))
				continue
			}
			if text != "" {
				msg.Parts = []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: text}}
			}
			t.Add(msg)
		}
		sess := t.Session(importer.LineID(cmp.Or(strings.TrimPrefix(s.SessionID, "trae:"), strconv.Itoa(i))), name)
		if sess == nil {
			continue
		}
		sess.Cwd, sess.Model = cwd, s.Model
		if !s.UpdatedAt.IsZero() {
			sess.UpdatedAt = s.UpdatedAt.Time
		}
		res.Keep(sess, "session")
	}
	return res, nil
}

// taskText is the text of an agent's answer kept as agentTaskContent:
// a text, or an object's content, text or proposal, or its guideline's
// plan items.
func taskText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Content   string `json:"content"`
		Text      string `json:"text"`
		Proposal  string `json:"proposal"`
		Guideline struct {
			PlanItems []struct {
				Content string `json:"content"`
			} `json:"planItems"`
		} `json:"guideline"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	if v := cmp.Or(strings.TrimSpace(obj.Content), strings.TrimSpace(obj.Text), strings.TrimSpace(obj.Proposal)); v != "" {
		return v
	}
	var items []string
	for _, it := range obj.Guideline.PlanItems {
		items = append(items, it.Content)
	}
	return strings.Join(items, "\n")
}

// workspace is the folder workspace.json beside the database names, ""
// for the global storage's or a workspace of several folders.
func workspace(name string) string {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(name), "workspace.json"))
	if err != nil {
		return ""
	}
	var w struct {
		Folder string `json:"folder"`
	}
	if json.Unmarshal(data, &w) != nil || w.Folder == "" {
		return ""
	}
	return importer.FileURIPath(w.Folder)
}
