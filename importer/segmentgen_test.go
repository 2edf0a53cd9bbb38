package importer_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom/importer/importertest"
)

// genSize is the size of the files written from real ones.
const genSize = 1 << 20

// ids are the fields of a line that name an entry or a tool call, which
// each copy of a seed's turns makes its own.
var ids = regexp.MustCompile(`"(id|parentId|toolCallId)":"([^"]*)"`)

// repeatTurns writes to path the first head lines of seed once, then its
// other lines over and over, each copy's ids given the copy's number,
// until the file holds genSize bytes. chain, when set, makes the first
// line of a copy continue the copy before it: it gets the line and the
// last id of the copy before.
func repeatTurns(t *testing.T, seed, path string, head int, chain func(line []byte, prev string) []byte) string {
	t.Helper()
	data := importertest.ReadBytes(t, seed)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) <= head {
		t.Fatalf("%s: %d lines, want more than %d", seed, len(lines), head)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	written := 0
	for _, l := range lines[:head] {
		n, _ := w.Write(append(l, '\n'))
		written += n
	}
	last := ""
	for k := 0; written < genSize; k++ {
		for i, l := range lines[head:] {
			l = ids.ReplaceAllFunc(l, func(m []byte) []byte {
				sub := ids.FindSubmatch(m)
				return []byte(`"` + string(sub[1]) + `":"` + string(sub[2]) + "-" + strconv.Itoa(k) + `"`)
			})
			if i == 0 && k > 0 && chain != nil {
				l = chain(l, last)
			}
			if sub := ids.FindSubmatch(l); sub != nil && string(sub[1]) == "id" {
				last = string(sub[2])
			}
			n, _ := w.Write(append(l, '\n'))
			written += n
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// geminiFile is a Gemini CLI recording of 1 MB: the real one's header,
// then its turns over and over.
func geminiFile(t *testing.T, seed, dir string) string {
	return repeatTurns(t, seed, filepath.Join(dir, "session-2026-04-23T12-52-0ab84937.jsonl"), 1, nil)
}

// parentID is a pi entry's parent.
var parentID = regexp.MustCompile(`"parentId":("[^"]*"|null)`)

// piFile is a pi session file of 1 MB: the real one's header and first
// settings, then its turn (a prompt, a tool call, its result, the
// answer) over and over, each following the one before.
func piFile(t *testing.T, seed, dir string) string {
	return repeatTurns(t, seed, filepath.Join(dir, "2026-11-25T04-14-39-433Z_01a210e9-ad48-734f-93f6-8eda9863b050.jsonl"), 3,
		func(line []byte, prev string) []byte {
			return parentID.ReplaceAll(line, []byte(`"parentId":"`+prev+`"`))
		})
}

// codexZstFile is the real Codex rollout compressed, as Codex keeps
// rollouts it has compressed (rollout-….jsonl.zst).
func codexZstFile(t *testing.T, seed, dir string) string {
	data := importertest.ReadBytes(t, seed)
	path := filepath.Join(dir, "rollout-2025-09-19T09-02-12-01996135-afde-7911-97f0-d863511eca56.jsonl.zst")
	writeSession(t, path, data)
	return path
}

// writeSession writes data to the session file path, compressed when
// its name says so.
func writeSession(t *testing.T, path string, data []byte) {
	t.Helper()
	if strings.HasSuffix(path, ".zst") {
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		data = enc.EncodeAll(data, nil)
	}
	importertest.WriteFile(t, path, data, 0o644)
}

// readSession is what the session file path holds, expanded when it is
// compressed.
func readSession(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		dec, err := zstd.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		r = dec
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
