package agents

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/commandcode"
	"github.com/loomhq/loom/importer/gemini"
)

// Bytes that are not UTF-8 inside a JSON text of one record (as a tool
// that cut a multi-byte letter writes them) are one problem line naming
// that line, and every message of the file is kept: JSON decoding
// replaces them by U+FFFD, which was silent before, while the same
// bytes in a Markdown format were "garbage". Each real file of the
// readers of JSON lines whose agents' programs wrote them, at the first
// eight of its lines holding a text. No message is lost; a record an
// agent writes twice (Codex's response item and its event) and of
// which one copy is damaged no longer reads as the other's twin, and
// both are kept.
func TestInvalidUTF8InATextIsOneLine(t *testing.T) {
	for _, c := range []struct {
		f    importer.Format
		file string
	}{
		{claudecode.Format{}, filepath.Join("..", "..", "testdata", "agent-sessions", "claude-code", "spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")},
		{codex.Format{}, filepath.Join("..", "..", "testdata", "agent-sessions", "codex", "vibecodingtracker-codex.jsonl")},
		{gemini.Format{}, filepath.Join("..", "..", "testdata", "agent-sessions", "gemini", "vibecodingtracker-gemini.jsonl")},
		{commandcode.Format{}, filepath.Join("..", "commandcode", "testdata", "real", "home-u-work", "aa1f68f2-4a0d-42a8-9572-77ea16d6c568.jsonl")},
	} {
		t.Run(c.f.Tool(), func(t *testing.T) {
			orig, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			base := messages(t, c.f, orig)
			lines := bytes.Split(orig, []byte("\n"))
			tried := 0
			for i, l := range lines {
				at := bytes.Index(l, []byte(`"text":"`))
				if at < 0 || tried >= 8 {
					continue
				}
				// Inside the text, between two ASCII letters near its
				// end: the text keeps what makes it what it is (a
				// prefix an agent marks context with), only cut letters.
				end := at + 8
				for end < len(l) && l[end] != '"' {
					if l[end] == '\\' {
						end++
					}
					end++
				}
				cut := -1
				for p := end - 1; p > at+9; p-- {
					if isLetter(l[p-1]) && isLetter(l[p]) && l[p-2] != '\\' {
						cut = p
						break
					}
				}
				if cut < 0 {
					continue
				}
				tried++
				bad := append(append(bytes.Clone(l[:cut]), "\xff\xfe"...), l[cut:]...)
				damaged := bytes.Join(append(append(append([][]byte{}, lines[:i]...), bad), lines[i+1:]...), []byte("\n"))
				res := readData(t, c.f, damaged)
				var about []importer.Problem
				for _, p := range res.Problems {
					if p.Line == i+1 {
						about = append(about, p)
					}
				}
				if len(about) != 1 {
					t.Errorf("line %d made not UTF-8: problems about it %v, want one", i+1, about)
				}
				if got := countMessages(res); got < base {
					t.Errorf("line %d made not UTF-8: %d messages, want the %d of the file", i+1, got, base)
				}
			}
			if tried == 0 {
				t.Fatal("no line with a text: the test checks nothing")
			}
		})
	}
}

func readData(t *testing.T, f importer.Format, data []byte) *importer.Result {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "5d1f0c3e-8a2b-4c6d-9e7f-0a1b2c3d4e5f.jsonl")
	if f.Tool() == codex.Tool {
		path = filepath.Join(dir, "rollout-2025-09-19T09-02-12-01996135-afde-7911-97f0-d863511eca56.jsonl")
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := f.Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func messages(t *testing.T, f importer.Format, data []byte) int {
	t.Helper()
	return countMessages(readData(t, f, data))
}

func countMessages(res *importer.Result) int {
	n := 0
	for _, s := range res.Sessions {
		n += len(s.Messages)
	}
	return n
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
