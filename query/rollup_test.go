package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
)

// rollupPrices is a price table whose long-context tiers start at
// thresholds the corpus's messages cross (128k and 100k prompt tokens),
// one of them only until a date, with Haiku left unpriced.
const rollupPrices = `{"models": [
 {"model": "claude-opus-4-6", "provider": "anthropic", "input": 5, "output": 25, "cache_write_5m": 6.25, "cache_write_1h": 10, "cache_read": 0.5,
  "long_context": {"above": 128000, "until": "2026-02-12", "input": 10, "output": 37.5, "cache_write_5m": 12.5, "cache_write_1h": 20, "cache_read": 1}},
 {"model": "claude-sonnet-4-5", "provider": "anthropic", "input": 3, "output": 15, "cache_write_5m": 3.75, "cache_write_1h": 6, "cache_read": 0.3,
  "long_context": {"above": 100000, "input": 6, "output": 22.5, "cache_write_5m": 7.5, "cache_write_1h": 12, "cache_read": 0.6}},
 {"model": "claude-opus-4-5", "provider": "anthropic", "input": 5, "output": 25, "cache_write_5m": 6.25, "cache_write_1h": 10, "cache_read": 0.5},
 {"model": "claude-sonnet-4", "provider": "anthropic", "input": 3, "output": 15, "cache_write_5m": 3.75, "cache_write_1h": 6, "cache_read": 0.3}
]}`

// sameStats fails unless a and b have the same groups, counts, notes,
// unpriced models and costs, to the bit: rows from the rollup and from the
// messages are priced and summed alike.
func sameStats(t *testing.T, what string, a, b *query.StatsResult) {
	t.Helper()
	if len(a.Rows) != len(b.Rows) {
		t.Fatalf("%s: %d rows from the rollup, %d from the messages", what, len(a.Rows), len(b.Rows))
	}
	cost := func(p *float64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	for i := range a.Rows {
		ra, rb := a.Rows[i], b.Rows[i]
		ca, cb := ra.Costs, rb.Costs
		ra.Costs, rb.Costs = query.Costs{}, query.Costs{}
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("%s: row %d: rollup %+v, messages %+v", what, i, ra, rb)
		}
		for j, p := range [][2]*float64{{ca.Cost, cb.Cost}, {ca.InputCost, cb.InputCost}, {ca.OutputCost, cb.OutputCost},
			{ca.CacheWriteCost, cb.CacheWriteCost}, {ca.CacheReadCost, cb.CacheReadCost}} {
			if (p[0] == nil) != (p[1] == nil) || p[0] != nil && *p[0] != *p[1] {
				t.Fatalf("%s: row %d (%v): cost %d: rollup %s, messages %s", what, i, ra.Key, j, cost(p[0]), cost(p[1]))
			}
		}
	}
	if !reflect.DeepEqual(a.Unpriced, b.Unpriced) || !reflect.DeepEqual(a.Notes, b.Notes) {
		t.Fatalf("%s: unpriced %v / %v, notes %q / %q", what, a.Unpriced, b.Unpriced, a.Notes, b.Notes)
	}
}

