package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
)

func TestScaleCopiesWithFreshIDsAndShiftedTimes(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()+"/big"
	day := time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)
	var recs []*schema.Record
	for i, text := range []string{"first", "second", "third"} {
		r := schema.New(schema.KindMessage)
		r.ID, r.Platform, r.SessionID = "m"+text, claudecode.Name, "s1"
		r.TS = day.Add(time.Duration(i) * 20 * time.Hour) // two dates
		r.Role, r.ContentType, r.Text, r.Model = schema.RoleAssistant, schema.ContentText, text, "claude-x"
		r.Tools = []schema.Tool{{Name: "Read", CallID: "c" + text, Input: []byte(`{"p":1}`)}}
		r.Usage = &schema.Usage{Input: 1, Output: 2, CacheCreation: 10, CacheCreation1h: 4}
		recs = append(recs, r)
	}
	ex := schema.New(schema.KindExchange)
	ex.ID, ex.Platform, ex.SessionID, ex.TS = "e1", claudecode.Name, "s1", day
	ex.Exchange = &schema.Exchange{Number: 1, Prompt: "do it", PromptID: "mfirst", TSEnd: day.Add(time.Hour)}
	ses := schema.New(schema.KindSession)
	ses.ID, ses.Platform, ses.SessionID, ses.TS = "S1", claudecode.Name, "s1", day
	ses.Session = &schema.Session{FirstTS: day, MessageCount: 3}
	doc := schema.New(schema.KindDocument)
	doc.ID, doc.Platform, doc.SessionID, doc.TS, doc.Text = "d1", claudecode.Name, "s1", day, "a plan"
	chunk := schema.New(schema.KindChunk)
	chunk.ID, chunk.Platform, chunk.SessionID, chunk.TS = "c1", claudecode.Name, "s1", day
	chunk.Role, chunk.ContentType, chunk.Text = schema.RoleUser, schema.ContentText, "the zebra crossing"
	chunk.Chunk = &schema.Chunk{Model: "test-model", Dim: 4, Embedding: []float32{0.5, -0.5, 0.5, 0.5}}
	recs = append(recs, ex, ses, doc, chunk)
	if err := querytest.LoadRecords(context.Background(), src, recs); err != nil {
		t.Fatal(err)
	}

	counts, err := build(scaler{from: src, to: dst, copies: 3, shift: 91})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{layout.TableMessages: 9, layout.TableExchanges: 3, layout.TableSessions: 3, layout.TableDocuments: 3, layout.TableChunks: 3}
	for table, n := range want {
		if counts[table] != n {
			t.Errorf("%s: %d rows, want %d", table, counts[table], n)
		}
	}

	db, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := catalog.DefineViews(context.Background(), db, dst); err != nil {
		t.Fatal(err)
	}
	one := func(q string) string {
		t.Helper()
		var s sql.NullString
		if err := db.QueryRow(q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s.String
	}
	for q, want := range map[string]string{
		`SELECT count(DISTINCT id) FROM messages`:                                                                   "9",
		`SELECT count(*) FROM messages WHERE id = 'msecond~2' AND session_id = 's1~2'`:                              "1",
		`SELECT strftime(ts, '%Y-%m-%d') FROM messages WHERE id = 'mfirst~1'`:                                       "2025-03-03",
		`SELECT count(*) FROM messages WHERE text IS NOT NULL`:                                                      "3",
		`SELECT sum(tool_count)::VARCHAR FROM messages`:                                                             "9",
		`SELECT sum(cache_creation_1h_tokens)::VARCHAR FROM messages`:                                               "36",
		`SELECT prompt_id FROM exchanges WHERE id = 'e1~2'`:                                                         "mfirst~2",
		`SELECT strftime(ts_end, '%H') FROM exchanges WHERE id = 'e1~1'`:                                            "11",
		`SELECT count(*) FROM sessions`:                                                                             "3",
		`SELECT count(*) FROM documents WHERE text = 'a plan'`:                                                      "1",
		`SELECT count(*) FROM chunks WHERE text = 'the zebra crossing' AND model = 'test-model'`:                    "3",
		`SELECT strftime(ts, '%Y-%m-%d') FROM chunks WHERE id = 'c1~2'`:                                             "2024-12-02",
		`SELECT count(DISTINCT p.chunk_key) FROM postings p JOIN chunks c USING (chunk_key) WHERE p.term = 'zebra'`: "3",
	} {
		if got := one(q); got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}

	// Every chunks file has its vector sidecar, with its rows' keys.
	files, _ := filepath.Glob(filepath.Join(layout.TableDir(dst, layout.TableChunks), "*", "*", "*.parquet"))
	if len(files) != 3 {
		t.Fatalf("%d chunks files, want 3", len(files))
	}
	for _, f := range files {
		v, err := searchindex.ReadVectors(f, true)
		if err != nil || v.Rows != 1 || v.Dim != 4 || v.Models[0] != "test-model" {
			t.Fatalf("%s: vectors %+v, %v", f, v, err)
		}
		if got := one(fmt.Sprintf("SELECT chunk_key::VARCHAR FROM read_parquet('%s')", f)); got != fmt.Sprint(v.Keys[0]) {
			t.Fatalf("%s: chunk key %s, sidecar key %d", f, got, v.Keys[0])
		}
	}
}
