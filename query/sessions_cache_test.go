package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
)

// cacheAndView opens the lake twice as pos-query does: once answering
// from the session cache, once from the views alone.
func cacheAndView(t *testing.T, lake string) (cached, view *query.DB) {
	t.Helper()
	for _, db := range []**query.DB{&cached, &view} {
		var err error
		if *db, err = query.Open(context.Background(), lake, query.LazyViews()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*db).Close() })
	}
	query.NoSessionCache(view)
	return cached, view
}

// checkSessionCache fails unless Sessions answered from the session cache
// gives what it gives from the sessions view, for several filters, and the
// view's query over the cache's parts has every column of the view.
func checkSessionCache(t *testing.T, lake string) {
	t.Helper()
	ctx := context.Background()
	cached, view := cacheAndView(t, lake)
	all, err := view.Sessions(ctx, query.SessionFilter{})
	if err != nil || len(all) == 0 {
		t.Fatalf("no sessions: %v", err)
	}
	// same fails the test unless a lookup found the same from the cache
	// as from the views, without error.
	same := func(what string, got, want any, err1, err2 error) {
		t.Helper()
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", what, err1, err2)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: from the cache\n%+v\nfrom the view\n%+v", what, got, want)
		}
	}
	mid := all[len(all)/2].LastTS
	for _, f := range []query.SessionFilter{
		{}, {Limit: 3}, {Platform: all[0].Platform}, {Project: "a"}, {Since: mid}, {Until: mid},
	} {
		got, e1 := cached.Sessions(ctx, f)
		want, e2 := view.Sessions(ctx, f)
		same(fmt.Sprintf("%+v", f), got, want, e1, e2)
	}
	for _, o := range []query.TimelineOptions{{}, {Limit: 5}, {Limit: 1}, {Limit: 40, Subagents: true}, {Limit: 12, Platform: all[0].Platform},
		{Limit: 7, Until: mid}, {Since: mid}, {Subagents: true, Project: "a"}} {
		got, e1 := cached.Timeline(ctx, o)
		want, e2 := view.Timeline(ctx, o)
		same(fmt.Sprintf("timeline %+v", o), got, want, e1, e2)
	}
	// The other lookups that read sessions' titles and figures.
	f1, e1 := cached.Files(ctx, query.FilesOptions{Path: "/"})
	f2, e2 := view.Files(ctx, query.FilesOptions{Path: "/"})
	same("files", f1, f2, e1, e2)
	d1, e1 := cached.Decisions(ctx, query.DecisionsOptions{MinConfidence: 0.01})
	d2, e2 := view.Decisions(ctx, query.DecisionsOptions{MinConfidence: 0.01})
	same("decisions", d1, d2, e1, e2)
	c1, e1 := cached.Capabilities(ctx)
	c2, e2 := view.Capabilities(ctx)
	same("capabilities", c1, c2, e1, e2)
	if len(f1) == 0 || len(c1) == 0 {
		t.Fatalf("files %d, capabilities %d: nothing compared", len(f1), len(c1))
	}
	// One session's lookups read its date partitions only, and find what
	// they find over the whole views.
	for _, ss := range all[:min(len(all), 4)] {
		ref := query.SessionRef{Platform: ss.Platform, SessionID: ss.SessionID}
		if m, e := query.SessionViews(cached, ref); !namesFiles(m) || !namesFiles(e) {
			t.Fatalf("%s: not narrowed to its partitions: %s, %s", ss.SessionID, m, e)
		}
		r1, e1 := cached.Recent(ctx, query.RecentOptions{Session: ss.SessionID, Platform: ss.Platform, N: 1000, Subagents: true})
		r2, e2 := view.Recent(ctx, query.RecentOptions{Session: ss.SessionID, Platform: ss.Platform, N: 1000, Subagents: true})
		same("recent "+ss.SessionID, r1, r2, e1, e2)
		now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, mode := range query.ContextModes {
			ref1, err := cached.ResolveSession(ctx, ss.SessionID, ss.Platform, "")
			if err != nil {
				t.Fatal(err)
			}
			p1, e1 := cached.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref1}, Mode: mode, MaxTokens: 20000, Now: now})
			p2, e2 := view.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref1}, Mode: mode, MaxTokens: 20000, Now: now})
			if e1 != nil || e2 != nil || p1.Markdown() != p2.Markdown() {
				t.Fatalf("context %s %s: %v %v\n%s\n---\n%s", mode, ss.SessionID, e1, e2, p1.Markdown(), p2.Markdown())
			}
		}
	}
	// Every column, both ways (the columns Sessions does not return too).
	dir := filepath.Join(lake, layout.RollupDir)
	m, err := os.ReadFile(filepath.Join(dir, "sessions.json"))
	if err != nil {
		t.Fatalf("no session cache written: %v", err)
	}
	parts, meta := cacheFiles(t, m)
	fromParts := rollup.SessionsFromPartsSQL("read_parquet('"+filepath.Join(dir, parts)+"')", "read_parquet('"+filepath.Join(dir, meta)+"')")
	for _, q := range []string{
		"SELECT count(*) FROM (SELECT * FROM sessions EXCEPT ALL SELECT * FROM (" + fromParts + "))",
		"SELECT count(*) FROM (SELECT * FROM (" + fromParts + ") EXCEPT ALL SELECT * FROM sessions)",
	} {
		tb, err := view.SQL(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if n := tb.Rows[0][0].(int64); n != 0 {
			t.Fatalf("%d rows differ between the view and the cache: %s", n, q)
		}
	}
}

