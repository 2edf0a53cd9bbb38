package blame

import (
	"strings"
	"testing"
	"time"
)

// noAgentLines fails for every line of res an agent's or mixed.
func noAgentLines(t *testing.T, res *Result) {
	t.Helper()
	for _, l := range res.Lines {
		if l.Kind == Agent || l.Kind == Mixed {
			t.Errorf("%s:%d %q is %s (session %s, from %q): no session wrote or edited this file", res.Path, l.N, l.Text, l.Kind, l.SessionID, l.From)
		}
	}
}

const agentHandler = `package api

import (
	"encoding/json"
	"net/http"
)

// Orders lists the orders.
func Orders(w http.ResponseWriter, r *http.Request) {
	var q OrderQuery
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, err := store.Orders(r.Context(), q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(out)
}
`

const humanHandler = `package api

import (
	"encoding/json"
	"net/http"
)

// Invoices lists the invoices.
func Invoices(w http.ResponseWriter, r *http.Request) {
	var q InvoiceQuery
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, err := billing.Invoices(r.Context(), q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(out)
}
`

// TestBlameResemblanceIsNoEvidence: a human's handler written like an
// agent's (the same imports, the same error handling), committed
// alone, is the human's: no session wrote or edited it, and no commit
// moved or copied lines into it from the agent's file.
func TestBlameResemblanceIsNoEvidence(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# api\n")
	r.commit("start")
	r.agentWrite("s1", "api/orders.go", agentHandler)
	r.commit("orders")
	r.tick(time.Hour)
	r.write("api/invoices.go", humanHandler)
	r.commit("invoices")
	noAgentLines(t, r.blame("api/invoices.go"))
	// The agent's own file is still the agent's.
	r.want(r.blame("api/orders.go"), map[string]string{"func Orders": "agent:s1", "encoding/json": "agent:s1", "StatusBadRequest": "agent:s1"})
}

// TestBlameShortLinesFromElsewhere: lines that say too little to be
// told apart (blank, "end", quotes, keywords) and lines like another
// file's are never taken from another file: an Elixir module no
// session touched, with the same short lines as an agent's modules
// and a first line like theirs, is a human's whole.
func TestBlameShortLinesFromElsewhere(t *testing.T) {
	r := newRepo(t)
	r.write("README.md", "# app\n")
	r.commit("start")
	agentMod := func(name string) string {
		return "defmodule SpotterWeb." + name + " do\n  @moduledoc \"\"\"\n  The " + strings.ToLower(name) + ".\n  \"\"\"\n\n  def run(x) do\n    x\n  rescue\n    _ -> :error\n  end\nend\n"
	}
	r.agentWrite("s1", "lib/transcript_components.ex", agentMod("TranscriptComponents"))
	r.agentWrite("s1", "lib/session_components.ex", agentMod("SessionComponents"))
	r.agentWrite("s2", "lib/page_components.ex", agentMod("PageComponents"))
	r.commit("components")
	r.tick(time.Hour)
	r.write("lib/env_parser.ex", "defmodule Spotter.Config.EnvParser do\n  @moduledoc \"\"\"\n  Reads the environment.\n  \"\"\"\n\n  def parse(x) do\n    x\n  rescue\n    _ -> :error\n  end\nend\n")
	r.commit("env parser")
	noAgentLines(t, r.blame("lib/env_parser.ex"))
}

// TestBlameNewLinesBesideAgents: a human's new lines between or under
// an agent's like them (a constant under the agent's constant, YAML
// entries between the agent's) are the human's, not mixed: mixed is an
// agent's line a human changed, and every agent's line is still there.
func TestBlameNewLinesBesideAgents(t *testing.T) {
	r := newRepo(t)
	r.agentWrite("s1", "config.go", "package config\n\nconst DefaultTimeoutSeconds = 30\n\nfunc Load() {}\n")
	r.agentWrite("s1", "services.yaml", "services:\n  - name: billing\n    port: 8081\n  - name: shipping\n    port: 8082\n")
	r.commit("agent")
	r.tick(time.Hour)
	r.write("config.go", strings.Replace(r.read("config.go"), "const DefaultTimeoutSeconds = 30\n", "const DefaultTimeoutSeconds = 30\nconst DefaultRetriesCount = 3\n", 1))
	r.write("services.yaml", strings.Replace(r.read("services.yaml"), "  - name: shipping\n", "  - name: invoicing\n    port: 8083\n  - name: shipping\n", 1))
	r.commit("human")
	r.want(r.blame("config.go"), map[string]string{"DefaultTimeoutSeconds": "agent:s1", "DefaultRetriesCount": "human", "func Load": "agent:s1"})
	r.want(r.blame("services.yaml"), map[string]string{"billing": "agent:s1", "8081": "agent:s1", "invoicing": "human", "8083": "human", "shipping": "agent:s1", "8082": "agent:s1"})
}

