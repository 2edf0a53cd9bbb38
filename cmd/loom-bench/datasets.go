package main

// Readers of the public benchmarks' data files, which the user downloads
// (docs/search.md says where): LoCoMo's locomo10.json and LongMemEval's
// longmemeval_s_cleaned.json.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom/internal/locomo"
)

// maxDataFile bounds a data file read whole: LongMemEval-S is about
// 280 MB, its M variant 2.7 GB.
const maxDataFile = 1 << 30

func readDataFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxDataFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a data file may have", path, fi.Size(), maxDataFile)
	}
	return os.ReadFile(path)
}

// locomoEvidence is a turn's id in LoCoMo's evidence: D<session>:<turn>.
var locomoEvidence = regexp.MustCompile(`D(\d+):\d+`)

// readLoCoMo reads locomo10.json: ten conversations of two speakers, each
// in sessions of dated turns, and questions whose evidence names turns.
// A turn is written "Speaker: text", as one user line; a question with
// no evidence is left out (4 of 1,986), as deja-vu's harness does.
func readLoCoMo(path string) (*retrievalSet, error) {
	b, err := readDataFile(path)
	if err != nil {
		return nil, err
	}
	set, err := parseLoCoMo(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// parseLoCoMo reads the contents of locomo10.json.
func parseLoCoMo(b []byte) (*retrievalSet, error) {
	convs, qs, err := locomo.Parse(b)
	if err != nil {
		return nil, err
	}
	set := &retrievalSet{name: "locomo", cats: []string{"1", "2", "3", "4", "5"},
		names: map[string]string{"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}}
	for _, c := range convs {
		rc := retrievalConv{name: c.Name}
		for _, s := range c.Sessions {
			sess := retrievalSession{id: s.ID, start: s.Start}
			for _, t := range s.Turns {
				sess.turns = append(sess.turns, retrievalTurn{text: t})
			}
			rc.sessions = append(rc.sessions, sess)
		}
		set.convs = append(set.convs, rc)
	}
	for _, q := range qs {
		set.qs = append(set.qs, retrievalQuestion{conv: q.Conv, text: q.Text, category: q.Category, gold: q.Gold})
	}
	return set, nil
}

func sessionNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "D"))
	return n
}

// readLongMemEval reads LongMemEval's data (longmemeval_s_cleaned.json):
// questions, each with a haystack of dated sessions of user and
// assistant turns, and the ids of those that hold its answer. Each
// question's haystack is a project of its own. With skipAbstention, the
// questions meant to have no answer (ids ending _abs) are left out.
func readLongMemEval(path string, skipAbstention bool) (*retrievalSet, error) {
	b, err := readDataFile(path)
	if err != nil {
		return nil, err
	}
	set, err := parseLongMemEval(b, skipAbstention)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// parseLongMemEval reads the contents of LongMemEval's data file.
func parseLongMemEval(b []byte, skipAbstention bool) (*retrievalSet, error) {
	var items []struct {
		ID        string     `json:"question_id"`
		Type      string     `json:"question_type"`
		Question  string     `json:"question"`
		Answers   []string   `json:"answer_session_ids"`
		Dates     []string   `json:"haystack_dates"`
		Sessions  []string   `json:"haystack_session_ids"`
		Haystacks [][]lmTurn `json:"haystack_sessions"`
	}
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, fmt.Errorf("not LongMemEval's data: %w", err)
	}
	set := &retrievalSet{name: "longmemeval", names: map[string]string{}}
	for _, it := range items {
		if len(it.Sessions) != len(it.Haystacks) {
			return nil, fmt.Errorf("question %q has %d session ids for %d sessions", it.ID, len(it.Sessions), len(it.Haystacks))
		}
		if skipAbstention && strings.HasSuffix(it.ID, "_abs") {
			continue
		}
		c := retrievalConv{name: it.ID}
		for i, turns := range it.Haystacks {
			s := retrievalSession{id: it.Sessions[i], start: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)}
			if i < len(it.Dates) {
				// "2023/05/20 (Sat) 02:21"
				if t, err := time.Parse("2006/01/02 (Mon) 15:04", it.Dates[i]); err == nil {
					s.start = t
				}
			}
			for _, t := range turns {
				if t.Content != "" {
					s.turns = append(s.turns, retrievalTurn{assistant: t.Role == "assistant", text: t.Content})
				}
			}
			if len(s.turns) > 0 {
				c.sessions = append(c.sessions, s)
			}
		}
		q := retrievalQuestion{conv: len(set.convs), text: it.Question, category: it.Type, gold: it.Answers}
		set.convs = append(set.convs, c)
		if len(q.gold) == 0 || q.text == "" {
			continue
		}
		if _, ok := set.names[q.category]; !ok {
			set.names[q.category] = q.category
			set.cats = append(set.cats, q.category)
		}
		set.qs = append(set.qs, q)
	}
	slices.Sort(set.cats)
	if len(set.qs) == 0 {
		return nil, fmt.Errorf("no LongMemEval question with an answer session")
	}
	return set, nil
}

