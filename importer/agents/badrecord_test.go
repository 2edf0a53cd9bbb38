package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
)

// The rule for bad input held as a property of every reader, record by
// record (docs/import.md, "One damaged record"): in every session file
// of the reader's testdata/ (and, for the agents whose real sessions
// testdata/agent-sessions holds, in each of those), one record is
// damaged in one of the ways below; read again, the file gives exactly
// one problem line more, every other message of it is kept in its
// session at its place (no fork appears, no session is lost, no
// message before or after it is dropped: a record whose parent is the
// damaged one hangs on the last readable one), and the bundles found
// beside it are the same. A file of JSON lines has each way made of one
// of its lines; a file that is one JSON document has a text of one of
// its records made not UTF-8 (the other ways make the document
// unreadable, one line for the file: TestBadInputIsOneLinePerFile).
//
// The line and the way are drawn from a seed, printed; set
// LOOM_BADINPUT_SEED to it to replay a run. A line over the limit
// (importer.MaxLine, 32 MB) is made in one file of each reader, the
// other ways in every file.

// damages are the ways one line of a file of JSON lines is damaged.
var damages = []struct {
	name string
	// make returns line damaged; r draws where.
	make func(r *rand.Rand, line []byte) []byte
}{
	{"garbage", func(r *rand.Rand, line []byte) []byte {
		return []byte("\x00\x01garbage \xff\xfe not a record \x1b[2J")
	}},
	{"cut line", func(r *rand.Rand, line []byte) []byte {
		// The line ends in its middle, as a program caught writing it
		// leaves it, and the next line follows.
		return bytes.Clone(line[:1+r.IntN(max(len(line)-2, 1))])
	}},
	{"non-JSON in the middle", func(r *rand.Rand, line []byte) []byte {
		at := len(line) / 2
		return slices.Concat(line[:at], []byte("}\x00 not JSON {"), line[at:])
	}},
	{"not UTF-8 in a text", func(r *rand.Rand, line []byte) []byte {
		at := textCut(r, line)
		if at < 0 {
			return nil
		}
		return slices.Concat(line[:at], []byte("\xff\xfe"), line[at:])
	}},
	{"over the limit", func(r *rand.Rand, line []byte) []byte {
		return slices.Concat(line[:len(line)/2], bytes.Repeat([]byte("x"), importer.MaxLine+1))
	}},
}

// badRecordExceptions are the readers (tool, or tool/way) that do not
// hold the property yet, each with what it does instead; docs/import.md
// lists them too.
var badRecordExceptions = map[string]string{}

// headerExceptions are the readers whose first line, the session's
// header, is not damaged yet, each with what they do when it is.
var headerExceptions = map[string]string{}

// batches are the readers one line of whose files holds several
// records (an export of a batch of spans): a damaged line loses them
// all, and only the order of what is kept and the sessions are checked.
var batches = map[string]bool{"copilot-vs": true}

// badRecordSeed is the run's seed: LOOM_BADINPUT_SEED's, or the time's.
func badRecordSeed(t *testing.T) uint64 {
	if s := os.Getenv("LOOM_BADINPUT_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LOOM_BADINPUT_SEED=%q: %v", s, err)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

func TestOneDamagedRecordIsOneLine(t *testing.T) {
	seed := badRecordSeed(t)
	t.Logf("seed %d (replay: LOOM_BADINPUT_SEED=%d go test -run TestOneDamagedRecordIsOneLine ./importer/agents)", seed, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("failed with seed %d: replay with LOOM_BADINPUT_SEED=%d", seed, seed)
		}
	})
	shared := filepath.Join("..", "..", "testdata", "agent-sessions")
	realDirs := map[string]string{"claude-code": "claude-code", "codex": "codex", "gemini": "gemini"}
	for _, f := range Formats() {
		if _, ok := f.(importer.Variant); ok {
			continue // its base's reader, tested as the base
		}
		t.Run(f.Tool(), func(t *testing.T) {
			t.Parallel()
			if why, ok := badRecordExceptions[f.Tool()]; ok {
				t.Skip("not yet held: " + why)
			}
			h := fnv.New64a()
			h.Write([]byte(f.Tool()))
			r := rand.New(rand.NewPCG(seed, h.Sum64()))
			var roots []string
			if src := filepath.Join(pkgDir(f), "testdata"); isDir(src) {
				roots = append(roots, layOut(t, f.Tool(), copyTree(t, src)))
			}
			// testdb/: a database the reader's tests build, kept as a
			// file for this test (TestWriteSample in its package).
			if src := filepath.Join(pkgDir(f), "testdb"); isDir(src) {
				roots = append(roots, copyTree(t, src))
			}
			if d, ok := realDirs[f.Tool()]; ok {
				roots = append(roots, copyTree(t, filepath.Join(shared, d)))
			}
			n := 0
			for _, root := range roots {
				n += damageEach(t, f, r, root)
			}
			if n == 0 {
				t.Skip("no record damaged: no file of JSON lines or JSON in its testdata/ (its files are databases its tests build, or are not JSON), or its one way is an exception")
			}
			t.Logf("%d records damaged", n)
		})
	}
}

