package postgres_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
)

// A connection that may only read (a read-only role, a standby) cannot
// bring the usage roll-up up to date: its report is summed from the
// messages, the same.
func TestUsageSlicesReadOnlyConnection(t *testing.T) {
	ctx := context.Background()
	dsn := freshSchema(t)
	st := open(t, dsn)
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:usage"}
	q := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "question"}}}
	a := &loom.Message{Role: loom.RoleAssistant, Provider: "p", Model: "m", Parts: []loom.Part{{Type: loom.PartText, Text: "answer"}},
		Usage: loom.Usage{InputTokens: 10, OutputTokens: 2}, CreatedAt: time.Date(2026, 3, 1, 10, 7, 0, 0, time.UTC)}
	if err := st.Append(ctx, s, q, a); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	v := u.Query()
	v.Set("default_transaction_read_only", "on")
	u.RawQuery = v.Encode()
	ro, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.UsageSlices(ctx, loom.UsageSliceFilter{UserID: "alice", LongContext: 200_000})
	if err != nil {
		t.Fatalf("read-only connection: %v", err)
	}
	if len(got) != 1 || got[0].Usage.InputTokens != 10 || got[0].Messages != 1 {
		t.Fatalf("read-only connection's slices = %+v", got)
	}
}
