package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/recall"
)

// vocabulary is English-like: frequent function words, common technical
// words, and a long tail, drawn with a Zipf distribution so that some
// words are in most messages and others in few.
var vocabulary = strings.Fields(`the of and to a in is that for it as with was on be by this are or
from at an not have which but we you can your will all they one has their there been if would more
when what so about out up into than them these some its then only could also time two first other
session message agent model tool search index store write read fork project memory context token
cost usage append stream reply user assistant summary resume picker terminal server dashboard query
engine table column value result error status running completed process lock host file function
config database request response build test deploy review branch commit merge change update value
package module import export handler router client cache queue worker schedule retry timeout limit
parser token lexer syntax grammar compile runtime memory pointer slice channel goroutine mutex
encode decode buffer reader writer stream socket network address port protocol header payload
migration schema constraint trigger transaction rollback savepoint checkpoint vacuum analyze
kubernetes container image volume secret namespace cluster replica service ingress gateway proxy
latency throughput benchmark profile trace metric alert dashboard panel widget layout render style
button input form field label modal dialog toast banner footer sidebar navbar carousel accordion
algorithm heuristic optimization gradient tensor matrix vector scalar embedding attention transformer
architecture boundary interface contract invariant assertion property example fixture snapshot mock
paragraph sentence chapter volume library archive catalog inventory ledger invoice receipt payment
mountain river forest valley ocean island desert glacier canyon meadow harbor village castle bridge`)

// RareWord appears in only a handful of messages.
const RareWord = "zyzzogeton"

// CommonQuery is three of the most frequent content words.
const CommonQuery = "the session model"

// RecallPrompt is what the recall figures ask, as an agent's hook would
// pass a user's prompt: common words, some found in most messages.
const RecallPrompt = "why did the schema migration time out on the replica"

// recallOnce recalls RecallPrompt in the second of benchProjects, as
// an agent's hook would, and fails when nothing is found.
func recallOnce(ctx context.Context, st loom.Engine, user string) func() error {
	project := benchProjects()[1].ID
	return func() error {
		r, err := recall.Recall(ctx, st, recall.Options{Prompt: RecallPrompt, UserID: user, ProjectID: project})
		if err == nil && len(r.Turns) == 0 {
			err = errors.New("recall found nothing")
		}
		return err
	}
}

type generator struct {
	r     *rand.Rand
	vocab []string  // the words it draws, most frequent first
	cdf   []float64 // cumulative Zipf weights of vocab
	now   time.Time
	rare  int
	n     int
}

func newGenerator(seed uint64) *generator { return newGeneratorOf(seed, vocabulary) }