// TestStatsRollup checks that Stats read from the usage rollup pos-load
// keeps gives exactly what it gives from the messages (costs to the bit),
// on the real corpus, for
// every grouping, windows that do and do not start on an hour, filters,
// long-context tiers (with an end date) and the 1-hour cache-write split;
// then with partitions the rollup does not cover (an older pos-load added
// files; a partition was removed), and after pos-load brings it up to date.
func TestStatsRollup(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	st, err := rollup.ReadRollup(lake)
	if err != nil || st == nil {
		t.Fatalf("pos-load left no usage rollup: %v", err)
	}
	if len(st.Stale) > 0 || len(st.Gone) > 0 {
		t.Fatalf("the rollup pos-load just wrote is stale: %v, %v", st.Stale, st.Gone)
	}
	custom, err := pricing.Parse([]byte(rollupPrices))
	if err != nil {
		t.Fatal(err)
	}
	roll := openDB(t, lake, query.LazyViews())
	msgs := openDB(t, lake)
	query.NoRollup(msgs)

	// Stats answered from the rollup in Go never starts DuckDB.
	if n := query.Connections(roll); n != 0 {
		t.Fatalf("Open left %d database connections open", n)
	}
	if _, err := roll.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}}); err != nil {
		t.Fatal(err)
	}
	if n := query.Connections(roll); n != 0 {
		t.Fatalf("Stats from the rollup opened %d database connections", n)
	}

	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	type window struct{ since, until time.Time }
	windows := []window{
		{},
		{since: at("2025-11-15T00:00:00Z")},
		{until: at("2026-01-10T00:00:00Z")},
		{since: at("2025-11-12T13:27:41Z"), until: at("2026-01-20T08:59:59Z")}, // neither on an hour
		{since: at("2025-12-01T10:00:00Z"), until: at("2025-12-01T17:30:00Z")}, // one day
		{since: at("2026-02-11T23:10:00Z"), until: at("2026-02-12T01:50:00Z")}, // across the tier's end
		{since: at("2026-02-11T13:27:41Z"), until: at("2026-02-12T20:15:00Z")},
	}
	bys := [][]string{{"day", "model"}, nil, {"session"}, {"week", "project"}, {"month", "platform", "model"}}
	checked := map[string]bool{}
	compare := func(what string, opt query.StatsOptions) {
		t.Helper()
		a, err := roll.Stats(ctx, opt)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, err := msgs.Stats(ctx, opt)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		sameStats(t, what, a, b)
		if query.RollupInGo(roll, opt) {
			checked["go"] = true
		} else {
			checked["mixed"] = true
		}
		for _, r := range b.Rows {
			if r.CacheCreation1h > 0 {
				checked["1h"] = true
			}
			if r.Unpriced > 0 {
				checked["unpriced"] = true
			}
		}
	}
	for _, w := range windows {
		for _, by := range bys {
			for _, prices := range []*pricing.Table{nil, custom} {
				opt := query.StatsOptions{By: by, Since: w.since, Until: w.until, Prices: prices}
				if !query.UsesRollup(roll, opt) {
					t.Fatalf("%+v: Stats would not read the rollup", opt)
				}
				compare(fmt.Sprintf("by %v, window %v", by, w), opt)
			}
		}
	}
	compare("platform and project", query.StatsOptions{By: []string{"day"}, Platform: "claude_code", Project: "a", Prices: custom})
	for _, c := range []string{"1h", "unpriced", "go", "mixed"} {
		if !checked[c] {
			t.Errorf("the comparison saw no %s tokens", c)
		}
	}
	// The long-context tiers apply to some messages, and priced whole they
	// would cost less: the comparison did cover them.
	lc, err := msgs.SQL(ctx, `SELECT count(*) FILTER (WHERE model = 'claude-opus-4-6' AND p > 128000 AND ts < TIMESTAMPTZ '2026-02-12')
	    * count(*) FILTER (WHERE model = 'claude-opus-4-6' AND p > 128000 AND ts >= TIMESTAMPTZ '2026-02-12')
	    * count(*) FILTER (WHERE model LIKE 'claude-sonnet-4-5%' AND p > 100000)
	  FROM (SELECT *, input_tokens + cache_creation_tokens + cache_read_tokens AS p FROM messages WHERE role = 'assistant')`)
	if err != nil {
		t.Fatal(err)
	}
	if n := lc.Rows[0][0].(int64); n == 0 {
		t.Fatalf("no message is above a test tier (or after its end): the comparison does not cover long-context prices")
	}

	// An older pos-load added files to two partitions and the rollup does
	// not know them: their messages are read instead of their rollup rows.
	mp := filepath.Join(lake, layout.RollupDir, "usage.json")
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m rollup.RollupManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(m.Partitions))
	// A partition was removed from the lake: its rollup rows must go.
	removed := keys[2]
	plat, day, _ := strings.Cut(removed, "/")
	if err := os.Rename(layout.Dir(lake, layout.TableMessages, plat, day), filepath.Join(t.TempDir(), "gone")); err != nil {
		t.Fatal(err)
	}
	if st, err = rollup.ReadRollup(lake); err != nil || len(st.Stale) != 0 || len(st.Gone) != 1 {
		t.Fatalf("ReadRollup: stale %v, gone %v, %v", st.Stale, st.Gone, err)
	}
	for _, by := range bys {
		opt := query.StatsOptions{By: by, Prices: custom}
		if !query.RollupInGo(roll, opt) {
			t.Fatalf("a partition gone: Stats %+v would not read the rollup in Go", opt)
		}
		compare(fmt.Sprintf("a partition gone, by %v", by), opt)
	}
	for _, k := range keys[:2] {
		m.Partitions[k] = "older"
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(mp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err = rollup.ReadRollup(lake)
	if err != nil || len(st.Stale) != 2 || len(st.Gone) != 1 {
		t.Fatalf("ReadRollup: stale %v, gone %v, %v", st.Stale, st.Gone, err)
	}
	for _, by := range bys {
		opt := query.StatsOptions{By: by, Since: windows[3].since, Prices: custom}
		compare(fmt.Sprintf("stale partitions, by %v", by), opt)
		compare(fmt.Sprintf("stale partitions, all time, by %v", by), query.StatsOptions{By: by})
	}
	// pos-load brings the rollup up to date.
	if err := rollup.UpdateRollup(ctx, lake); err != nil {
		t.Fatal(err)
	}
	if st, err = rollup.ReadRollup(lake); err != nil || len(st.Stale)+len(st.Gone) != 0 {
		t.Fatalf("after UpdateRollup: stale %v, gone %v, %v", st.Stale, st.Gone, err)
	}
	for _, by := range bys {
		compare(fmt.Sprintf("updated, by %v", by), query.StatsOptions{By: by, Prices: custom})
	}
}

// The rollup pos-load writes in Go has the rows RollupSelect computes from
// the messages view, on the real corpus (1-hour cache writes and
// long-context ranks included).
func TestRollupRowsCorpus(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	db := openDB(t, lake)
	st, err := rollup.ReadRollup(lake)
	if err != nil || st == nil || len(st.Stale)+len(st.Gone) != 0 {
		t.Fatalf("no current rollup: %+v, %v", st, err)
	}
	text := func(from string) string {
		t.Helper()
		tb, err := db.SQL(ctx, fmt.Sprintf(rollup.RollupTextSQL, from))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(tb.Rows[0][0])
	}
	written := text("read_parquet('" + strings.ReplaceAll(st.Path, "'", "''") + "')")
	bySQL := text("(" + rollup.RollupSelect(rollup.RollupSource{From: "messages", Thresholds: st.Manifest.Thresholds}) + ")")
	if written != bySQL {
		t.Fatalf("rollup rows differ\nwritten:\n%s\nby SQL:\n%s", written, bySQL)
	}
	tb, err := db.SQL(ctx, "SELECT count(*), sum(cache_creation_1h_tokens), max(ctx_rank) FROM read_parquet('"+strings.ReplaceAll(st.Path, "'", "''")+"')")
	if err != nil {
		t.Fatal(err)
	}
	if r := tb.Rows[0]; r[0].(int64) < 20 || fmt.Sprint(r[1]) == "0" || fmt.Sprint(r[2]) == "0" {
		t.Fatalf("rollup rows, 1-hour writes, top rank: %v: the corpus should cover all three", r)
	}
}
