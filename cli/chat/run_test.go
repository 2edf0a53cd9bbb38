package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
)

// world is what chat and run work on in these tests: a SQLite store in
// a temporary directory, project api beside it, and a fake
// OpenAI-compatible model.
type world struct {
	st      *sqlite.Store
	project loom.Project
	model   *openaitest.Server
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "api")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := paths.DetectProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	return &world{st: cmdtest.Store(t), project: p, model: srv}
}

func (w *world) createStore(context.Context) (loom.Engine, error) { return w.st, nil }

// openConversation opens the conversation a choice names as
// command.OpenConversation does for user local in project api (a key,
// the project's latest session, or a new one), with the fake model as
// the agent's: the model asked for, else gpt-4o-mini.
func (w *world) openConversation(ctx context.Context, st loom.Store, c command.SessionChoice, ag agent.Choice, current bool) (*agent.Conversation, error) {
	prov := openai.New(openai.Config{BaseURL: w.model.BaseURL(), APIKey: "test", MaxRetries: -1})
	svc := &agent.Service{Store: st, Build: func(_ context.Context, st loom.Store, s *loom.Session, ag agent.Choice) (*agent.Loop, error) {
		l := agent.NewLoop(st, prov, cmp.Or(ag.Model, "gpt-4o-mini"))
		s.Model, s.Provider = l.Model, prov.Name()
		return l, nil
	}}
	return svc.Open(ctx, agent.Spec{UserID: "local", Project: w.project, Cwd: w.project.Root, Key: c.Key,
		New: c.New || (!current && !c.Continue), Continue: c.Continue, Agent: ag})
}

// sessions are user local's sessions in w's store.
func (w *world) sessions(t *testing.T) []*loom.Session {
	t.Helper()
	found, err := w.st.Sessions(t.Context(), loom.SessionFilter{UserID: "local"})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// texts are session id's messages in w's store, each "role: text".
func (w *world) texts(t *testing.T, id string) []string {
	t.Helper()
	msgs, err := w.st.Messages(t.Context(), id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+": "+m.Text())
	}
	return out
}

// Run sends the prompt to the model, streams the reply to stdout, names
// the session on stderr with how to resume it, and the store holds the
// turn, with the model asked for. With the same key a second run goes
// on in that session; - reads the prompt from stdin without its last
// newline, and --json prints the stored reply instead of streaming it.
func TestRunRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Enqueue(openaitest.Reply{Text: "It builds loom."}, openaitest.Reply{Text: "They pass."})
	choice := command.SessionChoice{Key: "notes:today"}

	ios, _, _, _ := term.Test()
	opts := &RunOptions{Conversing: Conversing{IO: ios, CreateStore: w.createStore, OpenConversation: w.openConversation},
		Prompt: "summarise the README", Choice: choice, Agent: agent.Choice{Model: "gpt-test"}}
	if err := Run(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	found := w.sessions(t)
	if len(found) != 1 || found[0].Key != "notes:today" || found[0].Model != "gpt-test" || found[0].Project.ID != w.project.ID {
		t.Fatalf("sessions after run: %+v", found)
	}
	s := found[0]
	out, errOut := cmdtest.Outputs(ios)
	if out != "It builds loom.\n" {
		t.Errorf("stdout %q, want the reply", out)
	}
	if want := "session " + s.ID + "\nresume this session with: loom run --resume " + s.ID + " PROMPT\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if got, want := w.texts(t, s.ID), []string{"user: summarise the README", "assistant: It builds loom."}; !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	if reqs := w.model.Requests(); len(reqs) != 1 || reqs[0].Body["model"] != "gpt-test" {
		t.Errorf("the model was asked %d times, want once for gpt-test", len(reqs))
	}

	ios, in, _, _ := term.Test()
	in.WriteString("and the tests?\n")
	opts = &RunOptions{Conversing: Conversing{IO: ios, CreateStore: w.createStore, OpenConversation: w.openConversation},
		Prompt: "-", Choice: choice, JSON: true, NoResumeHint: true}
	if err := Run(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut = cmdtest.Outputs(ios)
	var printed []*loom.Message
	if err := json.Unmarshal([]byte(out), &printed); err != nil || len(printed) != 1 || printed[0].Text() != "They pass." || printed[0].SessionID != s.ID {
		t.Errorf("--json printed %q (%v), want the stored reply", out, err)
	}
	if errOut != "session "+s.ID+"\n" {
		t.Errorf("--no-resume-hint: stderr %q", errOut)
	}
	want := []string{"user: summarise the README", "assistant: It builds loom.", "user: and the tests?", "assistant: They pass."}
	if got := w.texts(t, s.ID); len(w.sessions(t)) != 1 || !slices.Equal(got, want) {
		t.Errorf("after the second run: %d sessions, stored %q", len(w.sessions(t)), got)
	}
}

// An empty prompt, here from stdin, is a usage error: nothing is stored
// and the model is not asked.
func TestRunRunEmptyPrompt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ios, in, _, _ := term.Test()
	in.WriteString(" \n\n")
	opts := &RunOptions{Conversing: Conversing{IO: ios, CreateStore: w.createStore, OpenConversation: w.openConversation}, Prompt: "-"}
	cmdtest.Refused(t, Run(t.Context(), opts), "the prompt is empty")
	if n, reqs := len(w.sessions(t)), len(w.model.Requests()); n != 0 || reqs != 0 {
		t.Errorf("an empty prompt left %d sessions and asked the model %d times", n, reqs)
	}
}

// The command fills its options from its flags and its one PROMPT: a
// new session by default, and only one way of naming the session.
func TestNewCmdRunOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdRun, "summarise the README")
	if got.Prompt != "summarise the README" || got.Choice != (command.SessionChoice{}) || got.Agent != (agent.Choice{}) ||
		got.JSON || got.NoResumeHint || got.CreateStore == nil || got.OpenConversation == nil {
		t.Errorf("options: %+v", got)
	}
	got = cmdtest.Options(t, NewCmdRun, "--key", "notes:today", "--model", "gpt-test", "--profile", "terse", "--no-resume-hint", "--json", "-")
	if got.Prompt != "-" || got.Choice.Key != "notes:today" || got.Agent != (agent.Choice{Model: "gpt-test", Profile: "terse"}) || !got.NoResumeHint || !got.JSON {
		t.Errorf("--key --model --profile --no-resume-hint --json: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdRun, "-c", "and now the tests"); got.Choice != (command.SessionChoice{Continue: true}) {
		t.Errorf("-c: %+v", got.Choice)
	}
	if got := cmdtest.Options(t, NewCmdRun, "-r", "flaky test", "and now the tests"); got.Choice != (command.SessionChoice{Resume: "flaky test"}) || got.Prompt != "and now the tests" {
		t.Errorf("-r: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdRun, "--new", "-n", "retry backoff", "go"); got.Choice != (command.SessionChoice{New: true, Name: "retry backoff"}) {
		t.Errorf("--new -n: %+v", got.Choice)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdRun), "run takes one PROMPT")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdRun, "one", "two"), "run takes one PROMPT")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdRun, "--new", "-c", "go"), "use only one of --new, --continue, --resume and --key")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdRun, "-r", "flaky test", "-n", "retry backoff", "go"), "--name titles a new session")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdRun, "--key", "today", "go"), "--key: key \"today\" must be SURFACE:NAME")
}