// damageEach damages a record of each file of each bundle under root in
// turn, checks the property for it, and returns how many cases it made.
func damageEach(t *testing.T, f importer.Format, r *rand.Rand, root string) int {
	t.Helper()
	ctx := context.Background()
	bs, err := f.Bundles(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	names := bundleNames(bs)
	cases, overDone := 0, false
	for _, b := range bs {
		if strings.Contains(b.Name(), string(filepath.Separator)+"fuzz"+string(filepath.Separator)) {
			continue
		}
		before, err := f.Read(ctx, b)
		if err != nil || before == nil || len(before.Sessions) == 0 {
			continue
		}
		for _, file := range b.Files {
			orig, err := os.ReadFile(file)
			if err != nil || len(orig) == 0 {
				continue
			}
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			// Written in place with its time: a reader may order files
			// by it.
			put := func(data []byte) {
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
			}
			var tries []int
			switch {
			case isSQLite(orig):
				n, unread := damageRows(t, f, r, b, file, before)
				t.Logf("%s: %d rows damaged, %d cells passed over as not read", file, n, unread)
				cases += n
				continue
			case bytes.HasPrefix(orig, []byte(frameMagic)):
				cases += damageFrames(t, f, r, b, file, orig, before)
				continue
			case jsonLines(orig):
				tries = r.Perm(len(damages))
			case json.Valid(orig):
				tries = []int{3} // not UTF-8 in a text
			default:
				continue
			}
			for _, d := range tries {
				if damages[d].name == "over the limit" {
					if overDone {
						continue
					}
					overDone = true
				}
				if _, ok := badRecordExceptions[f.Tool()+"/"+damages[d].name]; ok {
					continue
				}
				_, noHeader := headerExceptions[f.Tool()]
				data, line, ok := damage(r, orig, d, noHeader)
				if !ok {
					continue
				}
				cases++
				what := fmt.Sprintf("%s line %d made %s", file, line, damages[d].name)
				if line == 0 {
					what = fmt.Sprintf("%s: a text made %s", file, damages[d].name)
				}
				put(data)
				after, err := f.Read(ctx, b)
				if err != nil {
					t.Errorf("%s: the bundle is not read: %v", what, err)
				} else {
					checkOneRecord(t, f.Tool(), what, file, line == firstLine(orig), before, after, false)
				}
				if now, _ := f.Bundles(ctx, root); !slices.Equal(bundleNames(now), names) {
					t.Errorf("%s: the bundles beside it changed", what)
				}
				put(orig)
			}
		}
	}
	return cases
}

func bundleNames(bs []importer.Bundle) []string {
	var out []string
	for _, b := range bs {
		out = append(out, strings.Join(b.Files, "\x00"))
	}
	return out
}

// firstLine is the 1-based number of data's first line that is not
// blank: a file's header, where it has one.
func firstLine(data []byte) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			return i + 1
		}
	}
	return 0
}

// jsonLines says whether data is a file of JSON lines: two lines or
// more, each that is not blank a JSON value.
func jsonLines(data []byte) bool {
	lines := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if !json.Valid(l) {
			return false
		}
		lines++
	}
	return lines >= 2
}

// damage makes way d of data, a file of JSON lines (each way on one of
// its lines) or one JSON document (a text made not UTF-8), and returns
// it with the 1-based number of the line made bad (0 for a document).
func damage(r *rand.Rand, data []byte, d int, noHeader bool) ([]byte, int, bool) {
	if !jsonLines(data) {
		at := textCut(r, data)
		if at < 0 {
			return nil, 0, false
		}
		return slices.Concat(data[:at], []byte("\xff\xfe"), data[at:]), 0, true
	}
	lines := bytes.Split(data, []byte("\n"))
	var can []int
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) > 0 && (i > 0 || !noHeader) && (damages[d].name != "not UTF-8 in a text" || textCut(r, l) >= 0) {
			can = append(can, i)
		}
	}
	if len(can) == 0 {
		return nil, 0, false
	}
	i := can[r.IntN(len(can))]
	bad := damages[d].make(r, lines[i])
	out := slices.Clone(lines)
	out[i] = bad
	return bytes.Join(out, []byte("\n")), i + 1, true
}

