package query_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
)

// ResolveSession and Recent read one session's rows instead of going
// through the sessions and exchanges views (which aggregate and number the
// whole lake); what they return must be what the views say, for every
// session.
func checkLookupsMatchViews(t *testing.T, lake string) {
	for _, cache := range []bool{true, false} {
		checkLookups(t, lake, cache)
	}
}

// checkLookups checks them with the session cache or, without it, from
// each session's own rows.
func checkLookups(t *testing.T, lake string, cache bool) {
	ctx := context.Background()
	db := openDB(t, lake)
	if !cache {
		query.NoSessionCache(db)
	}
	sessions, err := db.SQL(ctx, `SELECT platform, session_id, coalesce(title, ''), coalesce(project, ''), first_ts, last_ts FROM sessions ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions.Rows) == 0 {
		t.Fatal("no sessions")
	}
	str := func(v any) string {
		if tm, ok := v.(time.Time); ok {
			return tm.UTC().Format(time.RFC3339Nano)
		}
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	for _, r := range sessions.Rows {
		platform, id := r[0].(string), r[1].(string)
		ref, err := db.ResolveSession(ctx, id, platform, "")
		if err != nil {
			t.Fatalf("%s %s: %v", platform, id, err)
		}
		got := []string{ref.Title, ref.Project, str(ref.FirstTS), str(ref.LastTS)}
		want := []string{str(r[2]), str(r[3]), str(r[4]), str(r[5])}
		if ref.FirstTS.IsZero() {
			got[2] = ""
		}
		if ref.LastTS.IsZero() {
			got[3] = ""
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %s:\n resolved %q\n view     %q", platform, id, got, want)
		}
		rec, err := db.Recent(ctx, query.RecentOptions{Session: id, Platform: platform, N: 100000, Subagents: true})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := db.SQL(ctx, `SELECT exchange_number, coalesce(agent_id, '') FROM exchanges WHERE platform = ? AND session_id = ? ORDER BY ts, id`, platform, id)
		if err != nil {
			t.Fatal(err)
		}
		var a, b []string
		for _, tr := range rec.Turns {
			a = append(a, fmt.Sprintf("%d/%s", tr.ExchangeNumber, tr.AgentID))
		}
		for _, e := range ex.Rows {
			b = append(b, fmt.Sprintf("%v/%v", e[0], e[1]))
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s %s: recent numbers turns %v, the exchanges view %v", platform, id, a, b)
		}
	}
	t.Logf("%d sessions", len(sessions.Rows))
}

func TestLookupsMatchViews(t *testing.T) { checkLookupsMatchViews(t, fixtureLake) }

func TestCorpusLookupsMatchViews(t *testing.T) { checkLookupsMatchViews(t, corpusLake(t)) }
