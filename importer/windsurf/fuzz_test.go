package windsurf

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a trajectory: it must not panic,
// must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, login, older, antigravity)
	importertest.SeedStrings(f,
		"",
		"# Chat Conversation\n",
		"\uFEFF# Cascade Chat Conversation\r\n### User Input\r\n```\r\n### Planner Response\r\n",
		"---\n---\n# Chat Conversation\n### Planner Response\n*Viewed [](file://) *\n*User accepted the command ``*\n(cci:1://file:///:1:2-3:4)\n",
		"# Chat Conversation\n### Unknown\n### User Input\n````\n```\n### Planner Response\n~~~\n*Listed directory [a](file:///c:) *\n",
		"# Chat Conversation\n### Planner Response\n[x](cci:7://file://host/a:0:0-0:0) [y](cci:7://file:///%zz:0:0-0:0)\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := importertest.ReadTimed(t, func(ctx context.Context) (*importer.Result, error) {
			return read(ctx, "/fuzz/t.md", time.Unix(1700000000, 0), bytes.NewReader(data))
		})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		importertest.CheckValidOf(t, Tool, res)
		importertest.CheckComplete(t, res)
		for _, s := range res.Sessions {
			for _, p := range importertest.Parts(s, loom.PartText) {
				if strings.TrimSpace(p.Text) == "" {
					t.Fatalf("text part %q", p.Text)
				}
			}
		}
	})
}

// BenchmarkRead reads a trajectory of 2,000 turns (about 3 MB), each a
// prompt and a reply with steps, code-index links and a code block;
// BenchmarkReadBaseline only goes over its lines, the least a reader
// does.
func BenchmarkRead(b *testing.B) {
	data := benchTrajectory()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := read(context.Background(), "/bench/t.md", time.Unix(1700000000, 0), bytes.NewReader(data))
		if err != nil || len(res.Sessions) != 1 || len(res.Sessions[0].Messages) != 4000 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

func BenchmarkReadBaseline(b *testing.B) {
	data := benchTrajectory()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := importer.Lines(context.Background(), bytes.NewReader(data), func(int, []byte) error { n++; return nil }, func(int) {})
		if err != nil || n == 0 {
			b.Fatal(err)
		}
	}
}

func benchTrajectory() []byte {
	var buf bytes.Buffer
	buf.WriteString("# Chat Conversation\n\nNote: _This is purely the output of the chat conversation and does not contain any raw data, codebase snippets, etc. used to generate the output._\n\n")
	for range 2000 {
		buf.WriteString("### User Input\n\nplease change the handler number ")
		buf.WriteString(strings.Repeat("and explain it ", 20))
		buf.WriteString("\n\n### Planner Response\n\nLooking at [h.go](cci:7://file:///src/app/h.go:0:0-0:0) first.\n\n*Viewed [h.go](file:///src/app/h.go) *\n\n*Grep searched codebase*\n\n*User accepted the command `go test ./...`*\n\n```go\n")
		buf.WriteString(strings.Repeat("func handler() { return }\n", 40))
		buf.WriteString("```\n\n*Edited relevant file*\n\n")
	}
	return buf.Bytes()
}
