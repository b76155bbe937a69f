package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/pos-lake/pos/query"
)

var now = day("2026-03-10T12:00:00Z")

func sample() *query.Table {
	return &query.Table{
		Columns: []query.Column{{"ts", "TIMESTAMP WITH TIME ZONE"}, {"name", "VARCHAR"}, {"n", "BIGINT"},
			{"tags", "VARCHAR[]"}, {"note", "VARCHAR"}, {"f", "DOUBLE"}},
		Rows: [][]any{
			{day("2026-03-07T12:00:00Z"), "alpha\nbeta", int64(1234567), []string{"x", "y"}, nil, 0.5},
			{day("2026-03-10T10:00:00.25Z"), `a "quoted", <html> & long text that goes on`, int64(-5), []string{}, "日本語のテキスト", math.NaN()},
		},
	}
}

func format(t *testing.T, f query.Format, tb *query.Table, opt query.WriterOptions) string {
	t.Helper()
	var buf bytes.Buffer
	opt.Now = now
	if err := query.Write(&buf, f, tb, opt); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		f    query.Format
		want string
	}{
		{query.FormatJSON, `[
{"ts":"2026-03-07T12:00:00Z","name":"alpha\nbeta","n":1234567,"tags":["x","y"],"note":null,"f":0.5},
{"ts":"2026-03-10T10:00:00.25Z","name":"a \"quoted\", <html> & long text that goes on","n":-5,"tags":[],"note":"日本語のテキスト","f":"NaN"}
]
`},
		{query.FormatNDJSON, `{"ts":"2026-03-07T12:00:00Z","name":"alpha\nbeta","n":1234567,"tags":["x","y"],"note":null,"f":0.5}
{"ts":"2026-03-10T10:00:00.25Z","name":"a \"quoted\", <html> & long text that goes on","n":-5,"tags":[],"note":"日本語のテキスト","f":"NaN"}
`},
		{query.FormatCSV, `ts,name,n,tags,note,f
2026-03-07T12:00:00Z,"alpha
beta",1234567,"[""x"",""y""]",,0.5
2026-03-10T10:00:00.25Z,"a ""quoted"", <html> & long text that goes on",-5,[],日本語のテキスト,NaN
`},
		{query.FormatTable, `TS                             NAME                                                 N  TAGS  NOTE                F
2026-03-07 12:00 (3 days ago)  alpha beta                                   1,234,567  x, y                    0.5
2026-03-10 10:00 (1 hour ago)  a "quoted", <html> & long text that goes on         -5        日本語のテキスト  NaN
`},
	} {
		if got := format(t, tc.f, sample(), query.WriterOptions{}); got != tc.want {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", tc.f, got, tc.want)
		}
	}
}

