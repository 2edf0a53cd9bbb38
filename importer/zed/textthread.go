package zed

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// A text thread of Zed's assistant panel (conversations/<summary> -
// <n>.zed.json) is one buffer of text and the messages that divide it:
// each message starts at a byte offset of the text and runs to the next
// one's start. Versions 0.2.0 and later keep each message's role in its
// metadata; 0.1.0 kept them in message_metadata, by message id.

type savedContext struct {
	ID              string         `json:"id"`
	Zed             string         `json:"zed"`
	Version         string         `json:"version"`
	Text            string         `json:"text"`
	Summary         string         `json:"summary"`
	Messages        []savedMessage `json:"messages"`
	MessageMetadata map[string]struct {
		Role string `json:"role"`
	} `json:"message_metadata"`
}

type savedMessage struct {
	ID       json.RawMessage `json:"id"`
	Start    int             `json:"start"`
	Metadata *struct {
		Role string `json:"role"`
	} `json:"metadata"`
}

// maxContext bounds a text thread's file.
const maxContext = 256 << 20

// readContext reads one saved text thread as a session.
func readContext(path string) (*importer.Result, error) {
	f, fi, err := importer.Open(path, maxContext)
	if err != nil {
		return nil, fmt.Errorf("zed: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxContext+1))
	if err != nil {
		return nil, fmt.Errorf("zed: %s: %w", path, err)
	}
	if len(data) > maxContext {
		return nil, fmt.Errorf("zed: %s: larger than %d MiB", path, maxContext>>20)
	}
	var c savedContext
	if err := json.Unmarshal(data, &c); err != nil || c.Zed != "context" {
		return nil, fmt.Errorf("zed: %s is not a text thread of Zed's", path)
	}
	res := &importer.Result{}
	res.CheckUTF8(path, 0, data)
	id := cmp.Or(c.ID, strings.TrimSuffix(filepath.Base(path), contextsSuffix))
	if strings.ContainsAny(id, "\r\n") {
		return nil, fmt.Errorf("zed: %s: not a usable id", path)
	}
	at := fi.ModTime().UTC()
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Title: strings.TrimSpace(c.Summary), Path: path, CreatedAt: at, UpdatedAt: at}
	msgs := slices.Clone(c.Messages)
	slices.SortStableFunc(msgs, func(a, b savedMessage) int { return a.Start - b.Start })
	seen := map[string]bool{}
	for i, m := range msgs {
		start, end := m.Start, len(c.Text)
		if i+1 < len(msgs) {
			end = msgs[i+1].Start
		}
		if start < 0 || start > end || end > len(c.Text) {
			res.Problemf(path, 0, "message "+strconv.Itoa(i)+": its range is outside the text")
			continue
		}
		key := messageKey(m.ID)
		role := ""
		if m.Metadata != nil {
			role = m.Metadata.Role
		} else if md, ok := c.MessageMetadata[key]; ok {
			role = md.Role
		}
		var r string
		switch role {
		case "user":
			r = loom.RoleUser
		case "assistant":
			r = loom.RoleAssistant
		case "system":
			r = loom.RoleSystem
		default:
			res.Skip("unknown:" + importer.TypeName(cmp.Or(role, "no-role")))
			continue
		}
		mid := id + ":" + cmp.Or(key, strconv.Itoa(i))
		if seen[mid] {
			res.Skip("duplicate-message")
			continue
		}
		seen[mid] = true
		text := strings.TrimSpace(strings.ToValidUTF8(c.Text[start:end], "\uFFFD"))
		if text == "" {
			res.Skip("empty-message")
			continue
		}
		t := at
		s.Messages = append(s.Messages, &loom.Message{ID: mid, Role: r, CreatedAt: t, CompletedAt: &t,
			Parts: []loom.Part{{ID: mid + "/0", Type: loom.PartText, Text: text}}})
	}
	if len(s.Messages) == 0 {
		res.Skip("empty-thread")
		return res, nil
	}
	res.Sessions = []*importer.Session{s}
	return res, nil
}

// messageKey is a message id as text: a number, or a Lamport timestamp
// {replica_id, value} as <replica>.<value>.
func messageKey(raw json.RawMessage) string {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var l struct {
		Replica json.Number `json:"replica_id"`
		Value   json.Number `json:"value"`
	}
	if json.Unmarshal(raw, &l) == nil && l.Value != "" {
		return cmp.Or(l.Replica.String(), "0") + "." + l.Value.String()
	}
	return ""
}
