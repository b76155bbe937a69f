package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

const (
	sessA = "11111111-1111-4111-8111-111111111111"
	sessB = "22222222-2222-4222-8222-222222222222"
	sessC = "11112222-3333-4444-8555-666666666666"
)

var fixtureLake string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "query-test-")
	if err != nil {
		panic(err)
	}
	if fixtureLake, err = querytest.FixtureLake(context.Background(), dir); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// open opens the fixture lake as pos-query opens it: each lookup defines
// the views it reads, so the tests fail if one reads a view it does not
// ask for.
func open(t *testing.T) *query.DB {
	t.Helper()
	return openDB(t, fixtureLake, query.LazyViews())
}

// openDB opens lake for the rest of the test, which fails if it cannot.
func openDB(t testing.TB, lake string, opts ...query.OpenOption) *query.DB {
	t.Helper()
	db, err := query.Open(context.Background(), lake, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// resolve resolves the session id names in db, for the rest of a test
// that fails if it cannot.
func resolve(t *testing.T, db *query.DB, id string) query.SessionRef {
	t.Helper()
	ref, err := db.ResolveSession(context.Background(), id, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t, err = time.Parse(time.DateOnly, s)
	}
	if err != nil {
		panic(err)
	}
	return t
}

func TestOpenNoLake(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := query.Open(ctx, missing)
	if !errors.Is(err, query.ErrNoLake) || !strings.Contains(err.Error(), "does not exist") ||
		!strings.Contains(err.Error(), "pos-load --lake "+missing) {
		t.Errorf("missing lake: %v", err)
	}
	empty := t.TempDir()
	os.MkdirAll(filepath.Join(empty, "_state"), 0o700)
	_, err = query.Open(ctx, empty)
	if !errors.Is(err, query.ErrNoLake) || !strings.Contains(err.Error(), "no data") ||
		!strings.Contains(err.Error(), "| pos-normalize | pos-scrub | pos-embed --lake "+empty+" | pos-load --lake "+empty) {
		t.Errorf("empty lake: %v", err)
	}
}

// listCase is a case of a table test of a lister: the options it is
// given and the strings the test makes of what it lists.
type listCase[O any] struct {
	name string
	opt  O
	want []string
}

// checkLists calls list with each case's options and compares the
// strings strs makes of the result with the case's.
func checkLists[O, R any](t *testing.T, cases []listCase[O], list func(O) (R, error), strs func(R) []string) {
	t.Helper()
	for _, tc := range cases {
		r, err := list(tc.opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := strs(r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// stringsOf returns f of each of xs, in order; nil for none.
func stringsOf[T any](xs []T, f func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func ids(ss []query.Session) []string {
	return stringsOf(ss, func(s query.Session) string { return s.SessionID })
}

func TestSessions(t *testing.T) {
	db, ctx := open(t), context.Background()
	ss, err := db.Sessions(ctx, query.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(ss), []string{sessB, sessA, sessC}; !reflect.DeepEqual(got, want) {
		t.Fatalf("order: got %v, want %v", got, want)
	}
	a := ss[1]
	want := query.Session{
		SessionHead: query.SessionHead{LastTS: day("2026-03-02T09:00:05Z"), FirstTS: day("2026-03-01T10:00:00Z"),
			Platform: "claude_code", SessionID: sessA, Title: "Add a retry to the fetcher", Project: "/home/dev/alpha"},
		Exchanges: 4, Messages: 18, ToolCalls: 4, Subagents: 1, Compactions: 0,
		// The session view sums every message, the <synthetic> one and the
		// subagent's included.
		Tokens:    query.Tokens{Input: 167, Output: 203, CacheCreation: 110, CacheRead: 5550},
		Models:    []string{"claude-haiku-4-5", "claude-opus-4-6"},
		GitBranch: "main", Cwd: "/home/dev/alpha", PullRequests: []string{},
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("session A:\n got %+v\nwant %+v", a, want)
	}
	sessions := func(f query.SessionFilter) ([]query.Session, error) { return db.Sessions(ctx, f) }
	checkLists(t, []listCase[query.SessionFilter]{
		{"platform", query.SessionFilter{Platform: "claude_code"}, []string{sessB, sessA, sessC}},
		{"other platform", query.SessionFilter{Platform: "codex"}, nil},
		{"project", query.SessionFilter{Project: "beta"}, []string{sessB}},
		{"since", query.SessionFilter{Since: day("2026-03-02")}, []string{sessB, sessA}},
		{"until", query.SessionFilter{Until: day("2026-03-01")}, []string{sessC}},
		{"window", query.SessionFilter{Since: day("2026-03-01T12:00:00Z"), Until: day("2026-03-03")}, []string{sessA}},
		{"limit", query.SessionFilter{Limit: 1}, []string{sessB}},
		{"quote in value", query.SessionFilter{Project: "' OR 1=1 --"}, nil},
	}, sessions, ids)
	var ae *query.ArgError
	if _, err := db.Sessions(ctx, query.SessionFilter{Since: day("2026-03-02"), Until: day("2026-03-01")}); !errors.As(err, &ae) {
		t.Errorf("reversed window: %v", err)
	}
}

func TestResolveSession(t *testing.T) {
	db, ctx := open(t), context.Background()
	for _, tc := range []struct {
		id, platform, project string
		want                  string
		err                   string
	}{
		{id: sessA, want: sessA},
		{id: "11111111", want: sessA},
		{id: "2", want: sessB},
		{id: "", want: sessB},
		{id: "", project: "alpha", want: sessA},
		{id: "1111", err: `session "1111" is ambiguous: it matches ` + sessA + ` (claude_code, last active 2026-03-02 09:00), ` + sessC + ` (claude_code, last active 2026-02-27 08:00)`},
		{id: "9", err: `no session has an id starting with "9"`},
		{id: "2", platform: "codex", err: `no session on platform codex has an id starting with "2"`},
		{id: "", project: "gamma", err: "no session matches the platform and project given"},
	} {
		ref, err := db.ResolveSession(ctx, tc.id, tc.platform, tc.project)
		if tc.err != "" {
			var ae *query.ArgError
			if !errors.As(err, &ae) || err.Error() != tc.err {
				t.Errorf("%q: got error %v, want %s", tc.id, err, tc.err)
			}
			continue
		}
		if err != nil || ref.SessionID != tc.want {
			t.Errorf("%q: got %q, %v; want %s", tc.id, ref.SessionID, err, tc.want)
		}
	}
	ref, err := db.ResolveSession(ctx, "2222", "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := query.SessionRef{Platform: "claude_code", SessionID: sessB, Title: "Explain the build", Project: "/home/dev/beta",
		FirstTS: day("2026-03-03T12:00:00Z"), LastTS: day("2026-03-03T12:00:03Z")}
	if ref != want {
		t.Errorf("got %+v, want %+v", ref, want)
	}
}

func prompts(turns []query.Turn) []string {
	return stringsOf(turns, func(t query.Turn) string {
		return strconv.FormatInt(t.ExchangeNumber, 10) + t.AgentID + ":" + t.Prompt
	})
}

func TestRecent(t *testing.T) {
	db, ctx := open(t), context.Background()
	r, err := db.Recent(ctx, query.RecentOptions{Session: "11111111", N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Session.SessionID != sessA || r.Session.Title != "Add a retry to the fetcher" {
		t.Errorf("session: %+v", r.Session)
	}
	if got, want := prompts(r.Turns), []string{"3:Is it done?", "4:Ship it"}; !reflect.DeepEqual(got, want) {
		t.Errorf("last 2: got %q, want %q", got, want)
	}
	last := r.Turns[1]
	wantLast := query.Turn{
		ExchangeNumber: 4, TS: day("2026-03-02T09:00:00Z"), TSEnd: last.TSEnd, Platform: "claude_code", SessionID: sessA,
		Prompt: "Ship it", Response: "Done: tagged v1.2.0.", Model: "claude-opus-4-6", Tools: []string{},
		Tokens: query.Tokens{Input: 3, Output: 4, CacheRead: 300},
	}
	if !reflect.DeepEqual(last, wantLast) {
		t.Errorf("turn 4:\n got %+v\nwant %+v", last, wantLast)
	}

	// The default: the latest session, 10 turns.
	r, err = db.Recent(ctx, query.RecentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Session.SessionID != sessB || len(r.Turns) != 1 {
		t.Errorf("default: %s, %d turns", r.Session.SessionID, len(r.Turns))
	}

	r, err = db.Recent(ctx, query.RecentOptions{Session: sessA, Subagents: true, IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1:Add a retry to the fetcher\nwith exponential backoff", "1a1b2c3d:Find the callers of Get", "2:Now add tests", "3:Is it done?", "4:Ship it"}
	if got := prompts(r.Turns); !reflect.DeepEqual(got, want) {
		t.Errorf("with subagents: got %q, want %q", got, want)
	}
	first := r.Turns[0]
	if !reflect.DeepEqual(first.Tools, []string{"Read", "Task"}) || first.ToolCount != 2 {
		t.Errorf("turn 1 tools: %v (%d)", first.Tools, first.ToolCount)
	}
	wantCalls := []query.ToolCall{
		{Name: "Read", Input: []byte(`{"file_path":"/home/dev/alpha/fetch.go"}`), Output: "package fetch\n\nfunc Get() {}\n", OutputChars: 29},
		{Name: "Task", Input: first.ToolCalls[1].Input, Output: "Get is called from main.go", OutputChars: 26},
	}
	if !reflect.DeepEqual(first.ToolCalls, wantCalls) {
		t.Errorf("turn 1 calls:\n got %+v\nwant %+v", first.ToolCalls, wantCalls)
	}
	if s := first.ToolCalls[0].String(); s != "Read(/home/dev/alpha/fetch.go)" {
		t.Errorf("call summary %q", s)
	}
	if got := r.Turns[1].ToolCalls; len(got) != 1 || got[0].Name != "Grep" || got[0].Output != "main.go:12: fetch.Get()" {
		t.Errorf("subagent calls: %+v", got)
	}
	bash := r.Turns[2].ToolCalls
	if len(bash) != 1 || !bash[0].IsError || bash[0].String() != "Bash(go test ./...)!" || !strings.Contains(bash[0].Output, "FAIL") {
		t.Errorf("failed call: %+v", bash)
	}
	if len(r.Turns[3].ToolCalls) != 0 || r.Turns[3].ToolCalls == nil {
		t.Errorf("turn 3 calls: %#v", r.Turns[3].ToolCalls)
	}
	tb := r.Table()
	if tb.Index("tool_calls") < 0 || tb.Index("prompt") < 0 {
		t.Errorf("table columns %v", tb.Names())
	}
	r, _ = db.Recent(ctx, query.RecentOptions{Session: sessA})
	if tb := r.Table(); tb.Index("tool_calls") >= 0 || len(tb.Rows) != 4 {
		t.Errorf("table without tools: %v, %d rows", tb.Names(), len(tb.Rows))
	}

	var ae *query.ArgError
	if _, err := db.Recent(ctx, query.RecentOptions{Session: "1111"}); !errors.As(err, &ae) || !strings.Contains(err.Error(), sessC) {
		t.Errorf("ambiguous: %v", err)
	}
}

func entries(tl []query.TimelineEntry) []string {
	return stringsOf(tl, func(e query.TimelineEntry) string {
		s := e.TS.Format("01-02T15:04:05") + " " + e.SessionID[:4] + " "
		if e.ExchangeNumber == nil {
			return s + "start " + e.Title
		}
		return s + strconv.FormatInt(*e.ExchangeNumber, 10) + e.AgentID + " " + e.Prompt
	})
}

func TestTimeline(t *testing.T) {
	db, ctx := open(t), context.Background()
	timeline := func(opt query.TimelineOptions) ([]query.TimelineEntry, error) { return db.Timeline(ctx, opt) }
	checkLists(t, []listCase[query.TimelineOptions]{
		{"window", query.TimelineOptions{Since: day("2026-03-01"), Until: day("2026-03-03")}, []string{
			"03-01T10:00:00 1111 start Add a retry to the fetcher",
			"03-01T10:00:00 1111 1 Add a retry to the fetcher",
			"03-01T10:05:00 1111 2 Now add tests",
			"03-01T23:59:58 1111 3 Is it done?",
			"03-02T09:00:00 1111 4 Ship it",
		}},
		{"limit keeps the latest", query.TimelineOptions{Since: day("2026-03-01"), Until: day("2026-03-03"), Limit: 2}, []string{
			"03-01T23:59:58 1111 3 Is it done?",
			"03-02T09:00:00 1111 4 Ship it",
		}},
		{"since mid-session", query.TimelineOptions{Since: day("2026-03-02")}, []string{
			"03-02T09:00:00 1111 4 Ship it",
			"03-03T12:00:00 2222 start Explain the build",
			"03-03T12:00:00 2222 1 Explain the build",
		}},
		{"project", query.TimelineOptions{Project: "beta"}, []string{
			"03-03T12:00:00 2222 start Explain the build",
			"03-03T12:00:00 2222 1 Explain the build",
		}},
		{"session", query.TimelineOptions{Session: "11112"}, []string{
			"02-27T08:00:00 1111 start What does the fetcher do?",
			"02-27T08:00:00 1111 1 What does the fetcher do?",
		}},
		{"subagents", query.TimelineOptions{Since: day("2026-03-01T10:00:01Z"), Until: day("2026-03-01T10:01:00Z"), Subagents: true}, []string{
			"03-01T10:00:06 1111 1a1b2c3d Find the callers of Get",
		}},
		{"platform", query.TimelineOptions{Platform: "cursor"}, nil},
	}, timeline, entries)
	tl, err := db.Timeline(ctx, query.TimelineOptions{Session: "2"})
	if err != nil {
		t.Fatal(err)
	}
	want := query.TimelineEntry{TS: day("2026-03-03T12:00:00Z"), Kind: query.KindExchange, Platform: "claude_code",
		Project: "/home/dev/beta", SessionID: sessB, Title: "Explain the build", ExchangeNumber: tl[1].ExchangeNumber,
		Prompt: "Explain the build", Tokens: query.Tokens{Input: 100, Output: 200, CacheCreation: 50}}
	if len(tl) != 2 || tl[0].Kind != query.KindSessionStart || !reflect.DeepEqual(tl[1], want) || *tl[1].ExchangeNumber != 1 {
		t.Errorf("session B: %+v", tl)
	}
}

func statsRows(r *query.StatsResult) []string {
	return stringsOf(r.Rows, func(row query.StatsRow) string {
		return strings.Join(row.Key, "|") + " " + strconv.FormatInt(row.Messages, 10) + " " +
			strconv.FormatInt(row.Sessions, 10) + " " +
			strconv.FormatInt(row.Input, 10) + "/" + strconv.FormatInt(row.Output, 10) + "/" +
			strconv.FormatInt(row.CacheCreation, 10) + "/" + strconv.FormatInt(row.CacheRead, 10)
	})
}

func TestStats(t *testing.T) {
	db, ctx := open(t), context.Background()
	stats := func(opt query.StatsOptions) (*query.StatsResult, error) { return db.Stats(ctx, opt) }
	checkLists(t, []listCase[query.StatsOptions]{
		{"day,model", query.StatsOptions{By: []string{"day", "model"}}, []string{
			"2026-02-27|claude-sonnet-4-5 1 1 1000/2000/3000/4000",
			"2026-03-01|claude-haiku-4-5 4 1 122/69/10/1150",
			"2026-03-01|claude-opus-4-6 3 1 42/130/100/4100",
			"2026-03-02|claude-opus-4-6 1 1 3/4/0/300",
			"2026-03-03|claude-opus-4-6 1 1 100/200/50/0",
		}},
		{"model,day", query.StatsOptions{By: []string{"model", "day"}, Since: day("2026-03-02")}, []string{
			"claude-opus-4-6|2026-03-02 1 1 3/4/0/300",
			"claude-opus-4-6|2026-03-03 1 1 100/200/50/0",
		}},
		{"totals", query.StatsOptions{}, []string{" 10 3 1267/2403/3160/9550"}},
		{"ISO week", query.StatsOptions{By: []string{"week"}, WeekStart: time.Monday}, []string{
			"2026-02-23 8 2 1164/2199/3110/9250", // 02-27 is a Friday, 03-01 a Sunday
			"2026-03-02 2 2 103/204/50/300",
		}},
		{"week from Sunday, as ccusage", query.StatsOptions{By: []string{"week"}}, []string{
			"2026-02-22 1 1 1000/2000/3000/4000",
			"2026-03-01 9 2 267/403/160/5550",
		}},
		{"month", query.StatsOptions{By: []string{"month"}}, []string{
			"2026-02 1 1 1000/2000/3000/4000",
			"2026-03 9 2 267/403/160/5550",
		}},
		{"project,platform", query.StatsOptions{By: []string{"project", "platform"}}, []string{
			"/home/dev/alpha|claude_code 9 2 1167/2203/3110/9550",
			"/home/dev/beta|claude_code 1 1 100/200/50/0",
		}},
		{"session", query.StatsOptions{By: []string{"session"}, Project: "alpha", Until: day("2026-03-01T10:01:00Z")}, []string{
			sessA + " 5 1 152/175/110/4150",
			sessC + " 1 1 1000/2000/3000/4000",
		}},
		{"platform filter", query.StatsOptions{By: []string{"day"}, Platform: "codex"}, nil},
		{"injection", query.StatsOptions{Project: "x' OR '1'='1"}, []string{" 0 0 0/0/0/0"}},
		{"limit", query.StatsOptions{By: []string{"day"}, Limit: 1}, []string{"2026-02-27 1 1 1000/2000/3000/4000"}},
	}, stats, statsRows)
	for _, by := range [][]string{{"hour"}, {"day", "day"}, {"day; DROP TABLE x"}} {
		var ae *query.ArgError
		if _, err := db.Stats(ctx, query.StatsOptions{By: by}); !errors.As(err, &ae) {
			t.Errorf("by %q: %v", by, err)
		}
	}
	r, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	tb := r.Table()
	if got, want := tb.Names(), []string{"day", "model", "messages", "sessions", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
		"cache_creation_1h_tokens", "cost", "input_cost", "output_cost", "cache_creation_cost", "cache_read_cost", "unpriced_messages"}; !reflect.DeepEqual(got, want) {
		t.Errorf("columns %v", got)
	}
	if got := tb.Rows[0][:8]; !reflect.DeepEqual(got, []any{"2026-02-27", "claude-sonnet-4-5", int64(1), int64(1), int64(1000), int64(2000), int64(3000), int64(4000)}) {
		t.Errorf("row 0: %#v", got)
	}
}

func TestParseBy(t *testing.T) {
	by, err := query.ParseBy(" Day, model ,")
	if err != nil || !reflect.DeepEqual(by, []string{"day", "model"}) {
		t.Errorf("got %q, %v", by, err)
	}
	if by, err := query.ParseBy(""); err != nil || by != nil {
		t.Errorf("empty: %q, %v", by, err)
	}
	if _, err := query.ParseBy("day,hour"); err == nil || !strings.Contains(err.Error(), `cannot group by "hour"`) {
		t.Errorf("hour: %v", err)
	}
}

var filesRead = regexp.MustCompile(`Total Files Read: (\d+)`)

// explainFiles runs EXPLAIN ANALYZE and returns how many files the scans
// read.
func explainFiles(t *testing.T, db *query.DB, q string, args ...any) int {
	t.Helper()
	tb, err := db.SQL(context.Background(), "EXPLAIN ANALYZE "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range tb.Rows {
		for _, m := range filesRead.FindAllStringSubmatch(row[len(row)-1].(string), -1) {
			k, _ := strconv.Atoi(m[1])
			n += k
		}
	}
	return n
}

func TestStatsPrunesPartitions(t *testing.T) {
	db := open(t)
	all := explainFiles(t, db, query.StatsSQL(query.StatsOptions{By: []string{"day"}}))
	q, args := query.StatsSQLArgs(query.StatsOptions{By: []string{"day"}, Since: day("2026-03-02T10:00:00Z")})
	since := explainFiles(t, db, q, args...)
	q, args = query.StatsSQLArgs(query.StatsOptions{By: []string{"day"}, Platform: "codex"})
	platform := explainFiles(t, db, q, args...)
	// messages has files for 4 days: 02-27, 03-01, 03-02, 03-03.
	if all != 4 || since != 2 || platform != 0 {
		t.Errorf("files read: all %d (want 4), since 03-02 %d (want 2), other platform %d (want 0)", all, since, platform)
	}
}

func TestSQL(t *testing.T) {
	db, ctx := open(t), context.Background()
	tb, err := db.SQL(ctx, `SELECT count(*) AS n, ? AS p, DATE '2026-03-01' AS d, TIMESTAMPTZ '2026-03-01 10:00:00+02' AS ts,
  [1, 2] AS l, 1.50 AS dec, NULL AS z FROM messages WHERE session_id = ?`, "x", sessB)
	if err != nil {
		t.Fatal(err)
	}
	want := &query.Table{
		Columns: []query.Column{{"n", "BIGINT"}, {"p", "VARCHAR"}, {"d", "DATE"}, {"ts", "TIMESTAMPTZ"},
			{"l", "INTEGER[]"}, {"dec", "DECIMAL(3,2)"}, {"z", "INTEGER"}},
		Rows: [][]any{{int64(2), "x", "2026-03-01", day("2026-03-01T08:00:00Z"), []any{int64(1), int64(2)}, json.Number("1.50"), nil}},
	}
	if !reflect.DeepEqual(tb, want) {
		t.Errorf("got  %#v\nwant %#v", tb, want)
	}
	// Integers of every width come out as int64.
	tb, err = db.SQL(ctx, `SELECT -1::TINYINT, -2::SMALLINT, -3::INTEGER, 255::UTINYINT, 65535::USMALLINT, 4294967295::UINTEGER`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tb.Rows, [][]any{{int64(-1), int64(-2), int64(-3), int64(255), int64(65535), int64(4294967295)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("small integers: got %#v, want %#v", got, want)
	}
	for _, v := range []string{"raw", "messages", "exchanges", "sessions", "documents", "other"} {
		if _, err := db.SQL(ctx, "SELECT * FROM "+v+" LIMIT 1"); err != nil {
			t.Errorf("view %s: %v", v, err)
		}
	}
	_, err = db.SQL(ctx, "SELEC 1")
	var se *query.SQLError
	if !errors.As(err, &se) || err.Error() != `Parser Error: syntax error at or near "SELEC"` {
		t.Errorf("syntax error: %q", err)
	}
	_, err = db.SQL(ctx, "SELECT * FROM nosuch")
	if !errors.As(err, &se) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "Catalog Error: Table with name nosuch does not exist!") {
		t.Errorf("catalog error: %q", err)
	}
}

func TestContextCanceled(t *testing.T) {
	db := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Stats(ctx, query.StatsOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

func TestCapabilities(t *testing.T) {
	caps, err := open(t).Capabilities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var cc *query.PlatformCapabilities
	for i := range caps {
		if caps[i].Platform == "claude_code" {
			cc = &caps[i]
		}
	}
	// Declared by the adapter, and measured in the lake: every fixture
	// message has an exact time; the <synthetic> reply has no tokens.
	if cc == nil || cc.Tokens != "yes" || cc.Messages == 0 || cc.Sessions != 3 || cc.ExactTimes != 100 ||
		cc.WithTokens <= 0 || cc.WithTokens >= 100 || len(cc.Limitations) == 0 {
		t.Fatalf("claude_code: %+v", cc)
	}
}

func TestFilesAndDecisions(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	fs, err := db.Files(ctx, query.FilesOptions{Path: "fetch.go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].SessionID != sessA || len(fs[0].Paths) != 1 || fs[0].Paths[0] != "/home/dev/alpha/fetch.go" || fs[0].Refs == 0 {
		t.Fatalf("files: %+v", fs)
	}
	if fs, _ := db.Files(ctx, query.FilesOptions{Path: "no/such/file.go"}); len(fs) != 0 {
		t.Fatalf("unknown path: %+v", fs)
	}
	if _, err := db.Files(ctx, query.FilesOptions{}); err == nil {
		t.Fatal("no path accepted")
	}
	ds, err := db.Decisions(ctx, query.DecisionsOptions{MinConfidence: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Confidence < 0.5 || d.Text == "" || d.SessionID == "" {
			t.Fatalf("decision %+v", d)
		}
	}
}
