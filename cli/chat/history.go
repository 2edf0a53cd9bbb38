package chat

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// historyLimit is how many messages the input history keeps.
const historyLimit = 1000

// readHistory reads the messages typed in earlier chats, oldest first:
// one a line, a message of several lines quoted as a Go string.
func readHistory(path string) []string {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	var h []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, `"`) {
			if s, err := strconv.Unquote(line); err == nil {
				line = s
			}
		}
		if line != "" {
			h = append(h, line)
		}
	}
	return h
}

// writeHistory keeps the newest historyLimit messages in path. The
// history is a convenience: failing to write it loses nothing stored.
func writeHistory(path string, h []string) {
	if len(h) > historyLimit {
		h = h[len(h)-historyLimit:]
	}
	var b strings.Builder
	for _, s := range h {
		if strings.ContainsAny(s, "\r\n") || strings.HasPrefix(s, `"`) {
			s = strconv.Quote(s)
		}
		b.WriteString(s + "\n")
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(b.String()), 0o600)
}
