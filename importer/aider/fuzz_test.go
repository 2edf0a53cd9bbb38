package aider

import (
	"context"
	"io"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a chat history: it must not panic,
// must end soon, and what it returns must be valid.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f, sample)
	importertest.SeedStrings(f,
		"",
		"# aider chat started at \n",
		"# aider chat started at 2025-01-01 10:00:00\n#### a  \n```\n#### b  \n> c  \n",
		"# aider chat started at 2025-01-01 10:00:00\n> Tokens: 9e99k sent, -1 received. Cost: $NaN message\n",
		"# aider chat started at 2025-01-01 10:00:00\n#### x\nreply\n> Tokens: 1M sent, 2k cache hit, 5k cache write, 1 received.\n",
		"\xff\xfe# aider chat started at 2025-01-01 10:00:00\r\n####   \r\n",
	)
	importertest.FuzzStream(f, func(ctx context.Context, r io.Reader) (*importer.Result, error) {
		return read(ctx, "/fuzz/"+HistoryFile, r)
	}, func(t *testing.T, _ []byte, res *importer.Result) {
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
