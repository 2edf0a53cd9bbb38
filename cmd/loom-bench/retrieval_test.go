package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A conversation in the shape of LoCoMo's locomo10.json: dated sessions
// of two speakers' turns (one with an image instead of words), and
// questions whose evidence names turns; one has no evidence.
const locomoSample = `[{"sample_id": "conv-1", "conversation": {
  "speaker_a": "Caroline", "speaker_b": "Melanie",
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
    {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! Good to see you!"},
    {"speaker": "Melanie", "dia_id": "D1:2", "text": "I made a bowl in my pottery class yesterday."},
    {"speaker": "Melanie", "dia_id": "D1:3", "img_url": ["https://example.org/bowl.jpg"], "blip_caption": "a photo of a bowl"}],
  "session_2_date_time": "10:37 am on 27 June, 2023",
  "session_2": [
    {"speaker": "Caroline", "dia_id": "D2:1", "text": "Hey Mel! Long time no talk."},
    {"speaker": "Melanie", "dia_id": "D2:2", "text": "We went camping in the mountains with the kids last week."}]},
 "qa": [
  {"question": "When did Melanie go camping?", "answer": "June 2023", "evidence": ["D2:2"], "category": 2},
  {"question": "What did Melanie make in her pottery class?", "answer": "a bowl", "evidence": ["D1:2"], "category": 4},
  {"question": "What is Caroline's favourite colour?", "evidence": [], "category": 5}]}]`

// The same in LongMemEval's shape: one question with its haystack of
// dated sessions of user and assistant turns.
const longMemEvalSample = `[{"question_id": "q1", "question_type": "single-session-user",
  "question": "What breed is my new puppy?", "answer": "a beagle", "question_date": "2023/06/01 (Thu) 10:00",
  "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 09:00"],
  "haystack_session_ids": ["s_a", "answer_s_b"],
  "haystack_sessions": [
    [{"role": "user", "content": "Give me a recipe for banana bread."}, {"role": "assistant", "content": "Mix flour, bananas and eggs."}],
    [{"role": "user", "content": "I just got a beagle puppy, how often should I feed him?", "has_answer": true}, {"role": "assistant", "content": "Three small meals a day."}]],
  "answer_session_ids": ["answer_s_b"]},
 {"question_id": "q2_abs", "question_type": "single-session-user", "question": "What is my cat called?",
  "haystack_dates": ["2023/05/20 (Sat) 02:21"], "haystack_session_ids": ["s_c"],
  "haystack_sessions": [[{"role": "user", "content": "hello"}]], "answer_session_ids": ["s_c"]}]`

func TestParseDatasets(t *testing.T) {
	set, err := parseLoCoMo([]byte(locomoSample))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.convs) != 1 || len(set.convs[0].sessions) != 2 || len(set.qs) != 2 {
		t.Fatalf("LoCoMo: %+v", set)
	}
	s := set.convs[0].sessions[0]
	if s.id != "D1" || len(s.turns) != 2 || s.turns[1].text != "Melanie: I made a bowl in my pottery class yesterday." || s.start.Format("2006-01-02 15:04") != "2023-05-08 13:56" {
		t.Errorf("session %+v", s)
	}
	if q := set.qs[0]; q.category != "2" || len(q.gold) != 1 || q.gold[0] != "D2" || set.names[q.category] != "temporal" {
		t.Errorf("question %+v", q)
	}
	lm, err := parseLongMemEval([]byte(longMemEvalSample), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(lm.qs) != 1 || len(lm.convs) != 1 || len(lm.convs[0].sessions) != 2 || !lm.convs[0].sessions[1].turns[1].assistant || lm.qs[0].gold[0] != "answer_s_b" {
		t.Errorf("LongMemEval: %+v", lm)
	}
	if all, err := parseLongMemEval([]byte(longMemEvalSample), false); err != nil || len(all.qs) != 2 {
		t.Errorf("with abstention: %v %+v", err, all)
	}
	for _, bad := range []string{``, `{}`, `[{"qa": []}]`, `[{"question_id": "x", "haystack_session_ids": ["a"], "haystack_sessions": []}]`} {
		if _, err := parseLoCoMo([]byte(bad)); err == nil {
			t.Errorf("LoCoMo %q: no error", bad)
		}
		if _, err := parseLongMemEval([]byte(bad), false); err == nil {
			t.Errorf("LongMemEval %q: no error", bad)
		}
	}
}

