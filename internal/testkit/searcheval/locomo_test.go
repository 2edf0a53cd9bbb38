package searcheval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// locomoEnv names LoCoMo's locomo10.json (github.com/snap-research/locomo,
// which the user downloads: docs/search.md says where). When it is set,
// TestRecallScaleAndScope plants LoCoMo's ten conversations beside the
// public agent sessions and asks their questions too; locomoEveryEnv
// says which (every n-th, 20 by default: about 100 of 1,982).
const (
	locomoEnv      = "LOOM_TEST_LOCOMO"
	locomoEveryEnv = "LOOM_TEST_LOCOMO_EVERY"
)

// locomoConv is one of LoCoMo's conversations: its sessions (D1, D2, …),
// each a list of "Speaker: text" turns with its date.
type locomoConv struct {
	name     string
	sessions []locomoSession
}

type locomoSession struct {
	id    string
	start time.Time
	turns []string
}

// locomoQuestion is one of LoCoMo's questions: its conversation and the
// sessions its evidence is in.
type locomoQuestion struct {
	conv     int
	question string
	gold     []string
}

var locomoEvidence = regexp.MustCompile(`D(\d+):\d+`)

// readLoCoMo reads locomo10.json at path, every n-th question with
// evidence kept.
func readLoCoMo(path string, every int) ([]locomoConv, []locomoQuestion, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var samples []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string          `json:"question"`
			Evidence json.RawMessage `json:"evidence"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		return nil, nil, fmt.Errorf("%s: not LoCoMo's locomo10.json: %w", path, err)
	}
	var convs []locomoConv
	var qs []locomoQuestion
	n := 0
	for ci, s := range samples {
		c := locomoConv{name: s.SampleID}
		for key, raw := range s.Conversation {
			num, ok := strings.CutPrefix(key, "session_")
			if !ok || strings.Contains(num, "_") {
				continue
			}
			var turns []struct{ Speaker, Text string }
			if json.Unmarshal(raw, &turns) != nil {
				continue
			}
			ls := locomoSession{id: "D" + num, start: time.Date(2023, 5, 1, 10, 0, 0, 0, time.UTC)}
			var when string
			if json.Unmarshal(s.Conversation[key+"_date_time"], &when) == nil {
				if t, err := time.Parse("3:04 pm on 2 January, 2006", when); err == nil {
					ls.start = t
				}
			}
			for _, t := range turns {
				if t.Text != "" {
					ls.turns = append(ls.turns, t.Speaker+": "+t.Text)
				}
			}
			if len(ls.turns) > 0 {
				c.sessions = append(c.sessions, ls)
			}
		}
		slices.SortFunc(c.sessions, func(a, b locomoSession) int {
			x, _ := strconv.Atoi(a.id[1:])
			y, _ := strconv.Atoi(b.id[1:])
			return x - y
		})
		convs = append(convs, c)
		for _, qa := range s.QA {
			q := locomoQuestion{conv: ci, question: qa.Question}
			for _, m := range locomoEvidence.FindAllStringSubmatch(string(qa.Evidence), -1) {
				if id := "D" + m[1]; !slices.Contains(q.gold, id) {
					q.gold = append(q.gold, id)
				}
			}
			if len(q.gold) == 0 || q.question == "" {
				continue
			}
			if n%every == 0 {
				qs = append(qs, q)
			}
			n++
		}
	}
	if len(qs) == 0 {
		return nil, nil, fmt.Errorf("%s: no LoCoMo question with evidence", path)
	}
	return convs, qs, nil
}

// locomoQuestions reads LoCoMo where locomoEnv says, as paraphrases of
// no marker (any turn of an evidence session is on topic), each target
// the key of an evidence session; none when locomoEnv is not set.
func locomoQuestions(t *testing.T) ([]locomoConv, []paraphrase) {
	t.Helper()
	path := os.Getenv(locomoEnv)
	if path == "" {
		t.Logf("LoCoMo's questions not asked (%s names locomo10.json)", locomoEnv)
		return nil, nil
	}
	every := 20
	if s := os.Getenv(locomoEveryEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: a number of 1 or more", locomoEveryEnv, s)
		}
		every = n
	}
	convs, qs, err := readLoCoMo(path, every)
	if err != nil {
		t.Fatal(err)
	}
	var ps []paraphrase
	for _, q := range qs {
		p := paraphrase{prompt: q.question}
		for _, g := range q.gold {
			p.targets = append(p.targets, locomoKey(convs[q.conv].name, g))
		}
		ps = append(ps, p)
	}
	return convs, ps
}

// locomoKey is the key of session id of conversation conv.
func locomoKey(conv, id string) string { return "cli:locomo-" + conv + "-" + id }

// plantLoCoMo imports convs into l's store, each conversation in a
// project of its own (or in oneProject), its sessions dated as LoCoMo
// dates them, the speakers' turns alternating as user and assistant.
func (l *laidOut) plantLoCoMo(t *testing.T, convs []locomoConv) {
	t.Helper()
	ctx := context.Background()
	var batch []*loom.SessionData
	for _, c := range convs {
		p := loom.Project{ID: "locomo-" + c.name, Name: c.name, Root: "/bench/locomo/" + c.name}
		if l.projects == 1 {
			p = oneProject
		}
		for _, ls := range c.sessions {
			id := loom.NewID()
			s := &loom.Session{ID: id, UserID: "alice", Key: locomoKey(c.name, ls.id), Surface: "cli", Kind: loom.KindMain,
				Project: p, Cwd: p.Root, CreatedAt: ls.start, MessageCount: len(ls.turns), TurnCount: (len(ls.turns) + 1) / 2,
				Title: loom.Truncate(ls.turns[0], 60)}
			d := &loom.SessionData{Session: s}
			for i, text := range ls.turns {
				role := loom.RoleUser
				if i%2 == 1 {
					role = loom.RoleAssistant
				}
				d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: id, Seq: int64(i + 1), Role: role, Turn: i/2 + 1,
					CreatedAt: ls.start.Add(time.Duration(i) * time.Minute), Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: text}}})
			}
			s.UpdatedAt = ls.start.Add(time.Duration(len(ls.turns)) * time.Minute)
			l.keys[id], l.project[s.Key] = s.Key, p.ID
			batch = append(batch, d)
		}
	}
	if err := l.st.Import(ctx, batch); err != nil {
		t.Fatal(err)
	}
}
