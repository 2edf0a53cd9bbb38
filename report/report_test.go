package report_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/fake"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/report"
)

// slices is a store that holds s: it reads all of them whatever the
// filter, and its usage names their sessions, each titled "title of "
// and its id.
func slices(s ...loom.UsageSlice) *fake.Reader {
	return &fake.Reader{
		UsageSlicesFn: func(context.Context, loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
			return s, nil
		},
		UsageFn: func(_ context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
			u := &loom.UsageReport{}
			for _, x := range s {
				if x.SessionID != "" && (f.SessionID == "" || f.SessionID == x.SessionID) {
					u.BySession = append(u.BySession, loom.UsageRow{Key: x.SessionID, Name: "title of " + x.SessionID})
				}
			}
			return u, nil
		},
	}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func slice(first, last, surface, provider, model string, u loom.Usage) loom.UsageSlice {
	f := at(first)
	return loom.UsageSlice{Start: f.Truncate(15 * time.Minute), First: f, Last: at(last), Surface: surface,
		ProjectID: "p1", ProjectName: "api", Provider: provider, Model: model, Messages: 1, Usage: u}
}

var stored = []loom.UsageSlice{
	// Sonnet 4.5: 1M input = $3, 100k output = $1.50.
	slice("2026-03-01T22:10:00Z", "2026-03-01T22:14:00Z", "claude-code", "anthropic", "claude-sonnet-4-5", loom.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}),
	// gpt-5: 1M cache read = $0.125.
	slice("2026-03-01T23:30:00Z", "2026-03-01T23:40:00Z", "codex", "openai", "gpt-5", loom.Usage{CacheReadTokens: 1_000_000}),
	// Unpriced.
	slice("2026-03-02T03:20:00Z", "2026-03-02T03:20:00Z", "cli", "openai", "llama3.2", loom.Usage{InputTokens: 500, OutputTokens: 20}),
	// Nine hours later: a new block.
	slice("2026-03-02T12:05:00Z", "2026-03-02T12:35:00Z", "cli", "anthropic", "claude-haiku-4-5", loom.Usage{OutputTokens: 200_000}),
}

