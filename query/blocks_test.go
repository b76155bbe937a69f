package query_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/cursor"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

// TestCorpusBlocks checks, on the real corpus, that the blocks hold every
// Claude Code message Stats counts, with the same tokens and cost; that a
// window and the active block read from the partitions they need give the
// blocks of the whole lake; and how long a status line takes.
func TestCorpusBlocks(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	db := openDB(t, lake)
	st, err := db.Stats(ctx, query.StatsOptions{Platform: "claude_code"})
	if err != nil {
		t.Fatal(err)
	}
	total := st.Rows[0]
	all, err := query.Blocks(ctx, lake, query.BlocksOptions{Platform: "claude_code"})
	if err != nil {
		t.Fatal(err)
	}
	var tokens, messages int64
	var cost float64
	for _, b := range all.Blocks {
		tokens += b.TotalTokens
		messages += int64(b.Entries)
		cost += b.Cost
	}
	if want := total.Input + total.Output + total.CacheCreation + total.CacheRead; tokens != want || messages != total.Messages {
		t.Errorf("blocks hold %d tokens in %d messages; stats %d in %d", tokens, messages, want, total.Messages)
	}
	if math.Abs(cost-*total.Cost) > 1e-9 {
		t.Errorf("blocks cost %.9f; stats %.9f", cost, *total.Cost)
	}
	if len(all.Blocks) < 10 {
		t.Fatalf("%d blocks", len(all.Blocks))
	}
	// From a block's start on, read from the partitions needed.
	mid := all.Blocks[len(all.Blocks)-3]
	part, err := query.Blocks(ctx, lake, query.BlocksOptions{Platform: "claude_code", Since: mid.Start})
	if err != nil {
		t.Fatal(err)
	}
	if want := all.Blocks[len(all.Blocks)-3:]; !slices.EqualFunc(part.Blocks, want, sameBlock) {
		t.Errorf("--since %s: %d blocks, want %d", mid.Start, len(part.Blocks), len(want))
	}
	// The last block, active 10 minutes after its last message.
	last := all.Blocks[len(all.Blocks)-1]
	now := last.ActualEnd.Add(10 * time.Minute)
	act, err := query.Blocks(ctx, lake, query.BlocksOptions{Platform: "claude_code", Active: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Blocks) != 1 || !sameBlock(act.Blocks[0], last) || !act.Blocks[0].Active || act.Blocks[0].BurnRate == nil {
		t.Fatalf("active at %s: %+v", now, act.Blocks)
	}
	in := &query.StatuslineInput{SessionID: "ae4a77f8-aedd-4bc1-888f-c94edc91af04"}
	in.Model.DisplayName = "Opus"
	opt := query.StatuslineOptions{Platform: "claude_code", Now: now, Location: time.UTC}
	var best time.Duration = 1 << 62
	var f *query.StatuslineFigures
	for range 5 {
		start := time.Now()
		if f, err = query.Statusline(ctx, lake, in, opt); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	t.Logf("statusline: %v (best of 5, in process)", best.Round(time.Microsecond))
	if f.Block == nil || math.Abs(f.Block.Cost-last.Cost) > 1e-9 {
		t.Errorf("statusline block %+v, want cost %v", f.Block, last.Cost)
	}
	// The session's cost: its rows in the stats by session.
	bySession, err := db.Stats(ctx, query.StatsOptions{Platform: "claude_code", By: []string{"session"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range bySession.Rows {
		if r.Key[0] == in.SessionID && math.Abs(*r.Cost-f.SessionCost) > 1e-9 {
			t.Errorf("statusline session cost %v, stats %v", f.SessionCost, *r.Cost)
		}
	}
	day, err := db.Stats(ctx, query.StatsOptions{Platform: "claude_code", Since: now.UTC().Truncate(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(*day.Rows[0].Cost-f.Today) > 1e-9 {
		t.Errorf("statusline today %v, stats %v", f.Today, *day.Rows[0].Cost)
	}
	statuslineMemo(t, lake, in, opt, f.SessionCost)
}

// statuslineMemo checks the status line's memo of a session's older cost:
// it is read while the lake stays as it was, and set aside once a load
// changes it.
func statuslineMemo(t *testing.T, lake string, in *query.StatuslineInput, opt query.StatuslineOptions, want float64) {
	t.Helper()
	path := filepath.Join(lake, "rollup", "statusline.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no memo: %v", err)
	}
	var m struct {
		Stamp  string             `json:"stamp"`
		Prices string             `json:"prices"`
		Costs  map[string]float64 `json:"costs"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Costs) != 1 {
		t.Fatalf("memo %s: %v", b, err)
	}
	for k := range m.Costs {
		m.Costs[k] += 1000
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := query.Statusline(ctx, lake, in, opt)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.SessionCost-(want+1000)) > 1e-9 {
		t.Errorf("session cost %v with the memo altered, want %v: the memo is not read", f.SessionCost, want+1000)
	}
	// A load changes the lake's state: the memo no longer holds.
	runs, err := os.OpenFile(filepath.Join(lake, "_state", "runs.ndjson"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	runs.WriteString("{}\n")
	runs.Close()
	if f, err = query.Statusline(ctx, lake, in, opt); err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.SessionCost-want) > 1e-9 {
		t.Errorf("session cost %v after a load, want %v: the memo outlived the lake's state", f.SessionCost, want)
	}
}

func sameBlock(a, b query.BillingBlock) bool {
	return a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Gap == b.Gap && a.TotalTokens == b.TotalTokens && a.Entries == b.Entries
}

// TestCorpusCursorRecordedCost: Cursor's messages have no model, so no
// price; their sessions' own recorded cost (cost_cents) is their cost.
func TestCorpusCursorRecordedCost(t *testing.T) {
	root := filepath.Join(filepath.Dir(corpusRoot), "cursor", "aleksey")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("skipped: no Cursor corpus at %s", root)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	p := querytest.Pipeline{User: "dev", Machine: "box", Now: func() time.Time { return querytest.Now },
		Key: []byte("querytest key of 32 bytes or more"), Adapter: cursor.Adapter{}}
	if err := p.Run(context.Background(), root, lake); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, lake)
	st, err := db.Stats(context.Background(), query.StatsOptions{Platform: "cursor", By: []string{"session"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"22b57e58-4764-45d1-8303-21d00aaa6ec5": 0.28, "6b4c3d09-b30f-4bf8-862f-39b6307657f7": 0.16}
	found := 0
	for _, r := range st.Rows {
		w, ok := want[r.Key[0]]
		if !ok {
			continue
		}
		found++
		if r.Cost == nil || math.Abs(*r.Cost-w) > 1e-9 || r.Unpriced != 0 {
			t.Errorf("session %s: cost %v, unpriced %d; want %v, 0", r.Key[0], r.Cost, r.Unpriced, w)
		}
	}
	if found != len(want) {
		t.Errorf("found %d of the sessions that record a cost: %+v", found, st.Rows)
	}
	if !slices.ContainsFunc(st.Notes, func(n string) bool { return strings.Contains(n, "cost_cents") }) {
		t.Errorf("no note on the recorded cost: %q", st.Notes)
	}
}

// TestStatsTableNoBlankModel: a row of messages without a model is named
// in a table (the sync report prints one), and stays "" in JSON.
func TestStatsTableNoBlankModel(t *testing.T) {
	cost := 1.5
	st := &query.StatsResult{By: []string{"day", "model"}, Rows: []query.StatsRow{
		{Key: []string{"2026-01-01", ""}, Messages: 3},
		{Key: []string{"2026-01-01", "claude-opus-4-6"}, Messages: 2, Costs: query.Costs{Cost: &cost}},
	}}
	for _, c := range []struct {
		format query.Format
		want   string
	}{{query.FormatTable, query.NoModel}, {query.FormatNDJSON, `"model":""`}} {
		var out, errb strings.Builder
		o := &query.Output{W: &out, Err: &errb, Name: "t", Format: c.format, Width: 200, Now: time.Now()}
		if err := o.Stats(st, st.By); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: no %q in\n%s", c.format, c.want, out.String())
		}
	}
}
