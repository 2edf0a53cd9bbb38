package team_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTeamHeadKept: loom team head prints the head kept beside the
// checkpoint (chain.head) while the hub's chain still ends there, and
// reads no checkpoint then (one made unreadable is left as it is); when
// the chain moved on, the head is missing or the hub rolled back, it
// verifies as every command does, and says what is wrong as before.
func TestTeamHeadKept(t *testing.T) {
	p := newPair(t)
	dir := filepath.Join(p.bob.fx.Home, "data", "teams", p.id)
	checkpoint, kept := filepath.Join(dir, "chain.checkpoint"), filepath.Join(dir, "chain.head")
	type head struct {
		Team, ID, Head string
		Seq            int64
		Epoch          int
	}
	headOf := func(m *member) head {
		t.Helper()
		var h head
		if err := json.Unmarshal([]byte(m.must(t, "team", "head", "--json")), &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	want := headOf(p.alice)
	if got := headOf(p.bob); got != want {
		t.Fatalf("bob's head %+v, alice's %+v", got, want)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("no head kept beside the checkpoint: %v", err)
	}
	// The checkpoint unreadable, of the same size: the kept head is
	// taken, and the checkpoint is not read (verifying would write it
	// again).
	fi, err := os.Stat(checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte{'x'}, int(fi.Size()))
	if err := os.WriteFile(checkpoint, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := headOf(p.bob); got != want {
		t.Fatalf("bob's head from the kept one %+v, want %+v", got, want)
	}
	if b, _ := os.ReadFile(checkpoint); !bytes.Equal(b, junk) {
		t.Fatal("the checkpoint was read and written again while the chain had not moved")
	}
	// The chain moves on: bob verifies it (from its genesis, his
	// checkpoint unreadable) and keeps the new head.
	p.alice.invite(t)
	want = headOf(p.alice)
	if got := headOf(p.bob); got != want || got.Seq < 2 {
		t.Fatalf("bob's head after an invite %+v, alice's %+v", got, want)
	}
	if b, _ := os.ReadFile(checkpoint); bytes.Equal(b, junk) {
		t.Fatal("the checkpoint was not written again after the chain moved")
	}
	// No head kept: verified, and kept again.
	if err := os.Remove(kept); err != nil {
		t.Fatal(err)
	}
	if got := headOf(p.bob); got != want {
		t.Fatalf("bob's head without a kept one %+v, want %+v", got, want)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("the head was not kept again: %v", err)
	}
	// The hub rolls back its last entry: refused as before, the kept
	// head notwithstanding.
	if _, err := p.pool.Exec(context.Background(), `DELETE FROM team_chain WHERE team_id = $1 AND seq = $2`, p.id, want.Seq); err != nil {
		t.Fatal(err)
	}
	r := p.bob.run(t, "team", "head")
	if r.Code == 0 || !strings.Contains(r.Stderr, "this machine verified") || !strings.Contains(r.Stderr, "loom team fork") {
		t.Fatalf("bob's head on a chain rolled back: exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
	}
}
