package query

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// The columns an update sets and a filter requires, with their values.
func TestColumns(t *testing.T) {
	str := func(s string) *string { return &s }
	cols := UpdateColumns(loom.SessionUpdate{Title: str(" t "), Key: str("tg:1"), Project: &loom.Project{ID: "p", Name: "n", Root: "/r"}, Model: str("m"), GitBranch: str("main")}, "NOW")
	var got []string
	for _, c := range cols {
		got = append(got, c.Name+"="+c.Value.(string))
	}
	if strings.Join(got, " ") != "title=t key=tg:1 surface=tg project_id=p project_name=n project_root=/r model=m git_branch=main updated_at=NOW" {
		t.Fatalf("changes = %v", got)
	}
	if c := UpdateColumns(loom.SessionUpdate{Key: str("")}, "NOW"); len(c) != 2 || c[0].Value != nil || c[1].Name != "updated_at" {
		t.Fatalf("removing the key = %+v", c)
	}
	// Archiving is not activity: it sets archived_at alone.
	yes, no := true, false
	if c := UpdateColumns(loom.SessionUpdate{Archived: &yes}, "NOW"); len(c) != 1 || c[0].Name != "archived_at" || c[0].Value != "NOW" {
		t.Fatalf("archive = %+v", c)
	}
	if c := UpdateColumns(loom.SessionUpdate{Archived: &no}, "NOW"); len(c) != 1 || c[0].Value != nil {
		t.Fatalf("unarchive = %+v", c)
	}
	if c := FilterColumns(loom.SessionFilter{UserID: "u", Kind: loom.KindFork}); len(c) != 2 || c[0].Name != "user_id" || c[1].Name != "kind" {
		t.Fatalf("filter columns = %+v", c)
	}
}