func TestFormatsParse(t *testing.T) {
	var rows []map[string]any
	if err := json.Unmarshal([]byte(format(t, query.FormatJSON, sample(), query.WriterOptions{})), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("json does not parse: %v", err)
	}
	for i, line := range strings.Split(strings.TrimSuffix(format(t, query.FormatNDJSON, sample(), query.WriterOptions{}), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || !reflect.DeepEqual(m, rows[i]) {
			t.Errorf("ndjson line %d: %v %v", i, m, err)
		}
	}
}

func TestFormatsEmpty(t *testing.T) {
	empty := &query.Table{Columns: []query.Column{{"a", "VARCHAR"}, {"b", "BIGINT"}}}
	for f, want := range map[query.Format]string{
		query.FormatJSON:   "[]\n",
		query.FormatNDJSON: "",
		query.FormatCSV:    "a,b\n",
		query.FormatTable:  "A  B\n",
	} {
		if got := format(t, f, empty, query.WriterOptions{}); got != want {
			t.Errorf("%s: got %q, want %q", f, got, want)
		}
	}
}

func TestTableWidth(t *testing.T) {
	for _, width := range []int{30, 50, 60, 80} {
		got := format(t, query.FormatTable, sample(), query.WriterOptions{Width: width, Flexible: []string{"name", "note"}})
		// Numbers and times are never cut: the table is wider than asked
		// only when they and the other columns at their narrowest are.
		const narrowest = 29 + 8 + 9 + 4 + 8 + 3 + 2*5
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if w := runewidth.StringWidth(line); w > max(width, narrowest) {
				t.Errorf("width %d: line is %d wide: %q", width, w, line)
			}
		}
		if !strings.Contains(got, "…") {
			t.Errorf("width %d: nothing cut:\n%s", width, got)
		}
		for _, whole := range []string{"1,234,567", "2026-03-07 12:00 (3 days ago)", "2026-03-10 10:00 (1 hour ago)", "NaN"} {
			if !strings.Contains(got, whole) {
				t.Errorf("width %d: %q was cut:\n%s", width, whole, got)
			}
		}
	}
	got := format(t, query.FormatTable, sample(), query.WriterOptions{Width: 80, Flexible: []string{"name", "note"}})
	want := `TS                             NAME                   N  TAGS  NOTE            F
2026-03-07 12:00 (3 days ago)  alpha beta     1,234,567  x, y                0.5
2026-03-10 10:00 (1 hour ago)  a "quoted", …         -5        日本語のテ…   NaN
`
	if got != want {
		t.Errorf("width 80:\n got:\n%s\nwant:\n%s", got, want)
	}
}

// A table shows a time with a zone as the date and time in the zone of
// Now, then how long ago it was; a DATE as its date, whatever the zone.
// json, ndjson and csv give RFC 3339 in UTC, or with the offset of
// TimesIn.
func TestFormatsTimeZone(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no zoneinfo:", err)
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no zoneinfo:", err)
	}
	tb := &query.Table{Columns: []query.Column{{"ts", "TIMESTAMP WITH TIME ZONE"}, {"d", "DATE"}},
		Rows: [][]any{{day("2026-03-07T20:30:00Z"), day("2026-03-07T00:00:00Z")}}}
	for _, tc := range []struct {
		f    query.Format
		opt  query.WriterOptions
		want string
	}{
		{query.FormatTable, query.WriterOptions{Now: now.In(tokyo)}, "TS                             D\n2026-03-08 05:30 (2 days ago)  2026-03-07\n"},
		{query.FormatTable, query.WriterOptions{Now: now.In(la)}, "TS                             D\n2026-03-07 12:30 (2 days ago)  2026-03-07\n"},
		{query.FormatNDJSON, query.WriterOptions{Now: now.In(tokyo)}, `{"ts":"2026-03-07T20:30:00Z","d":"2026-03-07T00:00:00Z"}` + "\n"},
		{query.FormatNDJSON, query.WriterOptions{Now: now, TimesIn: tokyo}, `{"ts":"2026-03-08T05:30:00+09:00","d":"2026-03-07T09:00:00+09:00"}` + "\n"},
		{query.FormatCSV, query.WriterOptions{Now: now, TimesIn: la}, "ts,d\n2026-03-07T12:30:00-08:00,2026-03-06T16:00:00-08:00\n"},
	} {
		var buf bytes.Buffer
		if err := query.Write(&buf, tc.f, tb, tc.opt); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tc.want {
			t.Errorf("%s in %v/%v:\n got %q\nwant %q", tc.f, tc.opt.Now.Location(), tc.opt.TimesIn, got, tc.want)
		}
	}
}

