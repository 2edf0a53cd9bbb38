package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// object is a JSON object whose members keep their order, so that a
// settings file loom adds a hook to reads as it did, with the hook added.
type object []member

type member struct {
	key   string
	value json.RawMessage
}

func parseObject(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var o object
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more after the JSON object")
	}
	return o, nil
}

func (o object) get(k string) json.RawMessage {
	for _, m := range o {
		if m.key == k {
			return m.value
		}
	}
	return nil
}

func (o *object) set(k string, v json.RawMessage) {
	for i := range *o {
		if (*o)[i].key == k {
			(*o)[i].value = v
			return
		}
	}
	*o = append(*o, member{k, v})
}

func (o *object) del(k string) {
	for i := range *o {
		if (*o)[i].key == k {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// settings is a Claude Code or Gemini CLI settings file: its members,
// and its "hooks" object, which maps an event to a list of groups, each
// holding a list of hooks ({"type": "command", "command": …}).
type settings struct {
	top, hooks object
}

func parseSettings(b []byte) (*settings, error) {
	s := &settings{}
	if len(bytes.TrimSpace(b)) == 0 {
		return s, nil
	}
	var err error
	if s.top, err = parseObject(b); err != nil {
		return nil, fmt.Errorf("not plain JSON (%v): add loom's hooks by hand (docs/import.md)", err)
	}
	if h := s.top.get("hooks"); h != nil && string(h) != "null" {
		if s.hooks, err = parseObject(h); err != nil {
			return nil, fmt.Errorf(`"hooks" is not an object (%v)`, err)
		}
	}
	return s, nil
}

func (s *settings) groups(ev string) ([]json.RawMessage, error) {
	v := s.hooks.get(ev)
	if v == nil || string(v) == "null" {
		return nil, nil
	}
	var gs []json.RawMessage
	if err := json.Unmarshal(v, &gs); err != nil {
		return nil, fmt.Errorf("hooks.%s is not a list", ev)
	}
	return gs, nil
}

// commands is the command of each hook of group g.
func commands(g json.RawMessage) []string {
	var grp struct {
		Hooks []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	}
	if json.Unmarshal(g, &grp) != nil {
		return nil
	}
	var out []string
	for _, h := range grp.Hooks {
		out = append(out, h.Command)
	}
	return out
}

func (s *settings) hasEvent(ev, args string) bool {
	gs, _ := s.groups(ev)
	for _, g := range gs {
		for _, c := range commands(g) {
			if isLoom(c, args) {
				return true
			}
		}
	}
	return false
}

// programOf is the program loom's hook of args in event ev runs ("" when
// there is none).
func (s *settings) programOf(ev, args string) string {
	gs, _ := s.groups(ev)
	for _, g := range gs {
		for _, c := range commands(g) {
			if p, ok := loomProgram(c, args); ok {
				return p
			}
		}
	}
	return ""
}

func (s *settings) has(events []string, args string) bool {
	for _, ev := range events {
		if !s.hasEvent(ev, args) {
			return false
		}
	}
	return len(events) > 0
}

// add adds a group of its own running cmd to event ev, for the tools
// matcher names ("": every one).
func (s *settings) add(ev, matcher, cmd string) error {
	gs, err := s.groups(ev)
	if err != nil {
		return err
	}
	type hook struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	grp := object{}
	if matcher != "" {
		m, _ := marshal(matcher)
		grp.set("matcher", m)
	}
	hs, _ := marshal([]hook{{"command", cmd}})
	grp.set("hooks", hs)
	g := grp.marshal()
	return s.setGroups(ev, append(gs, g))
}

// remove takes loom's hook of args out of event ev's groups, and a group
// that holds nothing else with it.
func (s *settings) remove(ev, args string) error {
	gs, err := s.groups(ev)
	if err != nil {
		return err
	}
	var kept []json.RawMessage
	for _, g := range gs {
		o, err := parseObject(g)
		if err != nil {
			kept = append(kept, g)
			continue
		}
		var hs []json.RawMessage
		if json.Unmarshal(o.get("hooks"), &hs) != nil {
			kept = append(kept, g)
			continue
		}
		var left []json.RawMessage
		for _, h := range hs {
			var hook struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(h, &hook) == nil && isLoom(hook.Command, args) {
				continue
			}
			left = append(left, h)
		}
		if len(left) == 0 {
			continue
		}
		b, _ := marshal(left)
		o.set("hooks", b)
		kept = append(kept, o.marshal())
	}
	return s.setGroups(ev, kept)
}

func (s *settings) setGroups(ev string, gs []json.RawMessage) error {
	if len(gs) == 0 {
		s.hooks.del(ev)
		return nil
	}
	b, err := marshal(gs)
	if err != nil {
		return err
	}
	s.hooks.set(ev, b)
	return nil
}

// encode is the file, indented as the agents write theirs.
func (s *settings) encode() ([]byte, error) {
	if len(s.hooks) == 0 {
		s.top.del("hooks")
	} else {
		s.top.set("hooks", s.hooks.marshal())
	}
	var b bytes.Buffer
	if err := json.Indent(&b, s.top.marshal(), "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshal is json.Marshal that leaves <, > and & as they are: a command
// such as "a && b" in the user's hooks stays as they wrote it.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