// textCut is a place inside one of the texts (JSON strings that are
// values, not keys, with a space in them) of doc, between two ASCII
// letters, or -1: the text keeps what makes it what it is (a prefix an
// agent marks context with), only cut letters.
func textCut(r *rand.Rand, doc []byte) int {
	var spots []int
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		start := i + 1
		j := start
		for j < len(doc) && doc[j] != '"' {
			if doc[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(doc) {
			break
		}
		k := j + 1
		for k < len(doc) && (doc[k] == ' ' || doc[k] == '\t' || doc[k] == '\n' || doc[k] == '\r') {
			k++
		}
		key := k < len(doc) && doc[k] == ':'
		if !key && bytes.IndexByte(doc[start:j], ' ') >= 0 {
			for p := j - 1; p > start+1; p-- {
				if isLetter(doc[p-1]) && isLetter(doc[p]) && doc[p-2] != '\\' {
					spots = append(spots, p)
					break
				}
			}
		}
		i = j
	}
	if len(spots) == 0 {
		return -1
	}
	return spots[r.IntN(len(spots))]
}

// checkOneRecord checks the property for file, damaged, of a bundle
// read before as before and now as after.
func checkOneRecord(t *testing.T, tool, what, file string, header bool, before, after *importer.Result, row bool) {
	t.Helper()
	had := map[string]bool{}
	for _, p := range before.Problems {
		had[p.String()] = true
	}
	var lines []string
	for _, p := range after.Problems {
		if !had[p.String()] {
			lines = append(lines, p.String())
		}
	}
	if len(lines) != 1 {
		t.Errorf("%s: %d problem lines more %q, want 1", what, len(lines), lines)
	} else if !strings.Contains(lines[0], file) {
		t.Errorf("%s: its line %q does not name it", what, lines[0])
	}
	// And each session is as it was, with the same messages in the same
	// order but for that one; none is new (a fork the user never made).
	// A session named by the damaged record (its header) is named
	// otherwise now: it is the one of its kind that is new. What else
	// the header alone said is lost with it: the parent it names (a
	// sub-agent's, a fork's), so that such a session may be read as a
	// main session, or as a fork of the session whose history it
	// copies.
	sessions := map[string]*importer.Session{}
	for _, s := range after.Sessions {
		sessions[s.Kind+" "+s.SourceID] = s
	}
	renamed := map[string]string{}
	// First a session of the same id read as another kind (its link
	// lost with the header), then one named otherwise.
	for _, sameID := range []bool{true, false} {
		for _, s := range before.Sessions {
			if _, ok := sessions[s.Kind+" "+s.SourceID]; ok {
				continue
			}
			for _, a := range after.Sessions {
				key := a.Kind + " " + a.SourceID
				if _, taken := renamed[key]; !taken && (a.Kind == s.Kind || header) && (!sameID || a.SourceID == s.SourceID) &&
					!slices.ContainsFunc(before.Sessions, func(b *importer.Session) bool { return b.Kind+" "+b.SourceID == key }) {
					renamed[key] = s.SourceID
					sessions[s.Kind+" "+s.SourceID] = a
					delete(sessions, key)
					break
				}
			}
		}
	}
	// What is lost: the messages of the damaged record, at most one
	// record's (a message a fork shares with its session is one).
	lost := map[string]bool{}
	// gone counts the sessions lost whole; kept says whether a session
	// still there lost a message.
	gone, keptLost := 0, false
	anywhere := map[string]bool{}
	for _, s := range after.Sessions {
		for _, m := range s.Messages {
			anywhere[m.ID] = true
		}
	}
	for _, s := range before.Sessions {
		key := s.Kind + " " + s.SourceID
		a, ok := sessions[key]
		if !ok {
			// Gone: its messages found in no session count as lost (a
			// session of the record's one message is lost with it; a
			// fork made by a record that is lost, its branch kept in
			// its session, loses none).
			for _, m := range s.Messages {
				if !anywhere[m.ID] {
					lost[m.ID] = true
				}
			}
			gone++
			continue
		}
		delete(sessions, key)
		now := map[string]bool{}
		for _, m := range a.Messages {
			now[m.ID] = true
		}
		var want, got []string
		in := map[string]bool{}
		for _, m := range s.Messages {
			in[m.ID] = true
			if now[m.ID] {
				want = append(want, m.ID)
			} else {
				lost[m.ID] = true
				keptLost = true
			}
		}
		for _, m := range a.Messages {
			if in[m.ID] {
				got = append(got, m.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: session %s's messages %v, want %v", what, key, short(got), short(want))
		}
	}
	// A record that makes messages under its id (a trace's prompt and
	// reply: a1/prompt and a1) is one.
	records := map[string]bool{}
	for id := range lost {
		root, _, _ := strings.Cut(id, "/")
		records[root] = true
	}
	if len(records) > 1 && row && gone > 0 && !keptLost {
		// The row was a conversation's document: its session is what
		// it held.
		records = nil
	}
	if len(records) > 1 && !batches[tool] {
		t.Errorf("%s: %d messages lost (%s), want at most the one of the record", what, len(lost), some(lost))
	}
	for key := range sessions {
		t.Errorf("%s: a session that was not there: %s", what, key)
	}
}

func some(m map[string]bool) string {
	var ids []string
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) > 4 {
		ids = append(ids[:4], "…")
	}
	return strings.Join(ids, ", ")
}

func short(ids []string) string {
	if len(ids) > 6 {
		return fmt.Sprintf("%s … (%d)", strings.Join(ids[:6], " "), len(ids))
	}
	return strings.Join(ids, " ")
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
