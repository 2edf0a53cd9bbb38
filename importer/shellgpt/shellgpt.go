// Package shellgpt reads the chats of ShellGPT (sgpt, the Python package
// shell-gpt) for loom's importer.
//
// sgpt --chat ID (and --repl ID) keeps the chat in one file named ID in
// its chat cache directory: $CHAT_CACHE_PATH (or the CHAT_CACHE_PATH of
// ~/.config/shell_gpt/.sgptrc), by default chat_cache in the system's
// temporary directory. The file (sgpt/handlers/chat_handler.py,
// ChatSession) is the JSON list of the Chat Completions messages the
// model was sent, rewritten after each reply: the system role's prompt,
// the user's prompts, the replies, and for a function call an assistant
// message with its tool_calls and a tool message with the function's
// output for tool_call_id. A reply after a call is stored as the text
// sgpt printed, which begins with its "> @FunctionCall" line. The file
// holds no time, model or usage; sgpt keeps the first message and the
// last CHAT_CACHE_LENGTH (100) of the others.
//
// A chat is a session named for its file; its messages take the file's
// time. A tool message completes its call.
//
// The format is the one ShellGPT 1.5.1's own code writes, run from its
// source at commit a082bd5327ce0c4ef5a0284d9060e833be9444a6
// (testdata/chat_cache).
package shellgpt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads ShellGPT's chats. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is ShellGPT's name in loom.
const Tool = "shell-gpt"

// cacheEnv moves ShellGPT's chat cache directory.
const cacheEnv = "CHAT_CACHE_PATH"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": the chat file names no model or provider.
func (Format) Provider() string { return "" }

// Roots is the chat cache directory: $CHAT_CACHE_PATH, else chat_cache
// in $TMPDIR (/tmp when unset), as Python's tempfile.gettempdir finds it.
func (Format) Roots(env func(string) string, _ string) []string {
	tmp := "/tmp"
	if env != nil {
		if d := env(cacheEnv); d != "" {
			return []string{d}
		}
		for _, v := range []string{"TMPDIR", "TEMP", "TMP"} {
			if d := env(v); d != "" {
				tmp = d
				break
			}
		}
	}
	return []string{filepath.Join(tmp, "chat_cache")}
}

// cacheDir is the name of ShellGPT's chat cache directory, in the
// temporary directory unless $CHAT_CACHE_PATH moves it.
const cacheDir = "chat_cache"

// Bundles lists each chat file in the chat cache: every file in it but
// dot files, as sgpt lists it (a chat's file is named by its id alone,
// and sgpt reads no directory below it). Root is the chat cache, or
// the directory that holds it as chat_cache (the temporary directory
// named on the command line), or one chat's file. A directory in the
// cache is where sgpt expects a chat's file: one line for it.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	if bs, dir, err := importer.FileRoot(Tool, root); !dir {
		return bs, err
	}
	if fi, err := os.Stat(filepath.Join(root, cacheDir)); err == nil && fi.IsDir() {
		root = filepath.Join(root, cacheDir)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("%s: listing %s: %w", Tool, root, err)
	}
	var out []importer.Bundle
	var dirs importer.Unreadable
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(root, e.Name())
		if importer.EntryMode(root, e).IsRegular() {
			out = append(out, importer.Bundle{Files: []string{path}})
			continue
		}
		dirs.DirInPlace(path)
	}
	return out, dirs.Err()
}

// Read reads one chat file.
func (Format) Read(_ context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, parse)
}

// parse reads a chat's data; modified, its file's time, is the time of
// every message.
func parse(name string, data []byte, at time.Time) *importer.Result {
	res := &importer.Result{}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		res.Unreadablef(name, 0, "not a ShellGPT chat: "+importer.Excerpt(err.Error()))
		return res
	}
	res.CheckUTF8(name, 0, data)
	s := &importer.Session{SourceID: filepath.Base(name), Kind: loom.KindMain, Path: name, CreatedAt: at, UpdatedAt: at,
		Messages: importer.ChatMessages(res, name, raw, at, "")}
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res
	}
	res.Sessions = append(res.Sessions, s)
	return res
}
