package gemini

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/loomhq/loom/importer"
)

func TestBundles(t *testing.T) {
	root := filepath.Join("testdata", "tmp")
	hash := "604d4331967fb6b76ad7112ac89983c76dd7208b059b54a7df4fc4ab34c4ddf9"
	chats := filepath.Join(root, "example", "chats")
	main := filepath.Join(chats, "session-2026-09-05T09-00-0a1b2c3d.jsonl")
	// Recordings only: the .project_root marker every session of the
	// project shares is in none of them.
	all := []importer.Bundle{
		{Files: []string{filepath.Join(root, hash, "chats", "session-2025-11-20T10-00-22222222.json")}},
		{Files: []string{filepath.Join(chats, "session-2026-09-01T08-00-11111111.jsonl")}},
		{Files: []string{main, filepath.Join(chats, "0a1b2c3d-0000-4000-8000-000000000001", "b2c3d4e5-0000-4000-8000-000000000002.jsonl")}},
		{Files: []string{filepath.Join(chats, "99999999-0000-4000-8000-000000000009", "c3d4e5f6-0000-4000-8000-000000000010.jsonl")}},
	}
	for _, tc := range []struct {
		root string
		want []importer.Bundle
	}{
		{root, all},
		{filepath.Join(root, "example"), all[1:]},
		{chats, all[1:]},
		{main, []importer.Bundle{{Files: []string{main}}}},
		{filepath.Join(root, "missing"), nil},
	} {
		got, err := Format{}.Bundles(context.Background(), tc.root)
		if err != nil {
			t.Fatalf("Bundles(%s): %v", tc.root, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Bundles(%s) =\n%v\nwant\n%v", tc.root, got, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Format{}).Bundles(ctx, root); err == nil {
		t.Error("Bundles with a cancelled context: no error")
	}
}

func TestRoots(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	f := Format{}
	if got := f.Roots(env(nil), "/home/u"); !slices.Equal(got, []string{"/home/u/.gemini/tmp"}) {
		t.Errorf("Roots = %v", got)
	}
	if got := f.Roots(env(map[string]string{"GEMINI_CLI_HOME": "/alt"}), "/home/u"); !slices.Equal(got, []string{"/alt/.gemini/tmp"}) {
		t.Errorf("Roots with GEMINI_CLI_HOME = %v", got)
	}
	if f.Tool() != Tool {
		t.Errorf("Tool = %q", f.Tool())
	}
}

// A sub-agent's recording bigger than a segment is a bundle of its own,
// after the session bundles and before the sub-agents whose session is
// gone; the smaller ones stay with their session.
func TestBigSubagentRecordingIsABundle(t *testing.T) {
	old := importer.SegmentSize
	importer.SegmentSize = func() int64 { return 1 << 10 }
	t.Cleanup(func() { importer.SegmentSize = old })

	chats := filepath.Join("testdata", "tmp", "example", "chats")
	main := filepath.Join(chats, "session-2026-09-05T09-00-0a1b2c3d.jsonl")
	sub := filepath.Join(chats, "0a1b2c3d-0000-4000-8000-000000000001", "b2c3d4e5-0000-4000-8000-000000000002.jsonl")
	want := []importer.Bundle{
		{Files: []string{filepath.Join(chats, "session-2026-09-01T08-00-11111111.jsonl")}},
		{Files: []string{main}},
		{Files: []string{sub}},
		{Files: []string{filepath.Join(chats, "99999999-0000-4000-8000-000000000009", "c3d4e5f6-0000-4000-8000-000000000010.jsonl")}},
	}
	if fi, err := os.Stat(sub); err != nil || fi.Size() <= importer.SegmentSize() {
		t.Fatalf("%s: %v, want it bigger than %d bytes", sub, err, importer.SegmentSize())
	}
	got, err := Format{}.Bundles(context.Background(), chats)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Bundles(%s) = %v, %v\nwant %v", chats, got, err, want)
	}
}