// The questions go through the importer and search as a user's sessions
// do, as Claude Code files and as deja-vu's harness writes them (no
// uuid: every session's lines were once line-<n>, and a hit was credited
// to another session).
func TestRetrievalRun(t *testing.T) {
	for _, bare := range []bool{false, true} {
		set, err := parseLoCoMo([]byte(locomoSample))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := retrievalMain(context.Background(), &out, t.TempDir(), set, retrievalOptions{bare: bare, limit: 20}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "| **all** | 2 | 100.0% | 100.0% | 100.0% | 1.000 |") {
			t.Errorf("bare %v:\n%s", bare, out.String())
		}
	}
}

// With -embed, each question is also asked fused with ranking by
// meaning, through the searcher loom search uses, and both are reported:
// here with the stand-ins served in process.
func TestRetrievalRunFused(t *testing.T) {
	for _, embed := range []string{"hash", "unrelated"} {
		set, err := parseLoCoMo([]byte(locomoSample))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := retrievalMain(context.Background(), &out, t.TempDir(), set, retrievalOptions{limit: 20, embed: embed}); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if strings.Count(got, "| **all** | 2 |") != 2 || !strings.Contains(got, "Fused with ranking by meaning (embedder "+embed+", model stand-in-"+embed+")") {
			t.Errorf("-embed %s:\n%s", embed, got)
		}
	}
	if _, _, err := standIn("nomic"); err == nil {
		t.Error("an unknown stand-in was served")
	}
}

func FuzzParseDatasets(f *testing.F) {
	f.Add([]byte(locomoSample))
	f.Add([]byte(longMemEvalSample))
	f.Fuzz(func(t *testing.T, b []byte) {
		if set, err := parseLoCoMo(b); err == nil && len(set.qs) == 0 {
			t.Error("a LoCoMo set without questions")
		}
		if set, err := parseLongMemEval(b, false); err == nil && len(set.qs) == 0 {
			t.Error("a LongMemEval set without questions")
		}
	})
}

