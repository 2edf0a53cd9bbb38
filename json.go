package loom

import (
	"encoding/json"
	"time"
)

// jsonTime marshals as RFC 3339 with exactly three fraction digits, UTC,
// the one time format of loom's JSON.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + FormatTime(time.Time(t)) + `"`), nil
}

func optTime(t *time.Time) *jsonTime {
	if t == nil {
		return nil
	}
	j := jsonTime(*t)
	return &j
}

// MarshalJSON writes times with milliseconds.
func (s Session) MarshalJSON() ([]byte, error) {
	type plain Session
	return json.Marshal(struct {
		plain
		CreatedAt  jsonTime  `json:"created_at"`
		UpdatedAt  jsonTime  `json:"updated_at"`
		DeletedAt  *jsonTime `json:"deleted_at"`
		ArchivedAt *jsonTime `json:"archived_at"`
	}{plain(s), jsonTime(s.CreatedAt), jsonTime(s.UpdatedAt), optTime(s.DeletedAt), optTime(s.ArchivedAt)})
}

// MarshalJSON writes times with milliseconds.
func (l Lock) MarshalJSON() ([]byte, error) {
	type plain Lock
	return json.Marshal(struct {
		plain
		Since jsonTime `json:"since"`
	}{plain(l), jsonTime(l.Since)})
}

// MarshalJSON writes times with milliseconds.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	parts := m.Parts
	if parts == nil {
		parts = []Part{}
	}
	return json.Marshal(struct {
		plain
		Parts       []Part    `json:"parts"`
		CreatedAt   jsonTime  `json:"created_at"`
		CompletedAt *jsonTime `json:"completed_at"`
	}{plain(m), parts, jsonTime(m.CreatedAt), optTime(m.CompletedAt)})
}

// MarshalJSON writes times with milliseconds. A part without a file
// source or usage, whose raw JSON is compact, is written directly
// (appendPartJSON), with the bytes encoding/json writes.
func (p Part) MarshalJSON() ([]byte, error) {
	if b, ok := appendPartJSON(make([]byte, 0, 64+len(p.Text)+len(p.Input)+len(p.Output)+len(p.Metadata)), &p); ok {
		return b, nil
	}
	return p.marshalSlow()
}

// marshalSlow is MarshalJSON through encoding/json.
func (p Part) marshalSlow() ([]byte, error) {
	type plain Part
	return json.Marshal(struct {
		plain
		StartedAt *jsonTime `json:"started_at,omitempty"`
		EndedAt   *jsonTime `json:"ended_at,omitempty"`
	}{plain(p), optTime(p.StartedAt), optTime(p.EndedAt)})
}

// MarshalJSON writes times with milliseconds.
func (h SearchHit) MarshalJSON() ([]byte, error) {
	type plain SearchHit
	return json.Marshal(struct {
		plain
		CreatedAt jsonTime `json:"created_at"`
	}{plain(h), jsonTime(h.CreatedAt)})
}
