package claudecode

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/loomhq/loom/importer"
)

var _ importer.ReplyWaiter = Format{}

// replyTail is how much of the end of a session file AwaitReply reads:
// the turn's last lines.
const replyTail = 1 << 20

// AwaitReply waits, for at most wait, until the session file at path
// holds the reply whose text Claude Code passed its Stop hook
// (last_assistant_message), and reports whether it does
// (importer.ReplyWaiter). Claude Code fires Stop before it has written
// the reply to the file; the reply follows within moments. A reply is
// found when an assistant line after the turn's prompt has a text block
// that ends text.
func (Format) AwaitReply(ctx context.Context, path, text string, wait time.Duration) bool {
	text = strings.TrimSpace(text)
	if text == "" {
		return true
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if hasReply(path, text) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return hasReply(path, text)
		case <-tick.C:
		}
	}
}

// hasReply reports whether the last lines of the file at path, back to
// the last prompt, hold an assistant text block that ends text.
func hasReply(path, text string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	off := max(0, fi.Size()-replyTail)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return false
	}
	lines := bytes.Split(buf, []byte("\n"))
	if off > 0 {
		lines = lines[1:] // the first is cut
	}
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(lines[i])
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var l struct {
			Type    string      `json:"type"`
			IsMeta  bool        `json:"isMeta"`
			Message *rawMessage `json:"message"`
		}
		if json.Unmarshal(line, &l) != nil || l.Message == nil {
			continue
		}
		blocks, str := parseContent(path, 0, l.Message.Content, &importer.Result{})
		switch l.Type {
		case "assistant":
			for _, b := range blocks {
				if t := strings.TrimSpace(b.Text); b.Type == "text" && t != "" && strings.HasSuffix(text, t) {
					return true
				}
			}
		case "user":
			if l.IsMeta {
				continue
			}
			for _, b := range blocks {
				if str || b.Type == "text" {
					return false // the turn's prompt: no reply after it
				}
			}
		}
	}
	return false
}
