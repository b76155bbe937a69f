package query

import (
	"testing"
	"time"

	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/pricing"
)

// TestIdentifyBlocks pins ccusage's rules: a block starts at the hour of
// its first message; a message more than 5 hours after the block's start
// or after the message before starts a new one; a gap lies between the
// last message plus 5 hours and the next message.
func TestIdentifyBlocks(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	e := func(ts string, out int64) rollup.UsageEntry {
		return rollup.UsageEntry{TS: at(ts), Model: "claude-sonnet-4-5", Input: 10, Output: out}
	}
	entries := []rollup.UsageEntry{
		e("2026-01-01T10:17:00Z", 100), // block 10:00-15:00
		e("2026-01-01T14:59:00Z", 100), // same block
		e("2026-01-01T15:01:00Z", 100), // past the block's end: block 15:00
		e("2026-01-01T21:02:00Z", 100), // more than 5h after the last: gap 20:01-21:02, block 21:00
		e("2026-01-01T22:00:00Z", 100),
	}
	now := at("2026-01-01T23:00:00Z")
	bs := identifyBlocks(entries, BlockLength, now, newEntryPricer(pricing.Default()))
	want := []struct {
		start, end string
		gap        bool
		entries    int
	}{
		{"2026-01-01T10:00:00Z", "2026-01-01T15:00:00Z", false, 2},
		{"2026-01-01T15:00:00Z", "2026-01-01T20:00:00Z", false, 1},
		{"2026-01-01T20:01:00Z", "2026-01-01T21:02:00Z", true, 0},
		{"2026-01-01T21:00:00Z", "2026-01-02T02:00:00Z", false, 2},
	}
	if len(bs) != len(want) {
		t.Fatalf("%d blocks, want %d: %+v", len(bs), len(want), bs)
	}
	for i, w := range want {
		b := bs[i]
		if !b.Start.Equal(at(w.start)) || !b.End.Equal(at(w.end)) || b.Gap != w.gap || b.Entries != w.entries {
			t.Errorf("block %d: %s-%s gap=%v entries=%d, want %+v", i, b.Start, b.End, b.Gap, b.Entries, w)
		}
	}
	last := bs[3]
	if !last.Active || bs[0].Active {
		t.Errorf("active: %v %v, want the last block only", bs[0].Active, last.Active)
	}
	// 220 tokens over the 58 minutes from its first message to its last;
	// $3/M input and $15/M output: 20*3e-6 + 200*15e-6 = $0.00306.
	if r := last.BurnRate; r == nil || r.TokensPerMinute != 220.0/58 || r.TokensPerMinuteForIndicator != 220.0/58 {
		t.Errorf("burn rate %+v", last.BurnRate)
	}
	if d := last.Cost - 0.00306; d > 1e-12 || d < -1e-12 {
		t.Errorf("cost %v, want 0.00306", last.Cost)
	}
	// 180 minutes left: 220 + 220/58*180 tokens.
	if p := last.Projection; p == nil || p.RemainingMinutes != 180 || p.TotalTokens != 903 {
		t.Errorf("projection %+v", last.Projection)
	}
}

func TestStatuslineLine(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 30, 0, 0, time.UTC)
	cost := 1.234
	f := &StatuslineFigures{Model: "Opus", SessionCost: 2.5, Today: 10, Now: now, Context: &[2]int64{123456, 200000},
		Block: &BillingBlock{Cost: 4.2, End: now.Add(2*time.Hour + 5*time.Minute + 30*time.Second), BurnRate: &BurnRate{CostPerHour: 3.456, TokensPerMinuteForIndicator: 2500}}}
	for _, c := range []struct {
		opt  StatuslineFormat
		want string
	}{
		{StatuslineFormat{}, "🤖 Opus | 💰 $2.50 session / $10.00 today / $4.20 block (2h 5m left) | 🔥 $3.46/hr | 🧠 123,456 (62%)"},
		{StatuslineFormat{VisualBurnRate: "emoji-text"}, "🤖 Opus | 💰 $2.50 session / $10.00 today / $4.20 block (2h 5m left) | 🔥 $3.46/hr ⚠️ (Moderate) | 🧠 123,456 (62%)"},
		{StatuslineFormat{CostSource: CostBoth}, "🤖 Opus | 💰 (N/A cc / $2.50 ccusage) session / $10.00 today / $4.20 block (2h 5m left) | 🔥 $3.46/hr | 🧠 123,456 (62%)"},
	} {
		got, err := f.Line(c.opt)
		if err != nil || got != c.want {
			t.Errorf("%+v: %q, %v\nwant %q", c.opt, got, err, c.want)
		}
	}
	f.HookCost, f.Block, f.Context = &cost, nil, nil
	if got, _ := f.Line(StatuslineFormat{}); got != "🤖 Opus | 💰 $1.23 session / $10.00 today / No active block | 🧠 N/A" {
		t.Errorf("%q", got)
	}
	if _, err := f.Line(StatuslineFormat{CostSource: "x"}); err == nil {
		t.Error("an unknown cost source is accepted")
	}
	for _, in := range []string{"", "xx", "{}", `{"session_id":1}`} {
		if _, err := ParseStatuslineInput([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