func build(t *testing.T, o report.Options) *report.Report {
	t.Helper()
	if o.Location == nil {
		o.Location = time.UTC
	}
	rep, err := report.Build(context.Background(), slices(stored...), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func cost(t report.Totals) float64 { return t.Cost() }

func TestDaysInTimeZones(t *testing.T) {
	rep := build(t, report.Options{By: report.Day})
	if len(rep.Rows) != 2 || rep.Rows[0].Period != "2026-03-01" || cost(rep.Rows[0].Totals) != 4.625 || rep.Rows[1].Period != "2026-03-02" {
		t.Fatalf("UTC days: %+v", rep.Rows)
	}
	if rep.Total.TotalTokens != 2_300_520 || cost(rep.Total) != 5.625 || strings.Join(rep.Total.Unpriced, ",") != "llama3.2" {
		t.Fatalf("total %+v", rep.Total)
	}
	if !strings.Contains(rep.UnpricedLine(), "1 model unpriced: llama3.2") {
		t.Fatalf("unpriced line %q", rep.UnpricedLine())
	}
	// Four hours west, the third slice (03:20 UTC) is on March 1st too;
	// at +5:45 every slice is on March 2nd (22:10 UTC is 03:55).
	west := build(t, report.Options{By: report.Day, Location: time.FixedZone("W", -4*3600)})
	if len(west.Rows) != 2 || west.Rows[0].Messages != 3 || west.Rows[0].Models[0] != "claude-sonnet-4-5" {
		t.Fatalf("UTC-2 days: %+v", west.Rows)
	}
	nepal := build(t, report.Options{By: report.Day, Location: time.FixedZone("NPT", 5*3600+45*60)})
	if len(nepal.Rows) != 1 || nepal.Rows[0].Period != "2026-03-02" || nepal.Rows[0].Messages != 4 {
		t.Fatalf("UTC+5:45 days: %+v", nepal.Rows)
	}
}

func TestWeeksMonthsAndBreakdowns(t *testing.T) {
	week := build(t, report.Options{By: report.Week})
	// March 1st 2026 is a Sunday: ISO week 9 starts on Monday Feb 23rd.
	if len(week.Rows) != 2 || week.Rows[0].Period != "2026-W09" || !week.Rows[0].Start.Equal(at("2026-02-23T00:00:00Z")) {
		t.Fatalf("weeks: %+v", week.Rows)
	}
	month := build(t, report.Options{By: report.Month, Breakdown: report.ByAgent})
	if len(month.Rows) != 1 || month.Rows[0].Period != "2026-03" || len(month.Rows[0].Breakdown) != 3 {
		t.Fatalf("month: %+v", month.Rows)
	}
	parts := month.Rows[0].Breakdown
	if parts[0].Key != "claude-code" || cost(parts[0].Totals) != 4.5 || parts[1].Key != "cli" || cost(parts[1].Totals) != 1 ||
		len(parts[1].Unpriced) != 1 || parts[2].Key != "codex" {
		t.Fatalf("by agent: %+v", parts)
	}
	byModel := build(t, report.Options{By: report.Month, Breakdown: report.ByModel})
	for _, p := range byModel.Rows[0].Breakdown {
		if (p.Name == "llama3.2") != (p.CostUSD == nil) {
			t.Fatalf("model %s cost %v", p.Name, p.CostUSD)
		}
	}
}

func TestBlocks(t *testing.T) {
	now := at("2026-03-02T14:05:00Z")
	rep := build(t, report.Options{By: report.Block, Now: now})
	if len(rep.Rows) != 3 {
		t.Fatalf("blocks: %+v", rep.Rows)
	}
	b0, b1, b2 := rep.Rows[0], rep.Rows[1], rep.Rows[2]
	// 22:00–03:00 holds the first two slices; 03:20 is after its end.
	if !b0.Start.Equal(at("2026-03-01T22:00:00Z")) || !b0.End.Equal(at("2026-03-02T03:00:00Z")) || b0.Messages != 2 || b0.Block.Active {
		t.Fatalf("first block: %+v %+v", b0, b0.Block)
	}
	// 4,625 dollars over 1.5 hours from the first message to the last.
	if b0.Block.TokensPerHour != 1_400_000 || *b0.Block.CostPerHour != 3.083333333 {
		t.Fatalf("first block's rate: %+v", b0.Block)
	}
	if !b1.Start.Equal(at("2026-03-02T03:00:00Z")) || b1.CostUSD != nil || b1.Block.CostPerHour != nil {
		t.Fatalf("second block: %+v", b1)
	}
	// Haiku: 200k output = $1, over 30 minutes: $2/h, 400k tokens/h;
	// 175 minutes left at 14:05 until 17:00.
	if !b2.Block.Active || b2.Block.RemainingMinutes != 175 || b2.Block.ProjectedTokens != 200_000+1_166_667 ||
		*b2.Block.ProjectedCostUSD != loom.RoundCost(1+2*175.0/60) {
		t.Fatalf("active block: %+v", b2.Block)
	}
	if rep.Active() == nil || rep.Active().Period != "2026-03-02 12:00" {
		t.Fatalf("active: %+v", rep.Active())
	}
	if later := build(t, report.Options{By: report.Block, Now: at("2026-03-02T17:00:00Z")}); later.Active() != nil {
		t.Fatal("a block that has ended is active")
	}
	// Messages dated after now (a clock that ran ahead): their block
	// has not started, and is not active.
	if earlier := build(t, report.Options{By: report.Block, Now: at("2026-03-02T11:00:00Z")}); earlier.Active() != nil {
		t.Fatalf("a block that starts after now is active: %+v", earlier.Active())
	}
}

func TestPricesAndBounds(t *testing.T) {
	var prices pricing.Table
	prices.Add("", "llama3.2", pricing.Price{Input: 1000, Output: 1000})
	rep := build(t, report.Options{By: report.Day, Prices: &prices})
	if len(rep.Total.Unpriced) != 0 || cost(rep.Total) != 5.625+0.52 {
		t.Fatalf("with an added price: %+v", rep.Total)
	}
	if _, err := report.Build(context.Background(), slices(stored...), report.Options{By: "year"}); err == nil {
		t.Fatal("by year accepted")
	}
	loc := time.FixedZone("E", 3600)
	now := at("2026-03-10T00:00:00Z")
	for in, want := range map[string]string{
		"2026-03-01":       "2026-03-01T00:00:00+01:00",
		"20260301":         "2026-03-01T00:00:00+01:00",
		"2026-03-01T14:00": "2026-03-01T14:00:00+01:00",
		"7d":               "2026-03-03T00:00:00Z",
	} {
		got, err := report.ParseBound(in, loc, now, false)
		if err != nil || !got.Equal(at(want)) {
			t.Errorf("ParseBound(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if got, _ := report.ParseBound("2026-03-01", loc, now, true); !got.Equal(at("2026-03-02T00:00:00+01:00")) {
		t.Errorf("a date as --until is the end of that day: %v", got)
	}
}

// For scripts (TSV, CSV) every cell holds one value: the active block's
// projection is two columns, tokens and cost, each a plain number; for
// people it is one, "1,366,667 / $6.83".
func TestBlockCellsOneValueEach(t *testing.T) {
	rep := build(t, report.Options{By: report.Block, Now: at("2026-03-02T14:05:00Z")})
	tab := rep.Cells(report.Format{Unknown: ""})
	for i, l := range tab.Lines {
		if len(l) != len(tab.Header) {
			t.Fatalf("line %d has %d cells, the header %d: %q %q", i, len(l), len(tab.Header), l, tab.Header)
		}
	}
	h := strings.Join(tab.Header, ",")
	if !strings.HasSuffix(h, "TOKENS/H,COST/H,PROJECTED TOKENS,PROJECTED COST") {
		t.Fatalf("header %s", h)
	}
	active := tab.Lines[len(rep.Rows)-1]
	if got := active[len(active)-2:]; got[0] != "1366667" || got[1] != "6.833333" {
		t.Errorf("projection cells %q", got)
	}
	for _, c := range active {
		if strings.Contains(c, "/") {
			t.Errorf("a cell with two values: %q", c)
		}
	}
	pretty := rep.Cells(report.Format{Pretty: true, Unknown: "—"})
	row := pretty.Lines[len(rep.Rows)-1]
	if pretty.Header[len(pretty.Header)-1] != "PROJECTED" || row[len(row)-1] != "1,366,667 / $6.83" {
		t.Errorf("pretty projection %q under %q", row[len(row)-1], pretty.Header[len(pretty.Header)-1])
	}
}

// A report by session names its sessions, read through the cache the
// web pages and insights read usage through as well as directly.
func TestSessionsTitled(t *testing.T) {
	var named []loom.UsageSlice
	for i, x := range stored {
		x.SessionID = []string{"s1", "s2", "s1", "s3"}[i]
		named = append(named, x)
	}
	for name, src := range map[string]report.Slicer{"store": slices(named...), "cached": report.Cached(slices(named...))} {
		rep, err := report.Build(context.Background(), src, report.Options{By: report.Session, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 3 {
			t.Fatalf("%s: %d rows, want one per session (3)", name, len(rep.Rows))
		}
		for _, r := range rep.Rows {
			if r.Title != "title of "+r.Period {
				t.Errorf("%s: session %s titled %q, want %q", name, r.Period, r.Title, "title of "+r.Period)
			}
		}
	}
}

func TestSharesSumPartsOverRows(t *testing.T) {
	cost := func(c float64) *float64 { return &c }
	rep := &report.Report{Rows: []report.Row{
		{Breakdown: []report.Part{
			{Key: "a", Name: "A", Totals: report.Totals{Messages: 1, TotalTokens: 10, CostUSD: cost(0.1)}},
			{Key: "b", Name: "B", Totals: report.Totals{Messages: 2, TotalTokens: 500}},
		}},
		{Breakdown: []report.Part{
			{Key: "c", Name: "C", Totals: report.Totals{Messages: 1, TotalTokens: 100}},
			{Key: "a", Name: "A", Totals: report.Totals{Messages: 3, TotalTokens: 30, CostUSD: cost(0.2)}},
		}},
	}}
	got := rep.Shares()
	if len(got) != 3 || got[0].Key != "a" || got[1].Key != "b" || got[2].Key != "c" {
		t.Fatalf("order: %+v", got)
	}
	if a := got[0]; a.Messages != 4 || a.Tokens != 40 || a.CostUSD == nil || *a.CostUSD != 0.3 {
		t.Errorf("a: %+v", a)
	}
	if got[1].CostUSD != nil {
		t.Errorf("b has a cost: %v", *got[1].CostUSD)
	}
}