// TestGloVeEmbedder: a text's vector is its words' mean, so texts of
// near words are near, unknown words are left out, and a malformed
// file is refused with its line.
func TestGloVeEmbedder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "glove.txt")
	if err := os.WriteFile(path, []byte("the 1 1 1\ncat 0.9 0.1 0\ndog 0.8 0.2 0\ncar 0 0.1 0.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := loadGloVe(path)
	if err != nil {
		t.Fatal(err)
	}
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	cat, dog, car := g.vector("The cat!"), g.vector("a dog, zzz"), g.vector("the car")
	if dot(cat, dog) <= dot(cat, car) {
		t.Errorf("cat·dog %.3f ≤ cat·car %.3f", dot(cat, dog), dot(cat, car))
	}
	if err := os.WriteFile(path, []byte("the 1 1 1\ncat 0.9 0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadGloVe(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a short line: %v", err)
	}
}

// realTalkSample is an excerpt of REALTALK's data/Chat_1_Emi_Elise.json
// (github.com/danny911kr/REALTALK at b903e06a9770bf4e5fe9018c3e132889666d3b4a):
// the first two turns of its first session, the first three of its
// second, two of its questions, and one question with no evidence as
// two of Chat_7_Nebraas_Vanessa.json's are.
const realTalkSample = `{
 "name": {"speaker_1": "Emi", "speaker_2": "elise"},
 "session_1_date_time": "29.12.2023, 22:42:04",
 "session_1": [
  {"clean_text": "Hey! How are you?", "speaker": "Emi", "date_time": "29.12.2023, 22:42:04", "img_file": [], "img_url": [], "dia_id": "D1:1"},
  {"clean_text": "Hi, I’m doing good how are you?", "speaker": "elise", "date_time": "30.12.2023, 00:32:20", "img_file": [], "img_url": [], "dia_id": "D1:2"}
 ],
 "session_2_date_time": "30.12.2023, 22:21:48",
 "session_2": [
  {"clean_text": "Hey Emily! What have you been up to today?", "speaker": "Emi", "date_time": "30.12.2023, 22:21:48", "img_file": [], "img_url": [], "dia_id": "D2:1"},
  {"clean_text": "Hey Kate!", "speaker": "elise", "date_time": "30.12.2023, 22:21:55", "img_file": [], "img_url": [], "dia_id": "D2:2"},
  {"clean_text": "Today was a great day I went to the Art Basel in Miami and went to the beach later on. Did you get to do that cooking class you told me about yesterday?", "speaker": "elise", "date_time": "30.12.2023, 22:22:45", "img_file": [], "img_url": [], "dia_id": "D2:3"}
 ],
 "events_session_1": {"agent_a": [], "agent_b": []},
 "qa": [
  {"question": "When did Kate start skiing?", "answer": "2013", "evidence": ["D1:49"], "category": 2},
  {"question": "When did Kate visit Art Basel?", "answer": "30 December, 2023", "evidence": ["D2:3"], "category": 2},
  {"question": "Which part of the day does Vanessa often pick for her gym sessions?", "answer": "The morning.", "evidence": [], "category": 2}
 ]
}`

func TestParseRealTalk(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Chat_1_Emi_Elise.json"), []byte(realTalkSample), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := readRealTalk(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.convs) != 1 || set.convs[0].name != "Chat_1_Emi_Elise" || len(set.convs[0].sessions) != 2 || len(set.qs) != 2 {
		t.Fatalf("REALTALK: %+v", set)
	}
	s := set.convs[0].sessions[1]
	if s.id != "D2" || len(s.turns) != 3 || s.turns[1].text != "elise: Hey Kate!" || s.start.Format("2006-01-02 15:04:05") != "2023-12-30 22:21:48" ||
		s.turns[2].at.Format("2006-01-02 15:04:05") != "2023-12-30 22:22:45" {
		t.Errorf("session %+v", s)
	}
	if q := set.qs[1]; q.text != "When did Kate visit Art Basel?" || q.category != "2" || len(q.gold) != 1 || q.gold[0] != "D2" || set.names[q.category] != "temporal" {
		t.Errorf("question %+v", q)
	}
	if q := set.qs[0]; len(q.gold) != 1 || q.gold[0] != "D1" {
		t.Errorf("question %+v", q)
	}
}

// TestFillerVocabulary checks that the scale run's filler keeps no word
// that a search for a planted content word would match, and keeps the
// stop words and the words no question could reach.
func TestFillerVocabulary(t *testing.T) {
	set := &retrievalSet{name: "t",
		convs: []retrievalConv{{name: "c", sessions: []retrievalSession{{id: "D1", turns: []retrievalTurn{{text: "Caroline: I configure the registry"}}}}}},
		qs:    []retrievalQuestion{{text: "Why did Melanie run?"}}}
	dir := t.TempDir()
	// Each word twice (a word seen once is left out), and 100 words of
	// no meaning so that the vocabulary is big enough to be one.
	sample := "the which configured configuration carolina caroline melanie ran goroutine xylophone registry qz "
	for i := range 100 {
		sample += fmt.Sprintf("zz%c%c ", 'a'+i/26, 'a'+i%26)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(sample+sample+"once"), 0o600); err != nil {
		t.Fatal(err)
	}
	vocab, err := fillerVocabulary(dir, []*retrievalSet{set})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"configured", "configuration", "carolina", "caroline", "melanie", "ran", "registry", "once", "qz"} {
		if slices.Contains(vocab, w) {
			t.Errorf("the filler's vocabulary holds %q", w)
		}
	}
	for _, w := range []string{"the", "which", "goroutine", "xylophone"} {
		if !slices.Contains(vocab, w) {
			t.Errorf("the filler's vocabulary lacks %q", w)
		}
	}
}