// newGeneratorOf draws its words from vocab, most frequent first.
func newGeneratorOf(seed uint64, vocab []string) *generator {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// Word k has weight (2+k)^-1.1: a Zipf law, drawn by looking a uniform
	// number up in the cumulative weights (far cheaper than rand.Zipf).
	cdf := make([]float64, len(vocab))
	sum := 0.0
	for k := range cdf {
		sum += math.Pow(float64(2+k), -1.1)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	return &generator{r: r, vocab: vocab, cdf: cdf, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (g *generator) word() string {
	i, _ := slices.BinarySearch(g.cdf, g.r.Float64())
	return g.vocab[min(i, len(g.vocab)-1)]
}

// text returns English-like text of 50–800 bytes.
func (g *generator) text() string {
	n := 50 + g.r.IntN(751)
	var b strings.Builder
	b.Grow(n + 16)
	first := true
	for b.Len() < n {
		w := g.word()
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if first {
			w = strings.ToUpper(w[:1]) + w[1:]
			first = false
		}
		b.WriteString(w)
		if g.r.IntN(12) == 0 {
			b.WriteByte('.')
			first = true
		}
	}
	s := b.String()
	if len(s) > 800 {
		s = s[:800]
	}
	return s
}

// session makes one session of n messages: alternating user and
// assistant, a tool call in one assistant message of five, and the rare
// word in about one message of 100,000.
func (g *generator) session(user string, n int, project loom.Project) *loom.SessionData {
	id := loom.NewID()
	g.n++
	start := g.now
	s := &loom.Session{
		ID: id, UserID: user, Key: fmt.Sprintf("cli:%s:%d", project.Name, g.n), Surface: "cli", Kind: loom.KindMain,
		Project: project, Cwd: project.Root, Model: "gpt-4o-mini", Provider: "openai",
		CreatedAt: start,
	}
	msgs := make([]*loom.Message, 0, n)
	for i := 1; i <= n; i++ {
		g.now = g.now.Add(time.Duration(500+g.r.IntN(5000)) * time.Millisecond)
		m := &loom.Message{ID: loom.NewID(), SessionID: id, Seq: int64(i), CreatedAt: g.now}
		txt := g.text()
		if g.r.IntN(100000) == 0 || g.rare == 0 {
			txt += " " + RareWord
			g.rare++
		}
		if i%2 == 1 {
			m.Role = loom.RoleUser
			m.Parts = []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: txt}}
			if s.Title == "" {
				s.Title = fmt.Sprintf("session %d", g.n)
			}
		} else {
			m.Role, m.Model, m.Provider = loom.RoleAssistant, "gpt-4o-mini", "openai"
			m.Usage = loom.Usage{InputTokens: int64(200 + g.r.IntN(2000)), OutputTokens: int64(20 + g.r.IntN(400)), APICalls: 1}
			m.Parts = []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: txt}}
			if i%10 == 0 {
				in, _ := json.Marshal(map[string]string{"path": "src/" + vocabulary[g.r.IntN(len(vocabulary))] + ".go"})
				out, _ := json.Marshal(g.text())
				t0 := g.now
				m.Parts = append(m.Parts, loom.Part{ID: loom.NewID(), Type: loom.PartTool, CallID: "call_" + m.ID[24:], Name: "read_file",
					Status: loom.ToolCompleted, Input: in, Output: out, StartedAt: &t0, EndedAt: &t0})
			}
			s.Usage.Add(m.Usage)
		}
		done := g.now
		m.CompletedAt = &done
		msgs = append(msgs, m)
	}
	s.UpdatedAt = g.now
	return &loom.SessionData{Session: s, Messages: msgs}
}

// generate walks the workload of c: the big session first, then
// c.sessions sessions of c.messages over 50 projects, handed to put in
// batches of 100; what names the store in the progress line. It
// returns the big session's id. Each store is generated by this walk,
// so that all hold the same content (their ids differ).
func generate(c config, what string, put func(batch []*loom.SessionData) error) (string, error) {
	g := newGenerator(1)
	projects := benchProjects()
	big := g.session("bench", c.big, projects[0])
	if err := put([]*loom.SessionData{big}); err != nil {
		return "", err
	}
	if err := generateSessions(g, c.sessions, c.messages, projects, what, put); err != nil {
		return "", err
	}
	return big.Session.ID, nil
}

// generateSessions has g make n sessions of m messages over projects,
// handed to put in batches of 100, with a progress line naming what.
func generateSessions(g *generator, n, m int, projects []loom.Project, what string, put func(batch []*loom.SessionData) error) error {
	var batch []*loom.SessionData
	for i := range n {
		batch = append(batch, g.session("bench", m, projects[i%len(projects)]))
		if len(batch) == 100 || i == n-1 {
			if err := put(batch); err != nil {
				return err
			}
			batch = nil
			fmt.Fprintf(os.Stderr, "\rgenerated %d sessions%s", i+1, what)
		}
	}
	fmt.Fprintln(os.Stderr)
	return nil
}

// benchProjects are the 50 projects the generated sessions belong to.
func benchProjects() []loom.Project {
	projects := make([]loom.Project, 50)
	for i := range projects {
		name := fmt.Sprintf("project%02d", i)
		projects[i] = loom.Project{ID: fmt.Sprintf("%016x", i+1), Name: name, Root: "/src/" + name}
	}
	return projects
}
