package synclog

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// Hosts of the tests, in the order their ids sort.
const (
	hostA HostID = "0196a3b2-0000-4000-8000-00000000000a"
	hostB HostID = "0196a3b2-0000-4000-8000-00000000000b"
)

const (
	sessionID = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0d"
	forkID    = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0e"
	storeID   = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0f"
	childID   = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c10"
	keyID     = "98bd7169152fea6f"
)

func ptr[T any](v T) *T { return &v }

// words is what English-like text of the tests is made of.
var words = strings.Fields(`the a of to and in is it that for on with as this be are
was by at from or an not have but we you they which one all were when there can
more if out so what up about into them some could time only other than then now
its over also after use two how our work first well way even new want because any
these give day most us session message store sync record host clock merge fork
test file function error return value config server search index query table`)

// text returns English-like text of about n bytes.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// message returns message seq of a session: a user message with one text
// part when odd, else an assistant message with a reasoning, a tool and a
// text part, with usage, as loom stores them.
func message(r *rand.Rand, seq int64) *loom.Message {
	at := t0.Add(time.Duration(seq) * time.Second)
	m := &loom.Message{
		ID: loom.NewIDAt(at), SessionID: sessionID, Seq: seq, CreatedAt: at,
		Turn: int(seq+1) / 2,
	}
	if seq%2 == 1 {
		m.Role = loom.RoleUser
		m.Parts = []loom.Part{{ID: loom.NewIDAt(at), Type: loom.PartText, Text: text(r, 50+r.IntN(300))}}
		return m
	}
	done := at.Add(2 * time.Second)
	input, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("internal/%s/%s.go", words[r.IntN(len(words))], words[r.IntN(len(words))])})
	output, _ := json.Marshal(text(r, 100+r.IntN(500)))
	m.Role, m.Model, m.Provider, m.CompletedAt = loom.RoleAssistant, "gpt-5-mini", "openai", &done
	m.Usage = loom.Usage{InputTokens: 1200 + r.Int64N(5000), OutputTokens: 100 + r.Int64N(800), CacheReadTokens: 1024, CostUSD: 0.0042, APICalls: 1}
	m.Parts = []loom.Part{
		{ID: loom.NewIDAt(at), Type: loom.PartReasoning, Text: text(r, 50+r.IntN(200))},
		{ID: loom.NewIDAt(at), Type: loom.PartTool, CallID: "call_" + fmt.Sprint(seq), Name: "read_file", Status: loom.ToolCompleted,
			Input: input, Output: output, StartedAt: &at, EndedAt: &done},
		{ID: loom.NewIDAt(at), Type: loom.PartText, Text: text(r, 50+r.IntN(400))},
	}
	return m
}

// messages returns messages first to first+n-1 of a session.
func messages(seed uint64, first int64, n int) []*loom.Message {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]*loom.Message, n)
	for i := range out {
		out[i] = message(r, first+int64(i))
	}
	return out
}

// row returns a session row as a record creates it.
func row(id string) *loom.Session {
	return &loom.Session{
		ID: id, Key: "cli:loom", UserID: "local", Surface: "cli", Kind: loom.KindMain,
		Project: loom.Project{ID: "4f1d2c3b4a596877", Name: "loom", Root: "/home/ana/src/loom"},
		Cwd:     "/home/ana/src/loom", Model: "gpt-5-mini", Provider: "openai", Profile: "default",
		CreatedAt: t0, UpdatedAt: t0, GitBranch: "main",
	}
}

// samples returns a valid payload of every type.
func samples() []Payload {
	fork := row(forkID)
	fork.Key, fork.Kind, fork.ParentID, fork.ForkTurn, fork.Title = "", loom.KindFork, sessionID, 1, "plan (fork)"
	rewound := row(forkID)
	rewound.Key, rewound.Kind, rewound.ParentID, rewound.ForkTurn, rewound.Title = "", loom.KindFork, sessionID, 1, "plan (rewound)"
	msgs := messages(1, 1, 4)
	imported := row(childID)
	imported.Key, imported.Surface, imported.Source = "claude-code:abc", "claude-code", &loom.Source{Tool: "claude-code", Version: "2.1.3", Path: "/home/ana/.claude/projects/x/abc.jsonl"}
	importedMsgs := messages(2, 1, 2)
	for _, m := range importedMsgs {
		m.SessionID = childID
	}
	part := msgs[1].Parts[1]
	part.Status, part.Output = loom.ToolError, json.RawMessage(`"boom"`)
	part.Error = "exit status 1"
	archived := t0.Add(time.Hour)
	return []Payload{
		&SessionCreated{Session: row(sessionID)},
		&SessionChanged{SessionID: sessionID, Title: ptr("plan"), Model: ptr("gpt-5"), At: ptr(t0.Add(time.Minute))},
		&SessionChanged{SessionID: sessionID, Archive: &Archive{At: &archived}},
		&SessionChanged{SessionID: sessionID, Archive: &Archive{}},
		&MessagesAppended{SessionID: sessionID, FirstSeq: 1, Messages: msgs[:2], At: t0},
		&MessagesAppended{SessionID: sessionID, FirstSeq: 3, PrevID: msgs[1].ID, Messages: msgs[2:], At: t0.Add(time.Minute)},
		&PartUpdated{SessionID: sessionID, Seq: 2, MessageID: msgs[1].ID, Part: part},
		&UsageUpdated{SessionID: sessionID, Seq: 2, MessageID: msgs[1].ID, Usage: loom.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: 0.25}},
		&Forked{Session: fork, LastSeq: 2, LastID: msgs[1].ID},
		&Rewound{SessionID: sessionID, Turn: 1, KeepSeq: 2, KeepID: msgs[1].ID, Fork: rewound, Store: storeID, At: t0.Add(time.Hour)},
		&Trashed{SessionIDs: []string{sessionID, childID}, At: t0.Add(2 * time.Hour), Seen: Vector{hostA: 7, hostB: 3}},
		&Restored{SessionIDs: []string{sessionID}},
		&Purged{SessionIDs: []string{sessionID}, Seen: Vector{hostA: 9}},
		&Imported{Sessions: []*loom.SessionData{{Session: imported, Messages: importedMsgs}}},
	}
}
