package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
)

// SmallDisk mounts a tmpfs of size (such as "8m") on a new directory
// that owner (a user name; "" for this process's) owns alone, and
// returns the directory, unmounted and removed when the test ends. A
// test that cannot mount one (not root, no mount command) is skipped,
// saying why: a real full disk needs one.
func SmallDisk(t testing.TB, size, owner string) string {
	t.Helper()
	// Under /tmp itself, not t.TempDir: another user (PostgreSQL's) must
	// reach it, and a test's own directories are its alone.
	dir, err := os.MkdirTemp("", "loom-disk-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	opts := "size=" + size + ",mode=0700"
	if owner != "" {
		u, err := user.Lookup(owner)
		if err != nil {
			t.Skipf("no user %s to own a small disk: %v", owner, err)
		}
		opts += ",uid=" + u.Uid + ",gid=" + u.Gid
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s): a full disk needs one", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Tablespace makes a PostgreSQL tablespace in dir (a SmallDisk of the
// server's user, "postgres"), dropped when the test ends, and returns
// what makes it the default_tablespace of a URL's connections: the
// tables a store opened on that URL makes live on the small disk. Make
// it before the URL's schema, whose tables must be dropped first. A
// server that cannot make one there (it runs on another machine) skips
// the test.
func Tablespace(t testing.TB, pool *pgxpool.Pool, dir string) (on func(dsn string) string) {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "loomtest_disk_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLESPACE `+name+` LOCATION '`+dir+`'`); err != nil {
		t.Skipf("cannot make a tablespace on the small disk (is PostgreSQL on another machine?): %v", err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), `DROP TABLESPACE `+name); err != nil {
			t.Errorf("drop tablespace %s: %v", name, err)
		}
	})
	return func(dsn string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("default_tablespace", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
}

// Fill writes a file into dir until its file system is full, and
// returns the function that removes it.
func Fill(t testing.TB, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for chunk != nil {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			// What a whole chunk no longer fits in, a smaller one may.
			if chunk = chunk[:len(chunk)/2]; len(chunk) < 512 {
				chunk = nil
			}
		}
	}
	if err := f.Close(); err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// OutOfSpace checks st on a full disk (or a file at its size limit):
// full makes it so and returns the function that makes room again.
// Appending a message, and putting sync records,
// then fail as loom.ENOSPACE with a message of one line, and store
// nothing; with room again, both work and the session holds what was
// stored before and after, nothing of what failed.
func OutOfSpace(t *testing.T, st loom.Engine, full func() (room func())) {
	t.Helper()
	ctx := context.Background()
	s := &loom.Session{ID: loom.NewID(), UserID: "u", Key: "cli:full"}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	say := func(text string) *loom.Message {
		at = at.Add(time.Second)
		return &loom.Message{Role: loom.RoleUser, CreatedAt: at, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	}
	if err := st.Append(ctx, s, say("before the disk fills")); err != nil {
		t.Fatal(err)
	}
	host := loom.NewID()
	records := func(from int64) []loom.SyncRecord {
		var out []loom.SyncRecord
		for i := from; i < from+8; i++ {
			out = append(out, loom.SyncRecord{Host: host, Index: i, Header: []byte(fmt.Sprintf(`{"i":%d}`, i)), Body: noise(64 << 10)})
		}
		return out
	}
	if _, err := st.PutSyncRecords(ctx, "u", records(1)); err != nil {
		t.Fatal(err)
	}
	room := full()
	big := string(noise(256 << 10))
	err := st.Append(ctx, s, say("on the full disk "+big))
	if loom.ErrorCode(err) != loom.ENOSPACE || strings.ContainsAny(loom.ErrorMessage(err), "\r\n") {
		t.Fatalf("append on a full disk: %v (code %q), want %s", err, loom.ErrorCode(err), loom.ENOSPACE)
	}
	t.Logf("append on a full disk: %v", err)
	if _, err := st.PutSyncRecords(ctx, "u", records(9)); loom.ErrorCode(err) != loom.ENOSPACE {
		t.Fatalf("sync records on a full disk: %v (code %q), want %s", err, loom.ErrorCode(err), loom.ENOSPACE)
	}
	room()
	if err := st.Append(ctx, s, say("with room again")); err != nil {
		t.Fatalf("append with room again: %v", err)
	}
	msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Text() != "before the disk fills" || msgs[1].Text() != "with room again" {
		t.Fatalf("the session after a full disk holds %d messages", len(msgs))
	}
	if n, err := st.PutSyncRecords(ctx, "u", records(9)); err != nil || n != 8 {
		t.Fatalf("sync records with room again: %d, %v", n, err)
	}
}

// noise returns n bytes that no engine compresses: text of random
// letters, as sealed records and long replies are to a page.
func noise(n int) []byte {
	b := make([]byte, n)
	x := uint64(time.Now().UnixNano()) | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = 'a' + byte(x%26)
	}
	return b
}
