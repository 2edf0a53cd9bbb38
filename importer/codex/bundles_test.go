package codex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom/importer"
)

func TestRoots(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	got := Format{}.Roots(env(nil), "/home/u")
	want := []string{filepath.Join("/home/u", ".codex", "sessions"), filepath.Join("/home/u", ".codex", "archived_sessions")}
	if !slices.Equal(got, want) {
		t.Errorf("Roots = %v, want %v", got, want)
	}
	got = Format{}.Roots(env(map[string]string{"CODEX_HOME": "/opt/codex"}), "/home/u")
	want = []string{filepath.Join("/opt/codex", "sessions"), filepath.Join("/opt/codex", "archived_sessions")}
	if !slices.Equal(got, want) {
		t.Errorf("Roots with CODEX_HOME = %v, want %v", got, want)
	}
	if got := (Format{}).Roots(env(nil), ""); got != nil {
		t.Errorf("Roots without a home = %v", got)
	}
	if (Format{}).Tool() != importer.Codex {
		t.Errorf("Tool = %s", (Format{}).Tool())
	}
}

func TestBundles(t *testing.T) {
	root := t.TempDir()
	files := []string{
		"2025/09/19/rollout-2025-09-19T09-02-12-01996135-afde-7911-97f0-d863511eca56.jsonl",
		"2025/11/03/rollout-2025-11-03T10-52-29-019a4958-d3b0-7c21-9a3e-1f2e3d4c5b6a.jsonl.zst",
		// Being compressed: the plain file is the one read.
		"2025/11/04/rollout-b.jsonl",
		"2025/11/04/rollout-b.jsonl.zst",
		// Not rollouts.
		"2025/11/04/notes.jsonl",
		"2025/11/04/rollout-c.json",
		"history.jsonl",
	}
	for _, f := range files {
		path := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Format{}.Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range got {
		if len(b.Files) != 1 {
			t.Errorf("bundle %v", b.Files)
		}
		names = append(names, strings.TrimPrefix(filepath.ToSlash(b.Name()), filepath.ToSlash(root)+"/"))
	}
	want := []string{files[0], files[1], files[2]}
	if !slices.Equal(names, want) {
		t.Errorf("bundles %v, want %v", names, want)
	}

	one := filepath.Join(root, files[4])
	got, err = Format{}.Bundles(context.Background(), one)
	if err != nil || len(got) != 1 || got[0].Name() != one {
		t.Errorf("a file as root: %v, %v", got, err)
	}
	got, err = Format{}.Bundles(context.Background(), filepath.Join(root, "none"))
	if err != nil || got != nil {
		t.Errorf("a missing root: %v, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Format{}).Bundles(ctx, root); err == nil {
		t.Error("Bundles ignored a cancelled context")
	}
}

func compress(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestZstd(t *testing.T) {
	data, err := os.ReadFile("testdata/newer.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rollout-newer.jsonl.zst")
	if err := os.WriteFile(path, compress(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	want := readFile(t, "testdata/newer.jsonl")
	gs, ws := got.Sessions[0], want.Sessions[0]
	if gs.SourceID != ws.SourceID || len(gs.Messages) != len(ws.Messages) || gs.Path != path {
		t.Fatalf("compressed: %s with %d messages, plain: %s with %d", gs.SourceID, len(gs.Messages), ws.SourceID, len(ws.Messages))
	}
	for i := range gs.Messages {
		if gs.Messages[i].ID != ws.Messages[i].ID || gs.Messages[i].SearchText() != ws.Messages[i].SearchText() {
			t.Errorf("message %d: %s differs from %s", i, gs.Messages[i].ID, ws.Messages[i].ID)
		}
	}
	if len(got.Problems) != len(want.Problems) {
		t.Errorf("problems %v, want %v", got.Problems, want.Problems)
	}

	// A file that expands beyond its limit is read up to the limit.
	defer func(m, e int64) { zstdMinExpansion, zstdExpansion = m, e }(zstdMinExpansion, zstdExpansion)
	zstdMinExpansion, zstdExpansion = 4096, 1
	res := readFile(t, path)
	if n := len(res.Sessions[0].Messages); n == 0 || n >= len(ws.Messages) {
		t.Errorf("%d messages read within the limit, of %d", n, len(ws.Messages))
	}
	last := res.Problems[len(res.Problems)-1]
	if !strings.Contains(last.Reason, errTooLarge.Error()) {
		t.Errorf("problems %v", res.Problems)
	}

	// A file that is not zstd at all.
	bad := filepath.Join(t.TempDir(), "rollout-bad.jsonl.zst")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{bad}}); err == nil {
		t.Error("plain text read as zstd without error")
	}
}
