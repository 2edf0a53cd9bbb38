package importer_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/testkit/fake"
)

// KeptBundles groups the kept files the store lists of the user's tool
// by bundle, in the order the store lists them, each bundle's main file
// first and the others by path; with session ids, only the bundles that
// hold one of those sessions.
func TestKeptBundlesGroupsByBundle(t *testing.T) {
	files := []loom.OriginalFile{
		{Tool: "claude-code", Bundle: "/p/a.jsonl", Path: "/p/a/subagents/z.jsonl", SessionID: "a-sub"},
		{Tool: "claude-code", Bundle: "/p/b.jsonl", Path: "/p/b.jsonl", SessionID: "b"},
		{Tool: "claude-code", Bundle: "/p/a.jsonl", Path: "/p/a/subagents/y.jsonl", SessionID: "a-sub2"},
		{Tool: "claude-code", Bundle: "/p/a.jsonl", Path: "/p/a.jsonl", SessionID: "a"},
	}
	var asked []string
	k := &fake.OriginalsKeeper{OriginalFilesFn: func(_ context.Context, userID, tool string) ([]loom.OriginalFile, error) {
		asked = append(asked, userID+" "+tool)
		return files, nil
	}}
	paths := func(bs []importer.KeptBundle) [][]string {
		var out [][]string
		for _, b := range bs {
			var ps []string
			for _, f := range b.Files {
				ps = append(ps, f.Path)
			}
			out = append(out, append([]string{b.Tool + " " + b.Bundle}, ps...))
		}
		return out
	}

	all, err := importer.KeptBundles(t.Context(), k, "alice", "claude-code", nil)
	want := [][]string{
		{"claude-code /p/a.jsonl", "/p/a.jsonl", "/p/a/subagents/y.jsonl", "/p/a/subagents/z.jsonl"},
		{"claude-code /p/b.jsonl", "/p/b.jsonl"},
	}
	if got := paths(all); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("every bundle: %q, %v; want %q", got, err, want)
	}
	one, err := importer.KeptBundles(t.Context(), k, "alice", "claude-code", []string{"a-sub2"})
	if got := paths(one); err != nil || !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("the bundle of a sub-agent session: %q, %v; want %q", got, err, want[:1])
	}
	if want := []string{"alice claude-code", "alice claude-code"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("the store was asked for %q, want %q", asked, want)
	}
}