// The scale run plants the conversations among filler of several agents
// and projects, asks each question in its project and across all, and
// reuses the stores it built on the next run. No filler session is ever
// a question's first hit. Two chats in which Elise talks are planted in
// stores of their own, where neither answers the other's questions; with
// -scale-together, in one, where one does.
func TestScaleRun(t *testing.T) {
	locomo, err := parseLoCoMo([]byte(locomoSample))
	if err != nil {
		t.Fatal(err)
	}
	rt := t.TempDir()
	// A second chat whose turn says more of Art Basel than the first's:
	// across projects, a question of one chat finds the other first.
	other := strings.Replace(realTalkSample, "Today was a great day I went to the Art Basel", "Kate visited Art Basel, Art Basel, Art Basel", 1)
	if err := os.WriteFile(filepath.Join(rt, "Chat_1_Emi_Elise.json"), []byte(realTalkSample), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rt, "Chat_2_Kate_Elise.json"), []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	realtalk, err := readRealTalk(rt)
	if err != nil {
		t.Fatal(err)
	}
	for _, together := range []bool{true, false} {
		stores := map[bool]int{true: 1, false: 2}[together]
		o := scaleOptions{store: filepath.Join(t.TempDir(), "scale.db"), messages: 3000, projects: 12, samples: "../../testdata/agent-sessions", every: 1, limit: 20, together: together}
		for run := range 2 {
			var out bytes.Buffer
			o.ranks = filepath.Join(t.TempDir(), "ranks.jsonl")
			if err := scaleMain(context.Background(), &out, []*retrievalSet{locomo, realtalk}, o); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			checkScaleRanks(t, o.ranks)
			// The columns of a row: "", benchmark, engine, messages,
			// scope, n, hit@1, hit@5, hit@10, MRR, p50, p99, filler
			// first, another conversation first, refused, load.
			rows := map[string][]string{}
			// Search's table, before recall's (of as many columns).
			searchTable, _, _ := strings.Cut(got, "| benchmark (recall) |")
			for _, line := range strings.Split(searchTable, "\n") {
				if f := strings.Split(line, " | "); len(f) == 15 && f[1] == "SQLite" {
					rows[f[0]+" | "+f[3]] = f
					if f[11] != "0" || f[13] != "0" {
						t.Errorf("together %v, run %d: a filler session first, or a question refused: %s", together, run, line)
					}
				}
			}
			for _, row := range []string{"| locomo | per project", "| locomo | all projects", "| realtalk | per project", "| realtalk | all projects"} {
				if rows[row] == nil {
					t.Errorf("together %v, run %d: no row %s:\n%s", together, run, row, got)
				}
			}
			if f := rows["| locomo | all projects"]; f != nil && (f[4] != "2" || f[5] != "100.0%") {
				t.Errorf("together %v, run %d: LoCoMo's questions across 3,000 filler messages:\n%s", together, run, got)
			}
			if f := rows["| realtalk | all projects"]; f != nil && (f[4] != "4" || (f[12] == "0") == together) {
				t.Errorf("together %v, run %d: REALTALK across projects: the other chat first %s times:\n%s", together, run, f[12], got)
			}
			if n := strings.Count(got, "was there (no build this run)"); n != run*stores {
				t.Errorf("together %v, run %d: %d stores reused, want %d:\n%s", together, run, n, run*stores, got)
			}
			if apart := strings.Contains(got, "Store 2 of 2: Planted: locomo (1 conversations, 2 sessions, 4 messages, 0 questions), realtalk (1 conversations"); apart == together {
				t.Errorf("together %v, run %d: the second chat planted apart: %v:\n%s", together, run, apart, got)
			}
		}
	}
}

// checkScaleRanks reads what -ranks wrote for TestScaleRun's sets: a
// line for each of their six questions in each scope, LoCoMo's two
// found first in both.
func checkScaleRanks(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines, first int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Set, Scope, Question string
			Rank                 int
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("-ranks: %v: %s", err, line)
		}
		lines++
		if r.Set == "locomo" && r.Rank == 1 && r.Question != "" && r.Scope != "" {
			first++
		}
	}
	if lines != 12 || first != 4 {
		t.Errorf("-ranks wrote %d lines, LoCoMo's first in %d, want 12 and 4:\n%s", lines, first, data)
	}
}

