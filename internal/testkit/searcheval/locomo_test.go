package searcheval

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/locomo"
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

// readLoCoMo reads locomo10.json at path, every n-th question kept.
func readLoCoMo(path string, every int) ([]locomo.Conversation, []locomo.Question, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	convs, all, err := locomo.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var qs []locomo.Question
	for i := 0; i < len(all); i += every {
		qs = append(qs, all[i])
	}
	return convs, qs, nil
}

// locomoQuestions reads LoCoMo where locomoEnv says, as paraphrases of
// no marker (any turn of an evidence session is on topic), each target
// the key of an evidence session; none when locomoEnv is not set.
func locomoQuestions(t *testing.T) ([]locomo.Conversation, []paraphrase) {
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
		p := paraphrase{prompt: q.Text}
		for _, g := range q.Gold {
			p.targets = append(p.targets, locomoKey(convs[q.Conv].Name, g))
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
func (l *laidOut) plantLoCoMo(t *testing.T, convs []locomo.Conversation) {
	t.Helper()
	ctx := context.Background()
	var batch []*loom.SessionData
	for _, c := range convs {
		p := loom.Project{ID: "locomo-" + c.Name, Name: c.Name, Root: "/bench/locomo/" + c.Name}
		if l.projects == 1 {
			p = oneProject
		}
		for _, ls := range c.Sessions {
			id := loom.NewID()
			s := &loom.Session{ID: id, UserID: "alice", Key: locomoKey(c.Name, ls.ID), Surface: "cli", Kind: loom.KindMain,
				Project: p, Cwd: p.Root, CreatedAt: ls.Start, MessageCount: len(ls.Turns), TurnCount: (len(ls.Turns) + 1) / 2,
				Title: loom.Truncate(ls.Turns[0], 60)}
			d := &loom.SessionData{Session: s}
			for i, text := range ls.Turns {
				role := loom.RoleUser
				if i%2 == 1 {
					role = loom.RoleAssistant
				}
				d.Messages = append(d.Messages, &loom.Message{ID: loom.NewID(), SessionID: id, Seq: int64(i + 1), Role: role, Turn: i/2 + 1,
					CreatedAt: ls.Start.Add(time.Duration(i) * time.Minute), Parts: []loom.Part{{ID: loom.NewID(), Type: loom.PartText, Text: text}}})
			}
			s.UpdatedAt = ls.Start.Add(time.Duration(len(ls.Turns)) * time.Minute)
			l.keys[id], l.project[s.Key] = s.Key, p.ID
			batch = append(batch, d)
		}
	}
	if err := l.st.Import(ctx, batch); err != nil {
		t.Fatal(err)
	}
}
