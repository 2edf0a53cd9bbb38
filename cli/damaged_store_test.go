package cli_test

import (
	"crypto/rand"
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// A store file damaged from outside gets, with SQLite's own words, what
// to do next: one whose damage keeps it from opening, or that is not a
// store at all, is to be moved aside (after checking the flags that chose
// it); one that opens names the salvaging export.
// One line each, exit 1; the built binary, as main wires the engine.
func TestDamagedStoreSaysWhatToDo(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "a SQLite file's damage")
	fx := clitest.NewFixture(t)
	b, err := os.ReadFile(fx.DB)
	if err != nil {
		t.Fatal(err)
	}
	size := int(binary.BigEndian.Uint16(b[16:18]))
	if size == 1 {
		size = 65536
	}
	// Pages from the end lose their b-tree page type, one more each
	// time, until a search meets one: the store opens, and what it
	// still holds can be saved. A page the store's opening reads (the
	// schema's, the migrations') is left whole: that damage is the
	// next case's.
	var r clitest.Result
	for off := len(b) - size; off >= size; off -= size {
		was := b[off]
		b[off] = 0xff
		if err := os.WriteFile(fx.DB, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if r = fx.Exec(t, "", "search", "flaky"); r.Code == 0 {
			continue
		}
		if !strings.Contains(r.Stderr, "does not open") {
			break
		}
		b[off] = was
	}
	if r.Code != cli.ExitError || len(clitest.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "malformed") ||
		!strings.Contains(r.Stderr, fx.DB+" is damaged: loom session export --all --salvage -o rescued.jsonl saves what it still holds") {
		t.Fatalf("search of a damaged store that opens: exit %d: %q", r.Code, r.Stderr)
	}
	// Every page but the first (the schema): the store does not open.
	for off := size; off < len(b); off += size {
		b[off] = 0xff
	}
	if err := os.WriteFile(fx.DB, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r = fx.Exec(t, "", "search", "flaky")
	if r.Code != cli.ExitError || len(clitest.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "malformed") ||
		!strings.Contains(r.Stderr, fx.DB+" is damaged and does not open: move it aside with its -wal and -shm files") {
		t.Fatalf("search of a damaged store: exit %d: %q", r.Code, r.Stderr)
	}

	junk := make([]byte, 8192)
	rand.Read(junk)
	if err := os.WriteFile(fx.DB, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	r = fx.Exec(t, "", "session", "list")
	if r.Code != cli.ExitError || len(clitest.Lines(r.Stderr)) != 1 || !strings.Contains(r.Stderr, "not a database") ||
		!strings.Contains(r.Stderr, fx.DB+" is not a loom store, or its start is damaged: check --db and LOOM_DB") {
		t.Fatalf("list of a file that is no store: exit %d: %q", r.Code, r.Stderr)
	}
}
