package aider

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a chat history: it must not panic,
// must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	data, err := os.ReadFile(sample)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	for _, s := range []string{
		"",
		"# aider chat started at \n",
		"# aider chat started at 2025-01-01 10:00:00\n#### a  \n```\n#### b  \n> c  \n",
		"# aider chat started at 2025-01-01 10:00:00\n> Tokens: 9e99k sent, -1 received. Cost: $NaN message\n",
		"# aider chat started at 2025-01-01 10:00:00\n#### x\nreply\n> Tokens: 1M sent, 2k cache hit, 5k cache write, 1 received.\n",
		"\xff\xfe# aider chat started at 2025-01-01 10:00:00\r\n####   \r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		res, err := read(ctx, "/fuzz/"+HistoryFile, bytes.NewReader(data))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("read took %v", d)
		}
		if err != nil {
			return
		}
		importertest.CheckValidOf(t, Tool, res)
		for _, s := range res.Sessions {
			for _, m := range s.Messages {
				if u := m.Usage; u.InputTokens < 0 || u.OutputTokens < 0 || u.CostUSD < 0 {
					t.Fatalf("usage %+v", u)
				}
			}
		}
	})
}
