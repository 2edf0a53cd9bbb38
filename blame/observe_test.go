package blame

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/observe"
)

// observedShell is an agent's shell call that runs cmd for real in the
// repository, with loom's hooks around it (observe.Before and After,
// as loom blame observe runs them), recorded into dir.
func (r *repo) observedShell(dir, name, cmd string) {
	r.t.Helper()
	r.tick(10 * time.Second)
	s := r.session(name, "claude-code")
	call := "toolu_" + strconv.FormatInt(r.clock.UnixNano(), 36)
	in, _ := json.Marshal(map[string]any{"command": cmd})
	prompt := &loom.Message{Role: loom.RoleUser, CreatedAt: r.clock.Add(-time.Second), Parts: []loom.Part{{Type: loom.PartText, Text: "please run it"}}}
	reply := &loom.Message{Role: loom.RoleAssistant, Model: "m-" + name, Provider: "p", CreatedAt: r.clock, Parts: []loom.Part{
		{Type: loom.PartTool, CallID: call, Name: "Bash", Status: loom.ToolCompleted, Input: in, Output: json.RawMessage(`"done"`)}}}
	if err := r.st.Append(context.Background(), s, prompt, reply); err != nil {
		r.t.Fatal(err)
	}
	ctx := context.Background()
	if err := observe.Before(ctx, dir, s.Key, call, r.dir); err != nil {
		r.t.Fatal(err)
	}
	c := exec.Command("sh", "-c", cmd)
	c.Dir = r.dir
	if out, err := c.CombinedOutput(); err != nil {
		r.t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if err := observe.After(ctx, dir, observe.Record{Key: s.Key, Call: call, Tool: "Bash", At: r.clock, Command: cmd}); err != nil {
		r.t.Fatal(err)
	}
}

// observedBlame is the blame of rel with the records of dir read beside
// the store's edits.
func (r *repo) observedBlame(dir, rel string) *Result {
	r.t.Helper()
	recs, err := observe.Read(dir)
	if err != nil {
		r.t.Fatal(err)
	}
	es := &observe.Edits{EditStore: r.st, Records: recs, Session: observe.ByKey(r.st, "local")}
	b := &Blamer{Store: es, Roots: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }}
	res, err := b.File(context.Background(), filepath.Join(r.dir, rel), "")
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

// TestBlameObservedShell: a script the agent ran (an awk program in a
// file, a python script that rewrites two files by a rule of its own)
// names no file on its command line, so that reading the command
// credits nothing; what the hooks saw it change is the agent's, line by
// line, and the lines it left stay the human's.
func TestBlameObservedShell(t *testing.T) {
	r := newRepo(t)
	obs := t.TempDir()
	r.write("config/limits.txt", "max_connections 100\nidle_timeout 30\nretry_budget 5\nlog_level info\n")
	r.write("src/names.py", "def first():\n    return fetch_user_record(1)\n\n\ndef second():\n    return 2\n")
	r.write("tools/bump.awk", "$1 == \"max_connections\" { $2 = $2 * 4 } $1 == \"retry_budget\" { $2 = 9 } { print }\n")
	r.write("tools/rename.py", "import pathlib\nfor p in pathlib.Path('src').glob('*.py'):\n    p.write_text(p.read_text().replace('fetch_user_record', 'load_user_record'))\n")
	r.commit("start")
	r.observedShell(obs, "s1", "awk -f tools/bump.awk config/limits.txt > limits.tmp && mv limits.tmp config/limits.txt && python3 tools/rename.py")
	r.commit("bump")
	who := map[string]string{"max_connections 400": "agent:s1", "retry_budget 9": "agent:s1", "idle_timeout": "human", "log_level": "human"}
	r.want(r.observedBlame(obs, "config/limits.txt"), who)
	r.want(r.observedBlame(obs, "src/names.py"), map[string]string{"load_user_record": "agent:s1", "def first": "human", "return 2": "human"})
	// Without the records the command line tells nothing of these files.
	res := r.blame("config/limits.txt")
	for _, l := range res.Lines {
		if l.SessionID != "" && strings.Contains(l.Text, "max_connections") {
			t.Fatalf("the command line alone credited %q: the test no longer shows what observing adds", l.Text)
		}
	}
}

// TestBlameObservedLogBounded: a blame reads the records of its own
// work tree, not another's many (a large log does not slow it), and a
// compaction of its work tree's records, which drops the records whose
// lines are gone, leaves every line's credit as it was.
func TestBlameObservedLogBounded(t *testing.T) {
	r := newRepo(t)
	obs := t.TempDir()
	r.write("config/limits.txt", "max_connections 100\nidle_timeout 30\nretry_budget 5\nlog_level info\n")
	r.write("notes/todo.txt", "first item\n")
	r.write("tools/bump.awk", "$1 == \"max_connections\" { $2 = $2 * 4 } $1 == \"retry_budget\" { $2 = 9 } { print }\n")
	r.commit("start")
	r.observedShell(obs, "s1", "awk -f tools/bump.awk config/limits.txt > limits.tmp && mv limits.tmp config/limits.txt")
	r.observedShell(obs, "s2", "printf 'second item from the agent\\n' >> notes/todo.txt")
	r.commit("bump")
	// A human rewrites the agent's line of todo.txt: its record accounts
	// for nothing now.
	r.write("notes/todo.txt", "first item\nsecond item, the human's words\n")
	r.commit("human")
	// Another work tree's many records.
	other := rec("/elsewhere/repo", strings.Repeat("a line of another repository\n", 40))
	for i := range 2000 {
		other.Call = fmt.Sprint("other-", i)
		if err := observe.Append(obs, other); err != nil {
			t.Fatal(err)
		}
	}
	blame := func(rel string) (string, int64) {
		log := observe.Open(obs)
		es := &observe.Edits{EditStore: r.st, Log: log, Session: observe.ByKey(r.st, "local")}
		b := &Blamer{Store: es, Roots: r.st, UserID: "local", Now: func() time.Time { return r.clock.Add(time.Hour) }}
		res, err := b.File(context.Background(), filepath.Join(r.dir, rel), "")
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(res.Lines)
		return string(j), log.BytesRead()
	}
	limits, read := blame("config/limits.txt")
	r.want(r.observedBlame(obs, "config/limits.txt"), map[string]string{"max_connections 400": "agent:s1", "retry_budget 9": "agent:s1", "idle_timeout": "human"})
	if read > 64<<10 {
		t.Errorf("a blame read %d bytes of records: another work tree's too", read)
	}
	todo, _ := blame("notes/todo.txt")
	// The compaction rule: the records are older than kept regardless.
	if err := observe.Compact(obs, r.dir, r.clock.Add(60*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if again, _ := blame("config/limits.txt"); again != limits {
		t.Errorf("config/limits.txt after the compaction\n%s\nbefore\n%s", again, limits)
	}
	if again, _ := blame("notes/todo.txt"); again != todo {
		t.Errorf("notes/todo.txt after the compaction\n%s\nbefore\n%s", again, todo)
	}
	kept := 0
	for _, rc := range observe.Open(obs).Under(r.dir) {
		kept++
		if strings.Contains(rc.Command, "printf") {
			t.Error("the record of a line gone is kept")
		}
	}
	if kept != 1 {
		t.Errorf("%d records kept, want the awk's", kept)
	}
}

// rec is a record of a call at root that wrote text into a file.
func rec(root, text string) observe.Record {
	return observe.Record{Key: "claude-code:other", Tool: "Bash", Root: root, At: time.Now(),
		Files: []observe.Change{{Path: "f.txt", After: "a", New: text}}}
}

// TestBlameObservedShellRandom: random files, random lines rewritten by
// a shell script the agent runs (sed of line numbers, which no reading
// of the command ties to text), a human's edits after: blame credits the
// session exactly the lines the script wrote that still stand. The seed
// is printed on failure; LOOM_OBSERVE_SEED replays one.
func TestBlameObservedShellRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOOM_OBSERVE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (LOOM_OBSERVE_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	r := newRepo(t)
	obs := t.TempDir()
	type line struct{ text, who string }
	files := map[string][]line{}
	word := func() string {
		return fmt.Sprintf("%s_%d", []string{"alpha", "gamma", "delta", "omega", "sigma"}[rng.IntN(5)], rng.IntN(1_000_000))
	}
	save := func(name string) {
		var b strings.Builder
		for _, l := range files[name] {
			b.WriteString(l.text + "\n")
		}
		r.write(name, b.String())
	}
	for i := range 3 {
		name := fmt.Sprintf("pkg%d/data%d.txt", i, i)
		for range 8 + rng.IntN(8) {
			files[name] = append(files[name], line{"value " + word() + " = " + word(), "human"})
		}
		save(name)
	}
	r.commit("start")
	var script strings.Builder
	for name, ls := range files {
		for n := range ls {
			if rng.IntN(3) == 0 {
				text := "computed " + word() + " from " + word()
				fmt.Fprintf(&script, "sed -i '%ds/.*/%s/' %s\n", n+1, text, name)
				files[name][n] = line{text, "agent:s1"}
			}
		}
	}
	r.write("tools/regen.sh", script.String())
	r.commit("script")
	r.observedShell(obs, "s1", "sh tools/regen.sh")
	// A human then rewrites one line the script wrote, and one of theirs.
	for name, ls := range files {
		n := rng.IntN(len(ls))
		files[name][n] = line{"edited " + word(), "human"}
		save(name)
	}
	r.commit("regen")
	for name, ls := range files {
		res := r.observedBlame(obs, name)
		if len(res.Lines) != len(ls) {
			t.Fatalf("seed %d: %s has %d lines blamed, want %d", seed, name, len(res.Lines), len(ls))
		}
		for i, l := range res.Lines {
			got := l.Kind
			if l.SessionID != "" {
				got += ":s1"
			}
			if got != ls[i].who {
				t.Errorf("seed %d: %s line %d %q: %s, want %s", seed, name, i+1, l.Text, got, ls[i].who)
			}
		}
	}
}