func cacheFiles(t *testing.T, manifest []byte) (parts, meta string) {
	t.Helper()
	var m struct {
		Parts string `json:"parts_file"`
		Meta  string `json:"meta_file"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil || m.Parts == "" || m.Meta == "" {
		t.Fatalf("session cache manifest %s: %v", manifest, err)
	}
	return m.Parts, m.Meta
}

func TestSessionCacheCorpus(t *testing.T) { checkSessionCache(t, corpusLake(t)) }

// After a load that adds a partition and changes another, the cache is
// brought up to date: the changed parts recomputed, the others kept.
func TestSessionCacheFollowsLoads(t *testing.T) {
	ctx := context.Background()
	lake, err := querytest.FixtureLake(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkSessionCache(t, lake)
	manifest := func() []byte {
		b, err := os.ReadFile(filepath.Join(lake, layout.RollupDir, "sessions.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := manifest()

	db, err := query.Open(ctx, lake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	// Kept open across the load: what it keeps of the cache must follow.
	defer db.Close()
	ss, err := db.Sessions(ctx, query.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// The oldest session gets late messages, after every other session.
	var old query.Session
	for _, s := range ss {
		if !s.LastTS.IsZero() {
			old = s
		}
	}
	late := ss[0].LastTS.Add(72 * time.Hour)
	var recs []*schema.Record
	add := func(id, session, role, model string, ts time.Time, project, user string) {
		r := schema.New(schema.KindMessage)
		r.ID, r.Platform, r.SessionID, r.TS = id, old.Platform, session, ts
		r.Role, r.ContentType, r.Text, r.Model, r.Project, r.User = role, schema.ContentText, "more", model, project, user
		r.Usage = &schema.Usage{Input: 5, Output: 7}
		recs = append(recs, r)
	}
	add("late-user", old.SessionID, schema.RoleUser, "", late, "/home/dev/late", "dev")
	add("late-answer", old.SessionID, schema.RoleAssistant, "claude-late", late.Add(time.Minute), "/home/dev/late", "dev")
	// A session without a rollup, over two days: its project is its first
	// message's, its user its last message's.
	add("new-user", "new-session", schema.RoleUser, "", late.Add(time.Hour), "/home/dev/first", "early")
	add("new-user-2", "new-session", schema.RoleUser, "", late.Add(49*time.Hour), "/home/dev/second", "later")
	ex := schema.New(schema.KindExchange)
	ex.ID, ex.Platform, ex.SessionID, ex.TS = "late-exchange", old.Platform, old.SessionID, late
	ex.Exchange = &schema.Exchange{Number: 99, Prompt: "more", PromptID: "late-user", TSEnd: late.Add(time.Minute)}
	recs = append(recs, ex)
	loadRecords(t, lake, recs)
	if kept, err := db.Sessions(ctx, query.SessionFilter{Limit: 1}); err != nil || len(kept) != 1 || kept[0].SessionID != "new-session" {
		t.Fatalf("a DB open before the load: latest session %+v, %v", kept, err)
	}
	checkSessionCache(t, lake)
	if bytes.Equal(before, manifest()) {
		t.Fatal("the session cache was not brought up to date")
	}
	// The session over two partitions, combined from its parts by the
	// cache and by the view alike: fixed values, so that a combine rule
	// both share cannot be wrong in the same way unseen.
	cached, view := cacheAndView(t, lake)
	for name, db := range map[string]*query.DB{"cache": cached, "view": view} {
		got, err := db.Sessions(ctx, query.SessionFilter{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].SessionID != "new-session" || got[0].Project != "/home/dev/first" ||
			got[0].Messages != 2 || !got[0].FirstTS.Equal(late.Add(time.Hour)) || !got[0].LastTS.Equal(late.Add(49*time.Hour)) ||
			got[1].SessionID != old.SessionID || got[1].Messages != old.Messages+2 || got[1].Exchanges != old.Exchanges+1 ||
			got[1].Input != old.Input+10 || got[1].Output != old.Output+14 {
			t.Fatalf("%s: latest sessions after the load: %+v", name, got)
		}
	}

	// The cache's files gone (removed by hand, say) but not its manifest:
	// rebuilt, with the same answers.
	files, _ := filepath.Glob(filepath.Join(lake, layout.RollupDir, "sessions-*.parquet"))
	if len(files) < 2 {
		t.Fatalf("session cache files: %v", files)
	}
	for _, f := range files {
		os.Remove(f)
	}
	checkSessionCache(t, lake)
	again, _ := filepath.Glob(filepath.Join(lake, layout.RollupDir, "sessions-*.parquet"))
	if len(again) != 2 || slices.Contains(files, again[0]) || slices.Contains(files, again[1]) {
		t.Fatalf("session cache not rebuilt: %v", again)
	}
}

// A lake of a hundred days: the timeline's latest entries are read from
// the latest partitions first, and numbered over their sessions' own; it
// must be the view's timeline for every limit (the first cut holds enough
// entries, the second does, neither does).
func TestTimelineLatestPartitions(t *testing.T) {
	ctx := context.Background()
	lake := filepath.Join(t.TempDir(), "lake")
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	var recs []*schema.Record
	for k := range 5 {
		session := fmt.Sprintf("session-%d", k)
		for d := range 20 {
			ts := start.AddDate(0, 0, k*20+d)
			for j, agent := range []string{"", "sub"} {
				if agent != "" && d%3 != 0 {
					continue
				}
				id := fmt.Sprintf("%s-%d-%d", session, d, j)
				m := schema.New(schema.KindMessage)
				m.ID, m.Platform, m.SessionID, m.TS = "m-"+id, claudecode.Name, session, ts
				m.Role, m.ContentType, m.Text = schema.RoleUser, schema.ContentText, "prompt "+id
				ex := schema.New(schema.KindExchange)
				ex.ID, ex.Platform, ex.SessionID, ex.TS, ex.Text = "e-"+id, claudecode.Name, session, ts, "prompt "+id
				ex.Exchange = &schema.Exchange{Prompt: "prompt " + id, PromptID: m.ID, TSEnd: ts.Add(time.Minute)}
				if agent != "" {
					m.Agent = &schema.Agent{ID: agent, Sidechain: true}
					ex.Agent = m.Agent
				}
				recs = append(recs, m, ex)
			}
		}
	}
	loadRecords(t, lake, recs)
	cached, view := cacheAndView(t, lake)
	for _, o := range []query.TimelineOptions{{Limit: 3}, {Limit: 5, Subagents: true}, {Limit: 50}, {Limit: 60, Subagents: true},
		{Limit: 500}, {Limit: 4, Until: start.AddDate(0, 0, 50)}, {Limit: 6, Project: "nowhere"}} {
		got, err := cached.Timeline(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		want, err := view.Timeline(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("timeline %+v: from the latest partitions\n%+v\nfrom the view\n%+v", o, got, want)
		}
		if o.Project == "" && (len(got) == 0 || got[len(got)-1].ExchangeNumber == nil && got[len(got)-1].Kind == query.KindExchange) {
			t.Fatalf("timeline %+v: %+v", o, got)
		}
	}
}

// namesFiles says whether a source reads files it names, not a table's glob.
func namesFiles(src string) bool {
	return strings.Contains(src, "read_parquet(") && !strings.Contains(src, "*.parquet")
}

// loadRecords loads recs into lake in one run, as pos-load would.
func loadRecords(t *testing.T, lake string, recs []*schema.Record) {
	t.Helper()
	if err := querytest.LoadRecords(context.Background(), lake, recs); err != nil {
		t.Fatal(err)
	}
}
