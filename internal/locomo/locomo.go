// Package locomo reads LoCoMo's locomo10.json (github.com/snap-research/locomo,
// which the user downloads: docs/search.md says where): ten conversations
// of two speakers, each of dated sessions, and questions whose evidence
// names the turns (and so the sessions) that answer them. loom-bench's
// retrieval and scale runs and the scale-and-scope property test read it
// through here (outside the test kit, which loom-bench may not import).
package locomo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Conversation is one of LoCoMo's conversations.
type Conversation struct {
	Name     string // its sample_id
	Sessions []Session
}

// Session is one session of a conversation: its id (D1, D2, …), when it
// started (10:00 on 2023-05-01 where LoCoMo's date cannot be read) and
// its turns, "Speaker: text" each, in order.
type Session struct {
	ID    string
	Start time.Time
	Turns []string
}

// Question is one of LoCoMo's questions, asked of conversation Conv: its
// text, category, and the sessions its evidence is in.
type Question struct {
	Conv     int
	Text     string
	Category string
	Gold     []string
}

// evidence is a turn's id in LoCoMo's evidence: D<session>:<turn>.
var evidence = regexp.MustCompile(`D(\d+):\d+`)

// Parse reads the contents of locomo10.json: its conversations, and
// every question that has a text and evidence.
func Parse(b []byte) ([]Conversation, []Question, error) {
	var samples []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string          `json:"question"`
			Evidence json.RawMessage `json:"evidence"`
			Category json.RawMessage `json:"category"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		return nil, nil, fmt.Errorf("not LoCoMo's locomo10.json: %w", err)
	}
	var convs []Conversation
	var qs []Question
	for ci, s := range samples {
		c := Conversation{Name: s.SampleID}
		for key, raw := range s.Conversation {
			num, ok := strings.CutPrefix(key, "session_")
			if !ok || strings.Contains(num, "_") {
				continue
			}
			var turns []struct {
				Speaker string `json:"speaker"`
				Text    string `json:"text"`
			}
			if json.Unmarshal(raw, &turns) != nil {
				continue
			}
			sess := Session{ID: "D" + num, Start: time.Date(2023, 5, 1, 10, 0, 0, 0, time.UTC)}
			var when string
			if json.Unmarshal(s.Conversation[key+"_date_time"], &when) == nil {
				if t, err := time.Parse("3:04 pm on 2 January, 2006", when); err == nil {
					sess.Start = t
				}
			}
			for _, t := range turns {
				if t.Text != "" {
					sess.Turns = append(sess.Turns, t.Speaker+": "+t.Text)
				}
			}
			if len(sess.Turns) > 0 {
				c.Sessions = append(c.Sessions, sess)
			}
		}
		slices.SortFunc(c.Sessions, func(a, b Session) int { return SessionNumber(a.ID) - SessionNumber(b.ID) })
		convs = append(convs, c)
		for _, qa := range s.QA {
			q := Question{Conv: ci, Text: qa.Question, Category: strings.Trim(string(qa.Category), `"`)}
			for _, m := range evidence.FindAllStringSubmatch(string(qa.Evidence), -1) {
				if id := "D" + m[1]; !slices.Contains(q.Gold, id) {
					q.Gold = append(q.Gold, id)
				}
			}
			if len(q.Gold) > 0 && q.Text != "" {
				qs = append(qs, q)
			}
		}
	}
	if len(qs) == 0 {
		return nil, nil, fmt.Errorf("no LoCoMo question with evidence")
	}
	return convs, qs, nil
}

// SessionNumber is the number of session id D<n>.
func SessionNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "D"))
	return n
}
