package query_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
)

// TestStatsTimezone checks, on the real corpus, that the day, week and
// month keys of Stats in a zone are the days the messages' times have
// there: the same from the rollup as from the messages (costs to the
// bit), message counts equal to those of each message's own time, and a
// --since date read as midnight in the zone. The zones lie far west and
// far east of UTC, and two of them have offsets that are not whole hours
// (Asia/Kolkata +05:30, Pacific/Chatham +13:45): the rollup's hours that
// cross their midnight (some do in Kolkata) are read from the messages.
func TestStatsTimezone(t *testing.T) {
	lake := corpusLake(t)
	ctx := context.Background()
	roll := openDB(t, lake, query.LazyViews())
	msgs := openDB(t, lake)
	query.NoRollup(msgs)

	res, err := msgs.SQL(ctx, `SELECT ts FROM messages WHERE role = 'assistant' AND coalesce(model, '') <> '<synthetic>'`)
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	engine := false // whether a zone needed the messages
	for _, r := range res.Rows {
		times = append(times, r[0].(time.Time))
	}
	if len(times) < 100 {
		t.Fatalf("only %d assistant messages in the corpus lake", len(times))
	}
	for _, name := range []string{"America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata", "Pacific/Chatham"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skip("no zoneinfo:", err)
		}
		// Each message's own day in the zone, and whether the zone moves
		// any from its UTC day or puts an hour across midnight.
		want := map[string]int64{}
		moved, straddles := 0, 0
		for _, ts := range times {
			d := ts.In(loc).Format(time.DateOnly)
			want[d]++
			if d != ts.UTC().Format(time.DateOnly) {
				moved++
			}
			h := ts.Truncate(time.Hour)
			if h.In(loc).Format(time.DateOnly) != h.Add(time.Hour-time.Nanosecond).In(loc).Format(time.DateOnly) {
				straddles++
			}
		}
		if moved == 0 {
			t.Fatalf("%s: no message moves from its UTC day: the test would pass with the zone ignored", name)
		}
		if name == "Asia/Kolkata" && straddles == 0 {
			t.Fatalf("%s: no message in an hour that crosses midnight there", name)
		}
		for _, by := range [][]string{{"day"}, {"day", "model"}, {"week", "platform"}, {"month"}} {
			opt := query.StatsOptions{By: by, Location: loc}
			a, err := roll.Stats(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			b, err := msgs.Stats(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			sameStats(t, fmt.Sprintf("%s by %v", name, by), a, b)
			if by[0] != "day" || len(by) > 1 {
				continue
			}
			got := map[string]int64{}
			for _, r := range a.Rows {
				got[r.Key[0]] = r.Messages
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s: messages by day %v, want %v", name, got, want)
			}
		}
		// --since and --until as dates name midnights in the zone.
		days := slices.Sorted(maps.Keys(want))
		mid := days[len(days)/2]
		since, _ := time.ParseInLocation(time.DateOnly, mid, loc)
		var n int64
		for _, d := range days {
			if d >= mid {
				n += want[d]
			}
		}
		for _, db := range []*query.DB{roll, msgs} {
			r, err := db.Stats(ctx, query.StatsOptions{By: []string{"day"}, Location: loc, Since: since})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Rows) == 0 || r.Rows[0].Key[0] != mid || r.Total.Messages != n {
				t.Errorf("%s since %s: first day %v, %d messages, want %s and %d", name, mid, r.Rows, r.Total.Messages, mid, n)
			}
		}
		// In a zone of whole hours the rollup answers alone, in Go.
		if straddles == 0 && !engine && query.Connections(roll) != 0 {
			t.Errorf("%s: Stats from the rollup started the query engine", name)
		}
		engine = engine || straddles > 0
		t.Logf("%s: %d of %d messages on another day than in UTC, %d in hours across midnight", name, moved, len(times), straddles)
	}
}

// The total of a result sums its rows, and counts a session once however
// many rows it spans.
func TestStatsTotal(t *testing.T) {
	db, ctx := open(t), context.Background()
	all, err := db.Stats(ctx, query.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, by := range [][]string{{"day"}, {"day", "model"}, {"week"}, {"session"}} {
		r, err := db.Stats(ctx, query.StatsOptions{By: by})
		if err != nil {
			t.Fatal(err)
		}
		tot, one := r.Total, all.Rows[0]
		if tot.Messages != one.Messages || tot.Sessions != one.Sessions || tot.Tokens != one.Tokens || !near(*tot.Cost, *one.Cost) {
			t.Errorf("by %v: total %+v, want %+v", by, tot, one)
		}
		var msgs int64
		for _, row := range r.Rows {
			msgs += row.Messages
		}
		if msgs != tot.Messages {
			t.Errorf("by %v: rows sum to %d messages, total says %d", by, msgs, tot.Messages)
		}
	}
	// With a limit, the total is that of the rows shown.
	r, err := db.Stats(ctx, query.StatsOptions{By: []string{"day"}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || r.Total.Messages != r.Rows[0].Messages {
		t.Errorf("limit 1: rows %+v, total %+v", r.Rows, r.Total)
	}
	if got := r.TotalRow()[0]; got != "total" {
		t.Errorf("total row's key %v", got)
	}
}
