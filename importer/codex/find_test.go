package codex

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
)

func TestFindRollout(t *testing.T) {
	const (
		id    = "019f7ece-35a7-7b62-a0d4-6e8f1c3b9a25"
		other = "019f7ecd-c978-7a41-9c3e-5b1f0d2e8a47"
	)
	sessions, archived := t.TempDir(), t.TempDir()
	writeFiles(t, sessions, nil,
		// The same thread in two days (a resumed session): the newer
		// day's rollout is found.
		"2026/07/19/rollout-2026-07-19T23-50-00-"+id+".jsonl",
		"2026/07/20/rollout-2026-07-20T09-14-31-"+id+".jsonl",
		// Being compressed: the plain twin is the one read, as Bundles
		// lists it.
		"2026/07/20/rollout-2026-07-20T08-00-00-"+other+".jsonl",
		"2026/07/20/rollout-2026-07-20T08-00-00-"+other+".jsonl.zst",
	)
	zstOnly := "019f7ecf-0000-7000-8000-000000000001"
	writeFiles(t, archived, nil, "rollout-2026-06-01T10-00-00-"+zstOnly+".jsonl.zst")
	roots := []string{sessions, archived}
	ctx := context.Background()
	for _, c := range []struct{ id, want string }{
		{id, filepath.Join(sessions, "2026", "07", "20", "rollout-2026-07-20T09-14-31-"+id+".jsonl")},
		{other, filepath.Join(sessions, "2026", "07", "20", "rollout-2026-07-20T08-00-00-"+other+".jsonl")},
		{zstOnly, filepath.Join(archived, "rollout-2026-06-01T10-00-00-"+zstOnly+".jsonl.zst")},
		{"019f7ecf-0000-7000-8000-0000000000ff", ""},
	} {
		got, err := FindRollout(ctx, roots, c.id)
		if err != nil || got != c.want {
			t.Errorf("FindRollout(%s) = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
	if got, err := FindRollout(ctx, roots, "../rollout"); got != "" || loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("FindRollout(not a UUID) = %q, %v; want EINVALID", got, err)
	}
}
