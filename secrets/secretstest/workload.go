package secretstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loomhq/loom"
)

// Workload makes the messages of the secret-scan benchmarks, as
// sessions hold them: a prompt, a reply of 600 bytes, and tool calls
// whose output is 2 KB of code;
// one message in fifty carries a fake secret, from a Gen seeded with
// seed.
type Workload struct {
	code []byte
	g    *Gen
}

// NewWorkload returns a workload over the code of the files glob
// matches, one after the other.
func NewWorkload(glob string, seed uint64) (*Workload, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, err
	}
	var code []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		code = append(code, b...)
	}
	if len(code) <= 2048 {
		return nil, fmt.Errorf("the workload's code is %d bytes: it needs more than 2048", len(code))
	}
	return &Workload{code: code, g: New(seed)}, nil
}

// Message returns the k-th message of the workload (k from 0), with seq
// k+1.
func (w *Workload) Message(k int) *loom.Message {
	off := (k * 2048) % (len(w.code) - 2048)
	chunk := string(w.code[off : off+2048])
	m := &loom.Message{ID: loom.NewID(), Seq: int64(k + 1), Role: loom.RoleAssistant}
	switch k % 3 {
	case 0:
		m.Role = loom.RoleUser
		m.Parts = []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: "Why does the export fail on the damaged store? Look at load.go and fix the salvage path."}}
	case 1:
		m.Parts = []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: chunk[:600]}}
	default:
		out, _ := json.Marshal(chunk)
		m.Parts = []loom.Part{{ID: loom.NewID(), Type: loom.PartTool, CallID: "c", Name: "read", Status: loom.ToolCompleted,
			Input: json.RawMessage(`{"path":"store.go"}`), Output: out}}
	}
	if k%50 == 0 {
		m.Parts[0].Text += "\n" + w.g.Secret(Kinds[k/50%len(Kinds)]).Text
	}
	return m
}
