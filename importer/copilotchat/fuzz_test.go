package copilotchat

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as a session file, whole (.json) and
// as a log of changes (.jsonl). Reading must not panic, must end soon,
// and whatever it returns must be valid loom messages.
func FuzzRead(f *testing.F) {
	importertest.SeedFiles(f,
		filepath.Join(user, "workspaceStorage", "a1b2c3", "chatSessions", panelID+".json"),
		filepath.Join(user, "workspaceStorage", "d4e5f6", "chatSessions", logID+".jsonl"))
	f.Add([]byte(`{"kind":0,"v":{"requests":[{"response":[{"kind":"toolInvocation"}]}]}}` + "\n" + `{"kind":2,"k":["requests",0,"response"],"v":[1],"i":-3}` + "\n" + `{"kind":1,"k":[0,"a"],"v":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, log := range []bool{false, true} {
			res := &importer.Result{}
			doc := data
			if log {
				var err error
				if doc, err = replay(ctx, "f.jsonl", bytes.NewReader(data), res); err != nil {
					t.Fatal(err)
				}
			}
			parse(res, "f", "f", doc, "", time.Unix(1762000000, 0))
			importertest.CheckValidOf(t, Tool, res)
		}
	})
}
