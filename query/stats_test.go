package query_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Costs are computed per message and summed, by component, for every
// grouping.
func TestStatsCost(t *testing.T) {
	db, ctx := open(t), context.Background()
	tb := pricing.Default()
	price := func(model string, in, out, cw, cr int64) float64 {
		c, err := tb.Price(model, pricing.Usage{Input: in, Output: out, CacheWrite: cw, CacheRead: cr}, day("2026-03-01"))
		if err != nil {
			t.Fatal(err)
		}
		return c.Total()
	}
	// The fixture's four messages of 2026-03-01 with Haiku, each priced on
	// its own, equal the group's tokens priced at once (no tier applies).
	r, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, row := range r.Rows {
		if row.Cost == nil || row.Unpriced != 0 {
			t.Fatalf("%v: no cost", row.Key)
		}
		want := price(row.Key[1], row.Input, row.Output, row.CacheCreation, row.CacheRead)
		if !near(*row.Cost, want) {
			t.Errorf("%v: cost %v, want %v", row.Key, *row.Cost, want)
		}
		if parts := *row.InputCost + *row.OutputCost + *row.CacheWriteCost + *row.CacheReadCost; !near(parts, *row.Cost) {
			t.Errorf("%v: components add up to %v, not %v", row.Key, parts, *row.Cost)
		}
		total += *row.Cost
	}
	for _, by := range [][]string{nil, {"week"}, {"month"}, {"project"}, {"platform"}, {"session"}, {"model"}} {
		r, err := db.Stats(ctx, query.StatsOptions{By: by})
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, row := range r.Rows {
			sum += *row.Cost
		}
		if !near(sum, total) {
			t.Errorf("by %v: total cost %v, want %v", by, sum, total)
		}
	}

	// A model the table does not know has no price: NULL cost, counted.
	only, err := pricing.Parse([]byte(`{"models": [{"model": "claude-opus-4-6", "provider": "anthropic", "input": 5, "output": 25}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err = db.Stats(ctx, query.StatsOptions{By: []string{"model"}, Prices: only})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Rows {
		switch row.Key[0] {
		case "claude-opus-4-6":
			if row.Cost == nil || row.Unpriced != 0 {
				t.Errorf("opus: %+v", row)
			}
		default:
			if row.Cost != nil || row.Unpriced != row.Messages || row.Messages == 0 {
				t.Errorf("%s: cost %v, unpriced %d of %d", row.Key[0], row.Cost, row.Unpriced, row.Messages)
			}
		}
	}
	if len(r.Unpriced) != 2 || !strings.Contains(strings.Join(r.Notes, "\n"), "unknown model, no price: claude-haiku-4-5 (4 messages), claude-sonnet-4-5 (1 messages)") {
		t.Errorf("unpriced %v, notes %q", r.Unpriced, r.Notes)
	}
	// By day, a day mixing priced and unpriced messages costs what is
	// priced and says how many are not.
	r, err = db.Stats(ctx, query.StatsOptions{By: []string{"day"}, Prices: only})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Rows {
		if row.Key[0] == "2026-03-01" && (row.Cost == nil || row.Unpriced != 4 || row.Messages != 7) {
			t.Errorf("mixed day: %+v", row)
		}
	}
	// No model priced at all.
	none, _ := pricing.Parse([]byte(`{"models": []}`))
	r, err = db.Stats(ctx, query.StatsOptions{Prices: none})
	if err != nil || r.Rows[0].Cost != nil || r.Rows[0].Unpriced != r.Rows[0].Messages {
		t.Errorf("nothing priced: %+v %v", r.Rows, err)
	}
}

// The 1-hour share of cache writes: from the messages column, and from the
// raw layer for a lake loaded before the column existed. The corpus's
// Claude Code 2.1 sessions write their cache for one hour.
func TestStatsCacheWrite1h(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	db := openDB(t, lake)
	r, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}, Since: day("2026-02-10"), Until: day("2026-02-11")})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || len(r.Notes) != 0 {
		t.Fatalf("rows %+v notes %q", r.Rows, r.Notes)
	}
	row := r.Rows[0]
	// ccusage 20.0.24 reports the same tokens and $0.371093 for this day.
	if row.Key[1] != "claude-opus-4-6" || row.CacheCreation != 31531 || row.CacheCreation1h != 31531 || !near(*row.Cost, 0.371093) {
		t.Errorf("2026-02-10: %+v cost %v", row, *row.Cost)
	}
	col, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	// The same lake without the column, as lakes loaded by older builds
	// are: the raw layer gives the same split, and a note says so. (The
	// views below stand for such a lake, which has no usage rollup.)
	query.NoRollup(db)
	for _, q := range []string{
		`CREATE TABLE m1h AS SELECT * FROM messages`,
		`CREATE TABLE m0 AS SELECT * EXCLUDE (cache_creation_1h_tokens) FROM m1h`,
		`CREATE OR REPLACE VIEW messages AS SELECT * FROM m0`,
	} {
		if _, err := db.SQL(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(raw.Notes, " "), "raw layer") || len(raw.Rows) != len(col.Rows) {
		t.Fatalf("without the column: notes %q, %d rows", raw.Notes, len(raw.Rows))
	}
	var w1h int64
	for i, a := range raw.Rows {
		c := col.Rows[i]
		if c.CacheCreation1h != a.CacheCreation1h || !near(*c.Cost, *a.Cost) {
			t.Errorf("%v: column %d $%v, raw layer %d $%v", a.Key, c.CacheCreation1h, *c.Cost, a.CacheCreation1h, *a.Cost)
		}
		w1h += a.CacheCreation1h
	}
	if w1h == 0 {
		t.Error("no 1-hour cache writes in the corpus")
	}
	// Files loaded before the column beside files loaded after: NULL
	// there, priced as 5-minute writes, and a note says how many messages.
	if _, err := db.SQL(ctx, `CREATE OR REPLACE VIEW messages AS
		SELECT * REPLACE (CASE WHEN date = DATE '2026-02-12' THEN NULL ELSE cache_creation_1h_tokens END AS cache_creation_1h_tokens) FROM m1h`); err != nil {
		t.Fatal(err)
	}
	mixed, err := db.Stats(ctx, query.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Join(mixed.Notes, " "); !strings.Contains(n, "373 Claude Code messages come from files loaded before the cache_creation_1h_tokens column") {
		t.Errorf("notes %q", mixed.Notes)
	}
}