// TestBlameMovedByHistory: lines a human moved from an agent's file
// into another file in one commit are the agent's (git's own rule for
// a move); the same lines typed into a file in a commit that did not
// touch the agent's file are the human's.
func TestBlameMovedByHistory(t *testing.T) {
	r := newRepo(t)
	r.agentWrite("s1", "a.go", "package a\n\n// Sum adds the amounts.\nfunc Sum(amounts []int) int {\n\ttotal := 0\n\tfor _, amount := range amounts {\n\t\ttotal += amount\n\t}\n\treturn total\n}\n")
	r.commit("a")
	r.tick(time.Hour)
	a := r.read("a.go")
	r.write("b.go", "package a\n\n"+a[strings.Index(a, "// Sum"):])
	r.write("a.go", "package a\n")
	r.commit("move Sum")
	r.want(r.blame("b.go"), map[string]string{"// Sum adds": "agent:s1", "func Sum": "agent:s1", "total += amount": "agent:s1", "return total": "agent:s1"})
	r.tick(time.Hour)
	r.write("c.go", "package a\n\n// Sum adds the amounts.\nfunc Sum(amounts []int) int {\n\ttotal := 0\n\tfor _, amount := range amounts {\n\t\ttotal += amount\n\t}\n\treturn total\n}\n")
	r.commit("typed again")
	noAgentLines(t, r.blame("c.go"))
}

// TestBlameMovedAndEdited: a human moved an agent's function to
// another file and changed one of its lines in the same commit: the
// lines moved as they were are the agent's, the brace after the
// changed line too, and the changed line is mixed, not a human's; a
// human's line typed beside the moved block in that commit stays the
// human's.
func TestBlameMovedAndEdited(t *testing.T) {
	r := newRepo(t)
	r.agentWrite("s1", "shapes.go", "package shapes\n\n// Area is the area of a rectangle.\nfunc Area(width, height float64) float64 {\n\treturn width * height\n}\n\n// Perimeter is the perimeter of a rectangle.\nfunc Perimeter(width, height float64) float64 {\n\treturn 2 * (width + height)\n}\n")
	r.commit("shapes")
	r.tick(time.Hour)
	a := r.read("shapes.go")
	i := strings.Index(a, "// Perimeter")
	r.write("shapes.go", a[:i])
	r.write("edges.go", "package shapes\n\n// humanNote explains the edges.\n"+strings.Replace(a[i:], "2 * (width + height)", "2*width + 2*height", 1))
	r.commit("move Perimeter")
	res := r.blame("edges.go")
	r.want(res, map[string]string{"// Perimeter is": "agent:s1", "func Perimeter": "agent:s1", "2*width + 2*height": "mixed:s1", "}": "agent:s1", "humanNote": "human"})
}

// TestBlameAgentsOwnSed: an agent's sed -i of its own line is the
// agent's line (the substitution's result), not "mixed (a human
// changed it)".
func TestBlameAgentsOwnSed(t *testing.T) {
	r := newRepo(t)
	r.agentWrite("s1", "limits.py", "MAX_RETRIES = 3\nTIMEOUT_SECONDS = 10\n")
	r.commit("limits")
	r.agent("s1", "claude-code", "Bash", map[string]any{"command": "sed -i 's/TIMEOUT_SECONDS = 10/TIMEOUT_SECONDS = 30/' limits.py"},
		func() { r.write("limits.py", "MAX_RETRIES = 3\nTIMEOUT_SECONDS = 30\n") })
	r.commit("longer")
	r.want(r.blame("limits.py"), map[string]string{"MAX_RETRIES": "agent:s1", "TIMEOUT_SECONDS": "agent:s1"})
}

// TestBlameRepeatedConfigLines: two sessions add the same lines to two
// sections of a config file before one commit, the first session to
// the first section: each copy is the session that wrote it where it
// stands (the lines the edit wrote around it tell), not the last
// session's for the first place the lines are found.
func TestBlameRepeatedConfigLines(t *testing.T) {
	r := newRepo(t)
	f := "deploy.toml"
	r.write(f, "[staging]\nhost = \"stg.example.com\"\ntimeout = 30\n\n[production]\nhost = \"prod.example.com\"\ntimeout = 30\n")
	r.commit("hosts")
	r.tick(time.Hour)
	for _, e := range []struct{ ses, agent, host string }{{"s1", "claude-code", "stg"}, {"s2", "codex", "prod"}} {
		old := "host = \"" + e.host + ".example.com\"\ntimeout = 30\n"
		r.agentEdit(e.ses, e.agent, f, old, old+"max_retries = 5\nretry_backoff = \"exponential\"\n")
	}
	r.commit("retries")
	res := r.blame(f)
	want := map[int]string{4: "s1", 5: "s1", 10: "s2", 11: "s2"}
	for _, l := range res.Lines {
		got := ""
		for name, s := range r.ses {
			if s.ID == l.SessionID && l.Kind == Agent {
				got = name
			}
		}
		if got != want[l.N] {
			t.Errorf("line %d %q: %q (%s), want %q", l.N, l.Text, got, l.Kind, want[l.N])
		}
	}
}
