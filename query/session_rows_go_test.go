package query_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/schema"
)

// The session cache's rows computed in Go are the rows the views' SQL
// computes, column for column and type for type, on the fixture lake and
// on the corpus's.
func TestSessionRowsInGo(t *testing.T) {
	t.Run("fixture", func(t *testing.T) { sessionRowsMatchSQL(t, fixtureLake) })
	t.Run("corpus", func(t *testing.T) { sessionRowsMatchSQL(t, corpusLake(t)) })
}

const (
	partsCols = "platform, date, session_id, first_ts, last_ts, message_count, user_count, assistant_count, tool_count, compactions, " +
		"list_sort(coalesce(agents, [])) AS agents, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, " +
		"list_sort(coalesce(models, [])) AS models, msg_project, msg_project_ts, user, user_ts, machine, machine_ts, exchange_count"
	metaCols = "platform, date, session_id, title, title_source, ingested_at, first_ts, ts, last_ts, slug, plan_id, cwd, git_branch, " +
		"project, meta, completeness, labels, pull_requests"
)

func sessionRowsMatchSQL(t *testing.T, lake string) {
	t.Helper()
	if !rollup.SessionCacheInGo(lake) {
		t.Fatal("a lake with versions: the Go way is not taken")
	}
	db, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := catalog.DefineViews(context.Background(), db, lake, "messages", "exchange_rows", "session_rows"); err != nil {
		t.Fatal(err)
	}
	text := func(cols, src string) string {
		t.Helper()
		var s string
		q := "SELECT coalesce(string_agg(j, chr(10) ORDER BY j), '') FROM (SELECT to_json(t)::VARCHAR AS j FROM (SELECT " + cols + " FROM " + src + ") t)"
		if err := db.QueryRow(q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s
	}
	types := func(src string) string {
		t.Helper()
		var s string
		if err := db.QueryRow("SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE SELECT * FROM " + src + ")").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		tables []string
		write  func(string, []string, string) error
		sql    string
		cols   string
	}{
		{"parts", []string{layout.TableMessages, layout.TableExchanges}, rollup.WriteSessionParts, rollup.SessionPartsSQL("true"), partsCols},
		{"meta", []string{layout.TableSessions}, rollup.WriteSessionMeta, rollup.SessionMetaRowsSQL("true"), metaCols},
	} {
		fp, err := layout.PartitionFingerprints(lake, c.tables...)
		if err != nil || len(fp) == 0 {
			t.Fatalf("%s: partitions %v, %v", c.name, fp, err)
		}
		path := filepath.Join(dir, c.name+".parquet")
		if err := c.write(lake, slices.Sorted(maps.Keys(fp)), path); err != nil {
			t.Fatalf("%s in Go: %v", c.name, err)
		}
		goSrc, sqlSrc := "read_parquet('"+path+"')", "("+c.sql+")"
		if g, s := types(goSrc), types(sqlSrc); g != s {
			t.Errorf("%s: column types in Go\n%s\nby SQL\n%s", c.name, g, s)
		}
		g, s := text(c.cols, goSrc), text(c.cols, sqlSrc)
		if g != s {
			gl, sl := strings.Split(g, "\n"), strings.Split(s, "\n")
			for i := range min(len(gl), len(sl)) {
				if gl[i] != sl[i] {
					t.Fatalf("%s: %d rows in Go, %d by SQL; first difference:\nGo  %s\nSQL %s", c.name, len(gl), len(sl), gl[i], sl[i])
				}
			}
			t.Fatalf("%s: %d rows in Go, %d by SQL", c.name, len(gl), len(sl))
		}
		if n := strings.Count(g, "\n") + 1; n < 3 {
			t.Fatalf("%s: %d rows: too few to compare", c.name, n)
		}
		t.Logf("%s: %d rows equal", c.name, strings.Count(g, "\n")+1)
	}
}

// What the fixture and the corpus lack: sessions with labels and pull
// requests (none, one, several), sidechain messages of subagents, and a
// session whose rollups sit in two partitions.
func TestSessionRowsInGoLabels(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	d1 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	var recs []*schema.Record
	session := func(id string, ts time.Time, title string, labels ...string) {
		r := schema.New(schema.KindSession)
		r.ID, r.Platform, r.SessionID, r.TS, r.Title = "rollup-"+id+ts.Format("02"), "claude_code", id, ts, title
		r.Session = &schema.Session{FirstTS: ts, LastTS: ts.Add(time.Hour), MessageCount: 3, Labels: labels, Slug: "slug-" + id}
		recs = append(recs, r)
	}
	message := func(id, session string, ts time.Time, role, agent string) {
		r := schema.New(schema.KindMessage)
		r.ID, r.Platform, r.SessionID, r.TS = id, "claude_code", session, ts
		r.Role, r.ContentType, r.Text = role, schema.ContentText, "text of "+id
		if agent != "" {
			r.Agent = &schema.Agent{ID: agent, Sidechain: true}
		}
		recs = append(recs, r)
	}
	session("s1", d1, "first", "a label")
	session("s2", d1.Add(time.Hour), "", "one", "two", "three")
	recs[len(recs)-1].Session.PullRequests = []string{"https://github.com/o/r/pull/1", "https://github.com/o/r/pull/2"}
	session("s3", d1.Add(2*time.Hour), "third")
	session("s1", d1.Add(24*time.Hour), "first, later", "later label", "")
	recs[len(recs)-1].Session.PullRequests = []string{"https://github.com/o/r/pull/3"}
	message("m1", "s1", d1, schema.RoleUser, "")
	message("m2", "s1", d1.Add(time.Minute), schema.RoleAssistant, "agent-7")
	message("m3", "s2", d1.Add(time.Hour), schema.RoleUser, "agent-8")
	message("m4", "s1", d1.Add(24*time.Hour), schema.RoleUser, "")
	loadRecords(t, lake, recs)
	sessionRowsMatchSQL(t, lake)
}