// REALTALK's ten chats go to three stores, nobody talking in two chats
// of one; each question is asked in the store of its chat. LoCoMo, whose
// conversations share nobody, is planted in each and asked in the first.
func TestApartRounds(t *testing.T) {
	rt := &retrievalSet{name: "realtalk"}
	for _, name := range []string{"Chat_1_Emi_Elise", "Chat_2_Kevin_Elise", "Chat_3_Kevin_Paola", "Chat_4_Emi_Paola", "Chat_5_Nicolas_Nebraas",
		"Chat_6_Vanessa_Nicolas", "Chat_7_Nebraas_Vanessa", "Chat_8_Akib_Muhhamed", "Chat_9_Fahim_Akib", "Chat_10_Fahim_Muhhamed"} {
		rt.qs = append(rt.qs, retrievalQuestion{conv: len(rt.convs), text: "about " + name})
		rt.convs = append(rt.convs, retrievalConv{name: name, people: chatPeople(name)})
	}
	lc := &retrievalSet{name: "locomo", convs: []retrievalConv{{name: "conv-26"}, {name: "conv-30"}},
		qs: []retrievalQuestion{{conv: 1, text: "Where did Jon go?"}}}
	rounds := apartRounds([]*retrievalSet{lc, rt}, false)
	var got [][]string
	for r, rs := range rounds {
		if len(rs[0].convs) != 2 || (len(rs[0].qs) == 1) != (r == 0) {
			t.Errorf("store %d: LoCoMo %d conversations, %d questions", r+1, len(rs[0].convs), len(rs[0].qs))
		}
		var names []string
		for _, c := range rs[1].convs {
			names = append(names, c.name)
		}
		got = append(got, names)
		for _, q := range rs[1].qs {
			if q.text != "about "+rs[1].convs[q.conv].name {
				t.Errorf("store %d: %q asked of %s", r+1, q.text, rs[1].convs[q.conv].name)
			}
		}
		if len(rs[1].qs) != len(rs[1].convs) {
			t.Errorf("store %d: %d questions of %d chats", r+1, len(rs[1].qs), len(rs[1].convs))
		}
	}
	want := [][]string{
		{"Chat_1_Emi_Elise", "Chat_3_Kevin_Paola", "Chat_5_Nicolas_Nebraas", "Chat_8_Akib_Muhhamed"},
		{"Chat_2_Kevin_Elise", "Chat_4_Emi_Paola", "Chat_6_Vanessa_Nicolas", "Chat_9_Fahim_Akib"},
		{"Chat_7_Nebraas_Vanessa", "Chat_10_Fahim_Muhhamed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the stores' chats: %v, want %v", got, want)
	}
	if together := apartRounds([]*retrievalSet{lc, rt}, true); len(together) != 1 || len(together[0][1].convs) != 10 || len(together[0][1].qs) != 10 {
		t.Errorf("together: %d stores", len(together))
	}
}

// The scale run asks recall what it asks search, in both scopes, and
// prints recall's rows beside search's: on a small store of filler, the
// sample's questions find their evidence session in recall's answer, in
// process and as a whole command (loom recall --json, -a across all
// projects, run in the conversation's directory).
func TestScaleAsksRecall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "locomo10.json")
	if err := os.WriteFile(path, []byte(locomoSample), 0o644); err != nil {
		t.Fatal(err)
	}
	sets, err := readSets(path, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := scaleOptions{store: filepath.Join(dir, "scale.db"), messages: 400, projects: 4, samples: filepath.Join("..", "..", "testdata", "agent-sessions"),
		every: 1, limit: 20, command: true}
	if err := scaleMain(context.Background(), &out, sets, o); err != nil {
		t.Fatal(err)
	}
	var rows []string
	_, recallTable, _ := strings.Cut(out.String(), "| benchmark (recall) |")
	for _, line := range strings.Split(recallTable, "\n") {
		if strings.HasPrefix(line, "| locomo | SQLite |") && strings.Count(line, "|") == 16 {
			rows = append(rows, line)
		}
	}
	if !strings.Contains(out.String(), "| benchmark (recall) |") || len(rows) != 2 {
		t.Fatalf("no recall rows for both scopes:\n%s", out.String())
	}
	for _, r := range rows {
		// n, evidence in the answer: both questions, both found, in
		// process and by the whole command.
		if cells := strings.Split(r, "|"); strings.TrimSpace(cells[5]) != "2" || strings.TrimSpace(cells[6]) != "100.0%" || strings.TrimSpace(cells[11]) != "100.0%" {
			t.Errorf("recall row %q: want 2 questions, each with its evidence in the answer, in process and as a command", r)
		}
	}
}
