package blame

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// traceSchema is the Agent Trace record schema as the specification's
// main branch publishes it (testdata/agent-trace-record.schema.md
// says from where), resolved, its version pattern read as the
// specification means it: three numbers with dots.
func traceSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile("testdata/agent-trace-record.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	const published, meant = `"^[0-9]+\\\\.[0-9]+\\\\.[0-9]+$"`, `"^[0-9]+\\.[0-9]+\\.[0-9]+$"`
	if !bytes.Contains(b, []byte(published)) {
		t.Fatalf("the vendored schema's version pattern is not %s: see testdata/agent-trace-record.schema.md", published)
	}
	b = bytes.Replace(b, []byte(published), []byte(meant), 1)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTraceRecordsValidate: the records loom exports for a commit and
// for a range are valid Agent Trace records, and read back as written.
func TestTraceRecordsValidate(t *testing.T) {
	schema := traceSchema(t)
	r := newRepo(t)
	r.agentWrite("s1", "a.go", "package a\n\nfunc A() int {\n\treturn 42 // the answer\n}\n")
	r.commit("a")
	r.write("a.go", strings.Replace(r.read("a.go"), "return 42 // the answer", "return 42 // the answer, checked", 1)+"\n// by hand\n")
	r.agentEdit("s2", "codex", "a.go", "// by hand\n", "// by hand\n\nfunc B() string {\n\treturn \"bee\"\n}\n")
	r.commit("b")
	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Now: func() time.Time { return r.clock }}
	g := Git{Dir: r.dir}
	for _, spec := range []string{"HEAD", "HEAD~1..HEAD"} {
		recs, err := b.Export(context.Background(), g, spec, "1.2.3")
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		for _, rec := range recs {
			if err := schema.Validate(asJSON(t, rec)); err != nil {
				t.Errorf("%s: the record does not validate: %v", spec, err)
			}
			for _, f := range rec.Files {
				for _, c := range f.Conversations {
					if u, err := url.Parse(c.URL); c.URL != "" && (err != nil || !u.IsAbs()) {
						t.Errorf("%s: conversation url %q", spec, c.URL)
					}
				}
			}
			json.NewEncoder(&buf).Encode(rec)
		}
		back, err := ReadTraces(&buf)
		if err != nil || len(back) != len(recs) {
			t.Fatalf("%s: read back %d of %d records: %v", spec, len(back), len(recs), err)
		}
		if spec == "HEAD" {
			kinds := map[string]int{}
			for _, c := range recs[0].Files[0].Conversations {
				for _, rg := range c.Ranges {
					k := c.Contributor.Type
					if rg.Contributor != nil {
						k = rg.Contributor.Type
					}
					kinds[k] += rg.EndLine - rg.StartLine + 1
				}
			}
			if kinds["ai"] == 0 || kinds["mixed"] != 1 || kinds["human"] != 2 {
				t.Errorf("HEAD's record: lines by contributor %v", kinds)
			}
		}
	}
	// The schema is strict: a version of two numbers, a field of
	// loom's own outside metadata, an unknown contributor type fail.
	ok := NewRecord("abc", "1", nil, time.Now())
	if ok.Version != "0.1.0" {
		t.Errorf("records are written as version %q, want 0.1.0", ok.Version)
	}
	for name, bad := range map[string]func(m map[string]any){
		"version 0.1":   func(m map[string]any) { m["version"] = "0.1" },
		"unknown field": func(m map[string]any) { m["session"] = "x" },
		"no files":      func(m map[string]any) { delete(m, "files") },
		"a bad range": func(m map[string]any) {
			m["files"] = []any{map[string]any{"path": "a", "conversations": []any{map[string]any{"ranges": []any{map[string]any{"start_line": 0, "end_line": 1}}}}}}
		},
		"contributor ??": func(m map[string]any) {
			m["files"] = []any{map[string]any{"path": "a", "conversations": []any{map[string]any{"contributor": map[string]any{"type": "bot"}, "ranges": []any{}}}}}
		},
	} {
		m := asJSON(t, ok).(map[string]any)
		bad(m)
		if schema.Validate(m) == nil {
			t.Errorf("the schema takes a record with %s", name)
		}
	}
	if err := schema.Validate(asJSON(t, ok)); err != nil {
		t.Errorf("an empty record: %v", err)
	}
}

// TestReadTracesRefuses: what is not a record is refused with its line.
func TestReadTracesRefuses(t *testing.T) {
	for in, want := range map[string]string{
		`{"version":"0.1","id":"x","timestamp":"2026-01-01T00:00:00Z","files":[]}` + "\nnot json\n": "line 2",
		`{"version":"one","id":"x","timestamp":"2026-01-01T00:00:00Z","files":[]}`:                  "version",
		`[{"version":"0.1","id":"x","timestamp":"yesterday","files":[]}]`:                           "timestamp",
	} {
		if _, err := ReadTraces(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
}

// FuzzReadTraces: any input is read or refused, never a panic, and
// what is read validates.
func FuzzReadTraces(f *testing.F) {
	f.Add(`{"version":"0.1","id":"x","timestamp":"2026-01-01T00:00:00Z","files":[{"path":"a","conversations":[{"ranges":[{"start_line":1,"end_line":2}]}]}]}`)
	f.Add(`[{"version":"1.0","id":"x","timestamp":"2026-01-01T00:00:00.5Z","files":[]}]`)
	f.Fuzz(func(t *testing.T, s string) {
		recs, err := ReadTraces(strings.NewReader(s))
		if err != nil {
			return
		}
		for i := range recs {
			if err := recs[i].Validate(); err != nil {
				t.Fatalf("record %d read but invalid: %v", i, err)
			}
		}
	})
}

// TestForeignTraceKeepsItsTool: a record another tool wrote credits
// its lines to that tool (tool.name) with its model, and keeps its
// conversation's URL as the URL, not as the agent.
func TestForeignTraceKeepsItsTool(t *testing.T) {
	r := newRepo(t)
	r.write("app.ts", "export const a = 1;\nexport const b = 2;\n")
	r.commit("app")
	head := strings.TrimSpace(r.git("rev-parse", "HEAD"))
	rec := `{"version":"0.1.0","id":"3f2a6b1e-5c4d-4e8f-9a0b-1c2d3e4f5a6b","timestamp":"2026-02-01T10:00:00Z",` +
		`"vcs":{"type":"git","revision":"` + head + `"},"tool":{"name":"cursor","version":"2.4.0"},` +
		`"files":[{"path":"app.ts","conversations":[{"url":"https://cursor.example/conversations/c1",` +
		`"contributor":{"type":"ai","model_id":"anthropic/claude-opus-4-5"},"ranges":[{"start_line":1,"end_line":1}]}]}]}`
	recs, err := ReadTraces(strings.NewReader(rec))
	if err != nil {
		t.Fatal(err)
	}
	b := &Blamer{Store: r.st, Roots: r.st, Versions: r.st, UserID: "local", Traces: recs}
	res, err := b.File(context.Background(), r.dir+"/app.ts", "")
	if err != nil {
		t.Fatal(err)
	}
	l := res.Lines[0]
	if l.Kind != Agent || l.Source != "trace" || l.Agent != "cursor" || l.Model != "claude-opus-4-5" || l.Provider != "anthropic" ||
		l.Conversation != "https://cursor.example/conversations/c1" {
		t.Errorf("the traced line: %+v", l)
	}
	if res.Lines[1].Kind != Human {
		t.Errorf("the line no record names: %+v", res.Lines[1])
	}
}