type lmTurn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// readRealTalk reads REALTALK's conversations (github.com/danny911kr/
// REALTALK, data/Chat_*.json): ten 21-day chats of two people on a
// messaging app, each a file of sessions of dated turns and questions
// whose evidence names turns, as LoCoMo's. dir is REALTALK's data
// directory; its locomo/ and raw/ are not read.
func readRealTalk(dir string) (*retrievalSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "Chat_*.json"))
	if err != nil {
		return nil, err
	}
	// Chat_1 … Chat_10 in their order, not the names'.
	slices.SortFunc(files, func(a, b string) int { return chatNumber(a) - chatNumber(b) })
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no REALTALK Chat_*.json", dir)
	}
	set := &retrievalSet{name: "realtalk", cats: []string{"1", "2", "3"},
		names: map[string]string{"1": "multi-hop", "2": "temporal", "3": "open-domain"}}
	for _, f := range files {
		b, err := readDataFile(f)
		if err != nil {
			return nil, err
		}
		if err := parseRealTalk(set, strings.TrimSuffix(filepath.Base(f), ".json"), b); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	if len(set.qs) == 0 {
		return nil, fmt.Errorf("%s: no REALTALK question with evidence", dir)
	}
	return set, nil
}

// readSets reads the benchmarks whose paths are given: LoCoMo's
// locomo10.json, REALTALK's data directory.
func readSets(locomo, realtalk string) ([]*retrievalSet, error) {
	var sets []*retrievalSet
	if locomo != "" {
		set, err := readLoCoMo(locomo)
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	if realtalk != "" {
		set, err := readRealTalk(realtalk)
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("name -locomo, -realtalk or both")
	}
	return sets, nil
}

func chatNumber(path string) int {
	n, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(path), "Chat_"), "_")
	i, _ := strconv.Atoi(n)
	return i
}

// chatPeople are the two people a REALTALK file's name names
// (Chat_1_Emi_Elise: emi, elise): each of them talks in two of its ten
// chats.
func chatPeople(name string) []string {
	f := strings.Split(strings.ToLower(name), "_")
	if len(f) < 3 {
		return nil
	}
	return f[2:]
}

// realTalkTime is how REALTALK dates a session and each turn.
const realTalkTime = "02.01.2006, 15:04:05"

// parseRealTalk adds one REALTALK conversation, named name, to set: its
// session_N keys hold turns of clean_text by speaker, each dated; a
// turn of an image alone has no text and is left out. A question with
// no evidence is left out (2 of 728), and so is one whose evidence is
// written "D 2:18".
func parseRealTalk(set *retrievalSet, name string, b []byte) error {
	var chat map[string]json.RawMessage
	if err := json.Unmarshal(b, &chat); err != nil {
		return fmt.Errorf("not a REALTALK conversation: %w", err)
	}
	var qas []struct {
		Question string          `json:"question"`
		Evidence []string        `json:"evidence"`
		Category json.RawMessage `json:"category"`
	}
	if err := json.Unmarshal(chat["qa"], &qas); err != nil {
		return fmt.Errorf("not a REALTALK conversation: its qa: %w", err)
	}
	c := retrievalConv{name: name, people: chatPeople(name)}
	for key, raw := range chat {
		num, ok := strings.CutPrefix(key, "session_")
		if !ok || strings.Contains(num, "_") {
			continue
		}
		var turns []struct {
			Speaker  string `json:"speaker"`
			Text     string `json:"clean_text"`
			DateTime string `json:"date_time"`
		}
		if err := json.Unmarshal(raw, &turns); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		sess := retrievalSession{id: "D" + num}
		var when string
		if json.Unmarshal(chat[key+"_date_time"], &when) == nil {
			sess.start, _ = time.Parse(realTalkTime, when)
		}
		for _, t := range turns {
			if t.Text == "" {
				continue
			}
			at, _ := time.Parse(realTalkTime, t.DateTime)
			sess.turns = append(sess.turns, retrievalTurn{text: t.Speaker + ": " + t.Text, at: at})
		}
		if len(sess.turns) > 0 {
			if sess.start.IsZero() {
				sess.start = sess.turns[0].at
			}
			c.sessions = append(c.sessions, sess)
		}
	}
	slices.SortFunc(c.sessions, func(a, b retrievalSession) int { return sessionNumber(a.id) - sessionNumber(b.id) })
	ci := len(set.convs)
	set.convs = append(set.convs, c)
	for _, qa := range qas {
		q := retrievalQuestion{conv: ci, text: qa.Question, category: strings.Trim(string(qa.Category), `"`)}
		for _, e := range qa.Evidence {
			for _, m := range locomoEvidence.FindAllStringSubmatch(e, -1) {
				if id := "D" + m[1]; !slices.Contains(q.gold, id) {
					q.gold = append(q.gold, id)
				}
			}
		}
		if len(q.gold) > 0 && q.text != "" {
			set.qs = append(set.qs, q)
		}
	}
	return nil
}
