//go:build unix

package opencode

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/loomhq/loom/importer"
)

// TestNamedPipe: a record that is a named pipe is reported, not waited
// on.
func TestNamedPipe(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"session/p/ses_n.json":     `{"title":"n","time":{"created":1,"updated":1}}`,
		"message/ses_n/msg_1.json": `{"role":"user","time":{"created":1}}`,
		"part/msg_1/prt_1.json":    `{"type":"text","text":"hello"}`,
	})
	pipe := filepath.Join(dir, storageDir, "part", "msg_1", "prt_2.json")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	bs, err := Format{}.Bundles(context.Background(), dir)
	if err != nil || len(bs) != 1 || len(bs[0].Files) != 3 {
		t.Fatalf("bundles list the pipe: %v, %v", bs, err)
	}
	b := importer.Bundle{Files: append(bs[0].Files, pipe)}
	res, err := Format{}.Read(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "problems", res.Problems, []importer.Problem{{File: pipe, Reason: "not a regular file (a named pipe)"}})
	equal(t, "text", res.Sessions[0].Messages[0].Text(), "hello")
	if _, err := (Format{}).Read(context.Background(), importer.Bundle{Files: []string{pipe}}); err == nil {
		t.Error("read a pipe as a bundle")
	}
}
