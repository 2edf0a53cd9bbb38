// Package hermes reads the sessions of Hermes Agent (Nous Research's
// agent, the hermes command) for loom's importer.
//
// Hermes keeps a transcript per session in ~/.hermes/sessions
// ($HERMES_HOME replaces ~/.hermes), <id>.jsonl named by the session's
// start (20260403_153620_5a3e2ff1). The first line is the session's
// metadata (role session_meta: model, platform, time); each other line
// is a message in the chat-completions form with its time: user,
// assistant (content, reasoning, tool_calls), tool (a call's result).
//
// Each message is kept under its line number at its time, a tool
// message completing its call; the metadata's model names the session.
// Hermes records no usage per message in the transcript: state.db,
// where it keeps its session index and totals, is not read. A line
// that is not a message is a problem; the rest is read.
//
// Hermes is a Python program (npm has only an unofficial wrapper that
// installs it from elsewhere): the fixtures in testdata are written to
// the format of Hermes's source and of agentsview's and cass's readers.
package hermes

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads Hermes Agent's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Hermes Agent's name in loom.
const Tool = "hermes"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": Hermes calls the provider the user configures.
func (Format) Provider() string { return "" }

// Roots is Hermes's sessions directory.
func (Format) Roots(env func(string) string, home string) []string {
	if d := importer.ToolDir(env, home, "HERMES_HOME", ".hermes"); d != "" {
		return []string{filepath.Join(d, "sessions")}
	}
	return nil
}

// Bundles lists each <id>.jsonl transcript under root.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
}

// line is a transcript line: its metadata or a message, with its time.
type line struct {
	importer.ChatLine
	Timestamp string `json:"timestamp"`
	Model     string `json:"model"`
}

// Read reads one transcript.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	name := b.Name()
	f, fi, err := importer.Open(name, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("hermes: %w", err)
	}
	defer f.Close()
	res := &importer.Result{}
	t := &importer.Transcript{Res: res}
	model := ""
	last := fi.ModTime().UTC()
	err = importer.Lines(ctx, f, func(n int, b []byte) error {
		var l line
		if !res.DecodeLine(name, n, b, &l) {
			return nil
		}
		if at := importer.ISOTime(l.Timestamp); !at.IsZero() {
			last = at
		}
		if l.Role == "session_meta" {
			model = strings.TrimSpace(l.Model)
			res.Skip("session_meta")
			return nil
		}
		if m := t.AddChat(strconv.Itoa(n), l.ChatLine, last, false); m != nil && m.Role == "assistant" {
			m.Model = model
		}
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, fmt.Errorf("hermes: %s: %w", name, err)
	}
	if s := t.Session(strings.TrimSuffix(filepath.Base(name), ".jsonl"), name); s != nil {
		s.Model = model
		res.Sessions = append(res.Sessions, s)
	}
	return res, nil
}
