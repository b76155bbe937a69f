package teamlake_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// rows renders a query's rows, one line each.
func rows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rs, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var b strings.Builder
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(strings.TrimSpace(strings.ReplaceAll(fmtAny(v), "\n", " ")))
		}
		b.WriteString("\n")
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The cache of a shared lake that two machines published to answers as a
// local lake loaded with both machines' records; fetching again an
// unchanged lake reads no object.
func TestFetchAnswersAsLocal(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	a, b, both := t.TempDir(), t.TempDir(), t.TempDir()
	loadtest.Load(t, a, teamlaketest.Messages(1, 6)...)
	loadtest.Load(t, b, teamlaketest.Messages(4, 9)...)
	loadtest.Load(t, both, teamlaketest.Messages(1, 9)...)
	// Each machine's lake records the embedding model of its chunks; the
	// shared lake holds both, the older first.
	day := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	models := []layout.EmbeddingModel{
		{Model: "m-a", Dim: 8, Provider: "hash", Since: day},
		{Model: "m-b", Dim: 4, Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Since: day.Add(-time.Hour)},
	}
	if err := layout.WriteEmbeddings(a, models[:1]); err != nil {
		t.Fatal(err)
	}
	if err := layout.WriteEmbeddings(b, models[1:]); err != nil {
		t.Fatal(err)
	}
	l, err := teamlake.Open(ctx, teamlake.Options{Lake: "s3://" + s.TableBucket + "/team", Catalog: s.Catalog, Machine: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, lake := range []string{a, b} {
		if _, err := l.Publish(ctx, lake, layout.TableMessages, layout.TableChunks); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	reps, err := l.Fetch(ctx, cache, layout.TableMessages, layout.TableChunks)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := layout.Embeddings(cache); err != nil || len(got) != 2 || !got[0].SameEndpoint(models[1]) || !got[1].SameEndpoint(models[0]) {
		t.Errorf("the cache's embedding models: %+v, %v; want %+v then %+v", got, err, models[1], models[0])
	}
	if reps[0].Downloaded == 0 || reps[0].Downloaded != reps[0].Files {
		t.Errorf("first fetch: %+v, want every file downloaded", reps[0])
	}
	if st, err := rollup.ReadRollup(cache); st == nil || err != nil || len(st.Stale)+len(st.Gone) > 0 {
		t.Errorf("the cache's usage rollup: %+v, %v; want one up to date with its messages", st, err)
	}
	const q = `SELECT id, platform, date, session_id, role, text, ts, input_tokens FROM messages ORDER BY id`
	got, want := rows(t, loadtest.Views(t, cache), q), rows(t, loadtest.Views(t, both), q)
	if got != want {
		t.Errorf("messages of the cache:\n%s\nwant those of a local lake of both machines' records:\n%s", got, want)
	}
	if strings.Count(want, "\n") != 9 {
		t.Errorf("the local lake has %d messages, want 9", strings.Count(want, "\n"))
	}

	before := s.Requests(t)
	reps, err = l.Fetch(ctx, cache, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	after := s.Requests(t)
	t.Logf("requests before the second fetch %v, after %v", before, after)
	if reps[0].Downloaded != 0 || reps[0].Removed != 0 {
		t.Errorf("fetching an unchanged lake: %+v, want nothing downloaded or removed", reps[0])
	}
	if before["GET"] == 0 {
		t.Errorf("the server counted no GET before the second fetch: %v", before)
	}
	if after["GET"] != before["GET"] {
		t.Errorf("fetching an unchanged lake read %d objects", after["GET"]-before["GET"])
	}
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	default:
		return strings.TrimSpace(strings.ReplaceAll(fmtV(x), "\n", " "))
	}
}

func fmtV(v any) string { return fmt.Sprint(v) }

// Two machines hold different versions of the same records: the shared
// table keeps both, and the cache's views read the latest of each, as a
// local lake loaded with both machines' records does.
func TestFetchReadsLatestVersion(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	a, b, both := t.TempDir(), t.TempDir(), t.TempDir()
	older, newer := teamlaketest.Messages(1, 4), teamlaketest.Messages(3, 6)
	for _, r := range newer[:2] {
		r.Text += ", edited on the second machine"
	}
	day := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	loadtest.LoadAt(t, a, day, older...)
	loadtest.LoadAt(t, b, day.Add(time.Hour), newer...)
	loadtest.LoadAt(t, both, day, older...)
	loadtest.LoadAt(t, both, day.Add(time.Hour), newer...)
	l, err := teamlake.Open(ctx, teamlake.Options{Lake: "s3://" + s.TableBucket + "/team", Catalog: s.Catalog, Machine: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, lake := range []string{b, a} {
		if _, err := l.Publish(ctx, lake, layout.TableMessages); err != nil {
			t.Fatal(err)
		}
	}
	cache := t.TempDir()
	if _, err := l.Fetch(ctx, cache, layout.TableMessages); err != nil {
		t.Fatal(err)
	}
	if !layout.Versioned(cache)[layout.TableMessages] {
		t.Errorf("the cache does not record that its messages hold two versions of a record")
	}
	const q = `SELECT id, text, ingested_at FROM messages ORDER BY id`
	got, want := rows(t, loadtest.Views(t, cache), q), rows(t, loadtest.Views(t, both), q)
	if got != want || strings.Count(want, "edited") != 2 || strings.Count(want, "\n") != 6 {
		t.Errorf("messages of the cache:\n%s\nwant those of a local lake of both machines' records:\n%s", got, want)
	}
}
