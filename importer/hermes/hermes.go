// Package hermes reads the sessions of Hermes Agent (Nous Research's
// agent, the hermes command) for loom's importer.
//
// Hermes kept a transcript per session in ~/.hermes/sessions
// ($HERMES_HOME replaces ~/.hermes), <id>.jsonl named by the session's
// start (20260403_153620_5a3e2ff1). The first line is the session's
// metadata (role session_meta: model, platform, time); each other line
// is a message in the chat-completions form with its time: user,
// assistant (content, reasoning, tool_calls), tool (a call's result).
//
// Each message is kept under its line number at its time, a tool
// message completing its call; the metadata's model names the session.
// A line that is not a message is a problem; the rest is read.
//
// Hermes's current source keeps its sessions in state.db in its home
// directory ("state.db is canonical") and writes a transcript only when
// the database refuses a write: the database is read with the
// transcripts beside it, one bundle (a session in both is read from the
// database). Each row of sessions is a session (title, model, working
// directory, branch; its totals of tokens, calls and cost on its last
// reply, Hermes keeping none per message) and its rows of messages, in
// order, its messages: those Hermes still shows (active, or compacted
// and kept; an archived row that an in-place compaction copied into a
// new active row, the same display_identity, once), tool_calls a
// reply's calls, a tool row completing its call, a compression's
// summary (_compressed_summary) a summary message. A child session that
// a compression of its parent started continues the conversation, a
// fork of it; a /branch child is a fork, a reset child a session of its
// own; a delegated run (_delegate_from, source "tool") is a sub-agent of
// its parent, named by an agent part of the delegate_task call that
// ran it. Each named profile (profiles/NAME/) is read as a home
// directory. The database is opened read-only (importer.OpenSQLite).
//
// Hermes is a Python program (npm has only an unofficial wrapper that
// installs it from elsewhere): the fixtures are written to the format
// of Hermes's source (NousResearch/hermes-agent; state.db's schema is
// SCHEMA_SQL of hermes_state_common.py at
// 00704d087b7ca25039be87baf11706d01f4da355).
package hermes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// Roots is Hermes's home directory.
func (Format) Roots(env func(string) string, home string) []string {
	return importer.Under(importer.ToolDir(env, home, "HERMES_HOME", ".hermes"))
}

// Bundles is, in a home directory that holds state.db, one bundle of
// the database (with its write-ahead log) and the transcripts of
// sessions/, read together (a session in both is read from the
// database); else each <id>.jsonl transcript under root (its sessions/
// when it has one), one bundle each. A named profile (hermes -p NAME,
// profiles/NAME/ of the home directory) is a home directory of its
// own, read the same way.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	fi, err := importer.StatRoot(Tool, root)
	if fi == nil {
		return nil, err
	}
	if !fi.IsDir() {
		if filepath.Base(root) == dbName {
			return []importer.Bundle{importer.SQLiteBundle(root)}, nil
		}
		return []importer.Bundle{{Files: []string{root}}}, nil
	}
	bs, err := homeBundles(ctx, root)
	profiles, _ := os.ReadDir(filepath.Join(root, profilesDir))
	for _, p := range profiles {
		if !p.IsDir() {
			continue
		}
		pb, perr := homeBundles(ctx, filepath.Join(root, profilesDir, p.Name()))
		bs = append(bs, pb...)
		err = errors.Join(err, perr)
	}
	return bs, err
}

// profilesDir holds Hermes's named profiles in its home directory
// (hermes_cli/profiles.py), each a home directory of its own.
const profilesDir = "profiles"

// homeBundles is Bundles of one home directory, its profiles left out.
func homeBundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	dir, profiles := root, filepath.Join(root, profilesDir)+string(filepath.Separator)
	if sub := filepath.Join(root, "sessions"); isDir(sub) {
		dir = sub
	}
	bs, err := importer.FileBundles(ctx, Tool, dir, func(path string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl") && !strings.HasPrefix(path, profiles)
	})
	if db := filepath.Join(root, dbName); importer.RegularFile(db) == nil {
		b := importer.SQLiteBundle(db)
		for _, t := range bs {
			b.Files = append(b.Files, t.Files...)
		}
		return []importer.Bundle{b}, err
	}
	return bs, err
}

// line is a transcript line: its metadata or a message, with its time.
type line struct {
	importer.ChatLine
	Timestamp string `json:"timestamp"`
	Model     string `json:"model"`
}

// Read reads Hermes's database and the transcripts beside it, or one
// transcript.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if filepath.Base(b.Name()) == dbName {
		return readDB(ctx, b)
	}
	return readFile(ctx, b.Name())
}

// readFile reads one transcript.
func readFile(ctx context.Context, name string) (*importer.Result, error) {
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
