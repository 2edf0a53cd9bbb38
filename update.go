package loom

import "strings"

// Limits of what a user may write into a session's metadata.
const (
	// MaxTitleBytes bounds a title a user gives a session.
	MaxTitleBytes = 200
	// MaxDescriptionBytes bounds a session's description.
	MaxDescriptionBytes = 10000
)

// ValidTitle checks a title a user gives a session (by renaming it or
// naming a fork): one line of at most MaxTitleBytes bytes.
func ValidTitle(title string) error {
	switch {
	case len(title) > MaxTitleBytes:
		return Errorf(EINVALID, "title is longer than %d bytes", MaxTitleBytes)
	case strings.ContainsAny(title, "\r\n"):
		return Errorf(EINVALID, "title must be one line")
	}
	return nil
}

// ValidDescription checks a session's description: at most
// MaxDescriptionBytes bytes.
func ValidDescription(desc string) error {
	if len(desc) > MaxDescriptionBytes {
		return Errorf(EINVALID, "description is longer than %d bytes", MaxDescriptionBytes)
	}
	return nil
}

// Validate checks the values u sets: the title (ValidTitle), the
// description (ValidDescription) and a key (ValidKey; an empty key
// removes the session's key).
func (u SessionUpdate) Validate() error {
	if u.Title != nil {
		if err := ValidTitle(*u.Title); err != nil {
			return err
		}
	}
	if u.Description != nil {
		if err := ValidDescription(*u.Description); err != nil {
			return err
		}
	}
	if u.Key != nil && *u.Key != "" {
		if err := ValidKey(*u.Key); err != nil {
			return err
		}
	}
	return nil
}

// Column is a column of the sessions table with a value: what an update
// sets, or what a filter requires. A nil Value is NULL.
type Column struct {
	Name  string
	Value any
}

// Columns lists the columns u sets, with their values: the title
// trimmed, a key with its surface (an empty key is NULL, and keeps the
// surface), a project as its three columns, archived_at as now or NULL,
// and updated_at as now when anything but the archived state changes
// (unless u.KeepUpdatedAt). now is the current time as the engine stores
// times.
func (u SessionUpdate) Columns(now any) []Column {
	c := u.changes()
	if len(c) > 0 && !u.KeepUpdatedAt {
		c = append(c, Column{"updated_at", now})
	}
	if u.Archived != nil {
		var at any
		if *u.Archived {
			at = now
		}
		c = append(c, Column{"archived_at", at})
	}
	return c
}

func (u SessionUpdate) changes() []Column {
	var c []Column
	set := func(name string, v any) { c = append(c, Column{name, v}) }
	if u.Title != nil {
		set("title", strings.TrimSpace(*u.Title))
	}
	if u.Description != nil {
		set("description", *u.Description)
	}
	if u.Key != nil {
		if *u.Key == "" {
			set("key", nil)
		} else {
			set("key", *u.Key)
			set("surface", SurfaceOf(*u.Key))
		}
	}
	if u.Project != nil {
		set("project_id", u.Project.ID)
		set("project_name", u.Project.Name)
		set("project_root", u.Project.Root)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"cwd", u.Cwd}, {"model", u.Model}, {"provider", u.Provider}, {"profile", u.Profile}, {"git_branch", u.GitBranch}} {
		if f.v != nil {
			set(f.name, *f.v)
		}
	}
	return c
}

// Equal lists the columns f requires to hold a value (user, project,
// project name, surface, key, parent, kind, git branch), in that order. The other
// conditions of f (trash, times, cursor, text) are the engine's.
func (f SessionFilter) Equal() []Column {
	var c []Column
	for _, col := range []Column{
		{"user_id", f.UserID}, {"project_id", f.ProjectID}, {"project_name", f.ProjectName},
		{"surface", f.Surface}, {"key", f.Key}, {"parent_id", f.ParentID}, {"kind", f.Kind},
		{"git_branch", f.GitBranch},
	} {
		if col.Value != "" {
			c = append(c, col)
		}
	}
	return c
}
