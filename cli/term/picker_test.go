package term

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
)

func TestPickerModel(t *testing.T) {
	base := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	now := base.Add(time.Hour)
	sessions := []*loom.Session{
		{ID: "0196aaaa-0000-7000-8000-000000000001", Title: "alpha work", LastPrompt: "first prompt", MessageCount: 3, UpdatedAt: base},
		{ID: "0196bbbb-0000-7000-8000-000000000002", Title: "beta work", LastPrompt: "second prompt", MessageCount: 5, UpdatedAt: base},
	}
	m := newPickerModel("Sessions in api", sessions, now, 80, 20)
	view := m.View().Content
	for _, want := range []string{"Sessions in api", "alpha work", "beta work", "1 hour ago · 3 messages · first prompt", "0196aaaa"} {
		if !strings.Contains(ansi.Strip(view), want) {
			t.Fatalf("picker view lacks %q:\n%s", want, view)
		}
	}
	items := m.list.Items()
	if len(items) != 2 || !strings.Contains(items[1].FilterValue(), "second prompt") {
		t.Fatalf("items = %v", items)
	}
	// Down and enter choose the second session.
	next, _ := m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	next, cmd := next.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if pm := next.(pickerModel); pm.chosen != sessions[1] || cmd == nil {
		t.Fatalf("enter chose %v", pm.chosen)
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("choosing does not end the picker")
	}
	// q leaves without a choice.
	next, cmd = m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if pm := next.(pickerModel); pm.chosen != nil || cmd == nil {
		t.Fatal("q chose a session")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q does not end the picker")
	}
}
