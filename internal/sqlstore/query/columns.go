package query

import (
	"strings"

	"github.com/loomhq/loom"
)

// Column is a column of the sessions table with a value: what an update
// sets, or what a filter requires. A nil Value is NULL.
type Column struct {
	Name  string
	Value any
}

// UpdateColumns lists the columns u sets, with their values: the title
// trimmed, a key with its surface (an empty key is NULL, and keeps the
// surface), a project as its three columns, archived_at as now or NULL,
// and updated_at as now when anything but the archived state changes
// (unless u.KeepUpdatedAt). now is the current time as the engine stores
// times.
func UpdateColumns(u loom.SessionUpdate, now any) []Column {
	c := changes(u)
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

func changes(u loom.SessionUpdate) []Column {
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
			set("surface", loom.SurfaceOf(*u.Key))
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
	}{{"cwd", u.Cwd}, {"model", u.Model}, {"provider", u.Provider}, {"profile", u.Profile}, {"git_branch", u.GitBranch},
		{"team", u.Team}, {"member", u.Member}} {
		if f.v != nil {
			set(f.name, *f.v)
		}
	}
	return c
}

// FilterColumns lists the columns f requires to hold a value (user, project,
// project name, surface, key, parent, kind, git branch), in that order. The other
// conditions of f (trash, times, cursor, text) are the engine's.
func FilterColumns(f loom.SessionFilter) []Column {
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

// ForkColumns are the columns of sessions that a fork's insert sets from
// its source's row, in the order the engines' fork and rewind
// statements select them.
const ForkColumns = `id, user_id, key, surface, title, description,
	kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
	profile, message_count, turn_count, summary_seq, last_prompt,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cache_write_1h_tokens, cost_usd, api_calls, compactions, created_at, updated_at, git_branch`
