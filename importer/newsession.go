package importer

import (
	"context"
	"path/filepath"
	"time"

	"github.com/loomhq/loom"
)

// parentProject is the project of the session with source id src: the
// one read with it in res, else the one stored; nil when neither has
// a working directory.
func (im *Importer) parentProject(ctx context.Context, tool, src string, res *Result) (*loom.Project, error) {
	for _, s := range res.Sessions {
		if s.SourceID == src && s.Cwd != "" {
			p := im.project(s.Cwd)
			return &p, nil
		}
	}
	p, err := im.find(ctx, tool+":"+src)
	if err != nil || p == nil || p.Project.Root == "" {
		return nil, err
	}
	return &p.Project, nil
}

// newSession is the loom session of source session s.
func (im *Importer) newSession(f Format, s *Session, id, kind, parentID string, msgs []*loom.Message) *loom.Session {
	tool := f.Tool()
	x := &loom.Session{
		ID:        id,
		UserID:    im.UserID,
		Key:       tool + ":" + s.SourceID,
		Surface:   tool,
		Kind:      kind,
		ParentID:  parentID,
		Cwd:       s.Cwd,
		Model:     s.Model,
		Provider:  s.Provider,
		GitBranch: s.GitBranch,
		Source:    &loom.Source{Tool: tool, Version: s.Version, Path: s.Path},
		CreatedAt: s.CreatedAt,
		UpdatedAt: s.UpdatedAt,
	}
	if kind == loom.KindFork {
		x.ForkTurn = s.ForkTurn
	}
	x.Title = Title(&Session{Title: s.Title, Messages: msgs})
	if s.Cwd != "" {
		x.Project = im.project(s.Cwd)
	}
	if x.Provider == "" {
		x.Provider = f.Provider()
	}
	for _, m := range msgs {
		x.Usage.Add(m.Usage)
		if x.Model == "" && m.Model != "" {
			x.Model = m.Model
		}
		if x.Provider == "" && m.Provider != "" {
			x.Provider = m.Provider
		}
	}
	if len(msgs) > 0 && (x.CreatedAt.IsZero() || msgs[0].CreatedAt.Before(x.CreatedAt)) {
		x.CreatedAt = msgs[0].CreatedAt
	}
	if x.CreatedAt.IsZero() {
		x.CreatedAt = im.now()
	}
	x.UpdatedAt = lastActive(s, msgs, x.CreatedAt)
	return x
}

// lastActive is when source session s, read as msgs and started at
// created, was last active: the latest of the time its reader gives it
// (which counts the completion of its replies and tools), its last
// message's and its start.
func lastActive(s *Session, msgs []*loom.Message, created time.Time) time.Time {
	at := s.UpdatedAt
	if len(msgs) > 0 {
		at = later(at, msgs[len(msgs)-1].CreatedAt)
	}
	return later(at, created)
}

// project is the project of a working directory, by the rule of
// loom's own sessions when the directory is on this machine.
func (im *Importer) project(dir string) loom.Project {
	if p, ok := im.projects[dir]; ok {
		return p
	}
	var p loom.Project
	if im.Project != nil {
		p = im.Project(dir)
	} else {
		p = loom.Project{Root: dir, Name: filepath.Base(dir)}
	}
	if im.projects == nil {
		im.projects = map[string]loom.Project{}
	}
	im.projects[dir] = p
	return p
}

// numbered gives msgs their session and seq 1, 2, 3 ….
func numbered(id string, msgs []*loom.Message) []*loom.Message {
	for i, m := range msgs {
		m.SessionID, m.Seq = id, int64(i+1)
	}
	return msgs
}