// A header given as "long|short" is long while the table fits whole, and
// short when something would be cut.
func TestTableShortHeaders(t *testing.T) {
	tb := &query.Table{
		Columns: []query.Column{{"title", "VARCHAR"}, {"input tokens|in", "BIGINT"}, {"output tokens|out", "BIGINT"}},
		Rows:    [][]any{{"a title long enough to need cutting somewhere", int64(12), int64(3456)}},
	}
	wide := format(t, query.FormatTable, tb, query.WriterOptions{Width: 100, Flexible: []string{"title"}})
	if want := "TITLE                                          INPUT TOKENS  OUTPUT TOKENS\n"; !strings.HasPrefix(wide, want) {
		t.Errorf("width 100:\n%s", wide)
	}
	// 60 columns: the long headers would cut the title; short, it is whole.
	mid := format(t, query.FormatTable, tb, query.WriterOptions{Width: 60, Flexible: []string{"title"}})
	if want := "TITLE                                          IN    OUT\n"; !strings.HasPrefix(mid, want) || !strings.Contains(mid, "cutting somewhere  12") {
		t.Errorf("width 60:\n%s", mid)
	}
	// 40 columns: the long headers would leave the title 11; short, 29.
	narrow := format(t, query.FormatTable, tb, query.WriterOptions{Width: 40, Flexible: []string{"title"}})
	want := "TITLE                          IN    OUT\na title long enough to need …  12  3,456\n"
	if narrow != want {
		t.Errorf("width 40:\n got:\n%s\nwant:\n%s", narrow, want)
	}
	// Other formats name the column as given.
	if csv := format(t, query.FormatCSV, tb, query.WriterOptions{}); !strings.HasPrefix(csv, "title,input tokens|in,") {
		t.Errorf("csv: %s", csv)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range query.Formats {
		if got, err := query.ParseFormat(string(f)); got != f || err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := query.ParseFormat("yaml"); err == nil {
		t.Error("yaml accepted")
	}
}

type inner struct {
	A int64 `json:"a"`
	B int64 `json:"b"`
}

type item struct {
	When  time.Time `json:"when"`
	Name  string    `json:"name"`
	Num   *int64    `json:"num"`
	List  []string  `json:"list"`
	Skip  string    `json:"-"`
	plain string
	inner
}

func TestTableOf(t *testing.T) {
	one := int64(1)
	tb := query.TableOf([]item{
		{When: day("2026-03-01T00:00:00Z"), Name: "x", Num: &one, List: []string{"a"}, inner: inner{1, 2}},
		{Name: "y"},
	})
	want := &query.Table{
		Columns: []query.Column{{"when", "TIMESTAMP WITH TIME ZONE"}, {"name", "VARCHAR"}, {"num", "BIGINT"}, {"list", "VARCHAR[]"}},
		Rows: [][]any{
			{day("2026-03-01T00:00:00Z"), "x", int64(1), []string{"a"}},
			{nil, "y", nil, []string{}},
		},
	}
	// inner is unexported: its fields are not promoted into the table.
	if !reflect.DeepEqual(tb, want) {
		t.Errorf("got  %#v\nwant %#v", tb, want)
	}
	if got := tb.Select("name", "nope", "when").Names(); !reflect.DeepEqual(got, []string{"name", "when"}) {
		t.Errorf("select: %v", got)
	}
	if got := tb.Drop("list").Names(); !reflect.DeepEqual(got, []string{"when", "name", "num"}) {
		t.Errorf("drop: %v", got)
	}
}

func TestTableOfEmbedded(t *testing.T) {
	tb := query.TableOf([]query.StatsRow{{Key: []string{"k"}, Messages: 2, Tokens: query.Tokens{Input: 3}}})
	if got, want := tb.Names(), []string{"key", "messages", "sessions", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
		"cache_creation_1h_tokens", "cost", "input_cost", "output_cost", "cache_creation_cost", "cache_read_cost", "unpriced_messages"}; !reflect.DeepEqual(got, want) {
		t.Errorf("columns %v", got)
	}
}

// The lookups' tables print in every format.
func TestLookupTables(t *testing.T) {
	db, ctx := open(t), context.Background()
	ss, err := db.Sessions(ctx, query.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Recent(ctx, query.RecentOptions{Session: sessA, IncludeTools: true})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := db.Timeline(ctx, query.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Stats(ctx, query.StatsOptions{By: []string{"day", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, tb := range map[string]*query.Table{
		"sessions": query.TableOf(ss), "recent": r.Table(), "timeline": query.TableOf(tl), "stats": st.Table(),
	} {
		var rows []map[string]any
		if err := json.Unmarshal([]byte(format(t, query.FormatJSON, tb, query.WriterOptions{})), &rows); err != nil {
			t.Errorf("%s json: %v", name, err)
		}
		if len(rows) != len(tb.Rows) || len(rows) == 0 {
			t.Errorf("%s: %d json rows for %d", name, len(rows), len(tb.Rows))
		}
		if csv := format(t, query.FormatCSV, tb, query.WriterOptions{}); !strings.HasPrefix(csv, strings.Join(tb.Names(), ",")+"\n") {
			t.Errorf("%s csv header: %q", name, csv[:min(len(csv), 80)])
		}
		if table := format(t, query.FormatTable, tb, query.WriterOptions{}); !strings.Contains(table, "ago") && name != "stats" {
			t.Errorf("%s table has no relative time:\n%s", name, table)
		}
	}
	var turns []map[string]any
	json.Unmarshal([]byte(format(t, query.FormatJSON, r.Table(), query.WriterOptions{})), &turns)
	calls, _ := turns[0]["tool_calls"].([]any)
	if len(calls) != 2 {
		t.Fatalf("tool_calls in json: %v", turns[0]["tool_calls"])
	}
	if c := calls[0].(map[string]any); c["name"] != "Read" || c["input"].(map[string]any)["file_path"] != "/home/dev/alpha/fetch.go" {
		t.Errorf("tool call json: %v", c)
	}
	if turns[0]["ts"] != "2026-03-01T10:00:00Z" {
		t.Errorf("ts in json: %v", turns[0]["ts"])
	}
	table := format(t, query.FormatTable, st.Table(), query.WriterOptions{})
	if !strings.Contains(table, "2026-02-27  claude-sonnet-4-5         1         1         1,000") {
		t.Errorf("stats table:\n%s", table)
	}
}

// When a table does not fit, ids are shortened to the prefixes that tell
// them apart (at least 8, no ellipsis: what is shown can be passed back)
// and paths keep their end, cut at a separator.
func TestTableCuts(t *testing.T) {
	tb := &query.Table{
		Columns: []query.Column{{"session", "VARCHAR"}, {"project", "VARCHAR"}, {"title", "VARCHAR"}},
		Rows: [][]any{
			{"4d5611e5-241a-4621-9e0f-1b2c3d4e5f60", "/home/someone/src/github.com/acme/widgets", "a title that is long enough to be cut"},
			{"4d5611e5-2f00-4000-8000-000000000000", "/home/someone/src/pos", "short"},
			{"0c02a253-1111-4222-8333-944444444444", "/srv/x", "another title"},
		},
	}
	wide := format(t, query.FormatTable, tb, query.WriterOptions{Width: 200, Flexible: []string{"title"}})
	for _, whole := range []string{"4d5611e5-241a-4621-9e0f-1b2c3d4e5f60", "/home/someone/src/github.com/acme/widgets"} {
		if !strings.Contains(wide, whole) {
			t.Errorf("width 200: %q cut:\n%s", whole, wide)
		}
	}
	got := format(t, query.FormatTable, tb, query.WriterOptions{Width: 60, Flexible: []string{"title", "project"}})
	// The first two ids share 10 characters: 11 tell them apart.
	want := `SESSION      PROJECT                TITLE
4d5611e5-24  …/acme/widgets         a title that is long en…
4d5611e5-2f  /home/someone/src/pos  short
0c02a253-11  /srv/x                 another title
`
	if got != want {
		t.Errorf("width 60:\n got:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if w := runewidth.StringWidth(line); w > 60 {
			t.Errorf("line is %d wide: %q", w, line)
		}
	}
	// 40 columns: the paths' tails at a separator are 9 wide, not the 13
	// their column was capped at; the title gets the rest.
	got = format(t, query.FormatTable, tb, query.WriterOptions{Width: 40, Flexible: []string{"title", "project"}})
	want = `SESSION      PROJECT    TITLE
4d5611e5-24  …/widgets  a title that is…
4d5611e5-2f  …/src/pos  short
0c02a253-11  /srv/x     another title
`
	if got != want {
		t.Errorf("width 40:\n got:\n%s\nwant:\n%s", got, want)
	}
	// A column named like ids that holds text is cut as text.
	text := &query.Table{
		Columns: []query.Column{{"id", "VARCHAR"}, {"title", "VARCHAR"}},
		Rows:    [][]any{{"not an id but words", "a title long enough to be cut somewhere"}},
	}
	if got := format(t, query.FormatTable, text, query.WriterOptions{Width: 30}); !strings.Contains(got, "…") || strings.Contains(got, "not an id but words ") {
		t.Errorf("text id column:\n%s", got)
	}
}

// While a flexible column would be cut under 24 columns, the optional
// columns are left out in their order, and only as many as that takes.
func TestTableOptional(t *testing.T) {
	tb := func() *query.Table {
		return &query.Table{
			Columns: []query.Column{{"model", "VARCHAR"}, {"messages|msgs", "BIGINT"}, {"sessions|sess", "BIGINT"}, {"cost", "DOUBLE"}},
			Rows:    [][]any{{"anthropic/claude-sonnet-4-20250514", int64(1234), int64(5), 0.25}},
		}
	}
	for _, tc := range []struct {
		width   int
		want    string
		dropped []string
	}{
		{80, "MODEL                               MESSAGES  SESSIONS  COST\nanthropic/claude-sonnet-4-20250514     1,234         5  0.25\n", nil},
		// The short headers leave the model 24: nothing goes.
		{43, "MODEL                      MSGS  SESS  COST\nanthropic/claude-sonnet…  1,234     5  0.25\n", nil},
		// 23 for the model: the sessions go, which is enough.
		{42, "MODEL                           MSGS  COST\nanthropic/claude-sonnet-4-20…  1,234  0.25\n", []string{"sessions|sess"}},
		// Both go, and the model is still cut: nothing else may go.
		{20, "MODEL           COST\nanthropic/cla…  0.25\n", []string{"sessions|sess", "messages|msgs"}},
	} {
		var buf bytes.Buffer
		w := query.NewWriter(&buf, query.FormatTable, query.WriterOptions{Width: tc.width, Now: now, Flexible: []string{"model"},
			Optional: []string{"sessions|sess", "messages|msgs", "no such column"}})
		if err := tb().Write(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("width %d:\n got:\n%s\nwant:\n%s", tc.width, buf.String(), tc.want)
		}
		if !reflect.DeepEqual(w.Dropped(), tc.dropped) {
			t.Errorf("width %d: dropped %q, want %q", tc.width, w.Dropped(), tc.dropped)
		}
	}
	// Numbers that would leave the table wider than the width give way
	// too, though no text column is cut under 24.
	nums := &query.Table{
		Columns: []query.Column{{"platform", "VARCHAR"}, {"messages", "BIGINT"}, {"share %", "DOUBLE"}, {"full %", "DOUBLE"}},
		Rows:    [][]any{{"claude_code", int64(123456), 96.25, 100.0}},
	}
	var buf bytes.Buffer
	w := query.NewWriter(&buf, query.FormatTable, query.WriterOptions{Width: 30, Now: now, Optional: []string{"full %", "share %"}})
	if err := nums.Write(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "PLATFORM     MESSAGES  SHARE %\nclaude_code   123,456    96.25\n"; buf.String() != want || !reflect.DeepEqual(w.Dropped(), []string{"full %"}) {
		t.Errorf("numbers: dropped %q\n got:\n%s\nwant:\n%s", w.Dropped(), buf.String(), want)
	}
	// Other formats keep every column.
	if got := format(t, query.FormatCSV, tb(), query.WriterOptions{Width: 20, Optional: []string{"sessions|sess"}}); !strings.HasPrefix(got, "model,messages|msgs,sessions|sess,cost\n") {
		t.Errorf("csv: %s", got)
	}
}
