package main

import (
	"context"
	"errors"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/picker"
)

// openPicker opens the session picker over every project's sessions of
// user to its first frame, 120 × 40: the first page of sessions listed
// and the selected session's preview drawn, as a terminal would show it
// once the picker has settled.
func openPicker(ctx context.Context, st loom.Store, user string) error {
	m := picker.New(ctx, st, picker.Options{UserID: user, AllProjects: true, Color: true, Width: 120, Height: 40})
	m.Settle(m.Init())
	frame := m.View().Content
	if !strings.Contains(frame, "sessions") || strings.Contains(frame, "loading…") {
		return errors.New("picker: the first frame is not complete")
	}
	return nil
}
