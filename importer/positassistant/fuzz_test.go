package positassistant

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a conversation's tree and as its
// model messages: no panic, bounded time, a valid result.
func FuzzRead(f *testing.F) {
	conv := filepath.Join(root, "5c9e21f0", mainID)
	importertest.FuzzFilePair(f, Format{}, [2]string{"w/c/conversation.json", "w/c/lm-messages.jsonl"},
		[2][]byte{importertest.ReadBytes(f, filepath.Join(conv, "conversation.json")), importertest.ReadBytes(f, filepath.Join(conv, "lm-messages.jsonl"))})
}
