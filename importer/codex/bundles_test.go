package codex

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
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
	if (Format{}).Tool() != Tool {
		t.Errorf("Tool = %s", (Format{}).Tool())
	}
}

// writeFiles writes data to each file rels names under root, making the
// directories they are in.
func writeFiles(t *testing.T, root string, data []byte, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		path := filepath.Join(root, filepath.FromSlash(rel))
		importertest.MkdirAll(t, filepath.Dir(path))
		importertest.WriteFile(t, path, data, 0o644)
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
	writeFiles(t, root, nil, files...)
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

func compress(t *testing.T, data []byte) []byte { return importertest.Zstd(t, data) }

func TestZstd(t *testing.T) {
	data := importertest.ReadBytes(t, "testdata/newer.jsonl")
	path := filepath.Join(t.TempDir(), "rollout-newer.jsonl.zst")
	importertest.WriteFile(t, path, compress(t, data), 0o644)
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
	if !strings.Contains(last.Reason, importer.ErrExpandedTooLarge.Error()) {
		t.Errorf("problems %v", res.Problems)
	}

	// A file that is not zstd at all.
	bad := filepath.Join(t.TempDir(), "rollout-bad.jsonl.zst")
	importertest.WriteFile(t, bad, data, 0o644)
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{bad}}); err == nil {
		t.Error("plain text read as zstd without error")
	}
}

func TestBundlesFollowLinks(t *testing.T) {
	data := importertest.ReadBytes(t, childRollout)
	// ~/.codex/sessions is a link to a directory on another disk; there a
	// day's directory is a link to a directory that is also under the
	// root (walked once), a rollout is a link to a file, and a link leads
	// back up the tree.
	disk, home := t.TempDir(), t.TempDir()
	day := filepath.Join(disk, "2026", "07", "20")
	moved := filepath.Join(disk, "moved")
	name := filepath.Base(childRollout)
	writeFiles(t, disk, data, "2026/07/20/"+name, "moved/rollout-2026-07-21T08-00-00-moved.jsonl", "kept.jsonl")
	importertest.Symlink(t, disk, filepath.Join(home, ".codex", "sessions"))
	importertest.Symlink(t, moved, filepath.Join(disk, "2026", "07", "21"))
	importertest.Symlink(t, filepath.Join(disk, "kept.jsonl"), filepath.Join(day, "rollout-2026-07-20T10-00-00-linked.jsonl"))
	importertest.Symlink(t, disk, filepath.Join(day, "loop"))
	root := Format{}.Roots(nil, home)[0]
	bs, err := Format{}.Bundles(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range bs {
		rel, _ := filepath.Rel(root, b.Name())
		got = append(got, filepath.ToSlash(rel))
	}
	want := []string{
		"2026/07/20/" + name,
		"2026/07/20/rollout-2026-07-20T10-00-00-linked.jsonl",
		"2026/07/21/rollout-2026-07-21T08-00-00-moved.jsonl",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bundles %q, want %q", got, want)
	}
	res, err := Format{}.Read(context.Background(), bs[1])
	if err != nil || len(res.Sessions) != 1 || res.Sessions[0].SourceID != childID {
		t.Errorf("Read through the links: %v, %v", res, err)
	}
}
