package query_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/aider"
	"github.com/pos-lake/pos/extract/cline"
	"github.com/pos-lake/pos/extract/codex"
	"github.com/pos-lake/pos/extract/cursor"
	"github.com/pos-lake/pos/extract/gemini"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
)

// TestCorpusSessionCounts builds a lake of every platform of the corpus
// with the real pipeline and checks that sessions, stats and capabilities
// count the same sessions, per platform and in all; and that the Cursor
// composers left empty (no message, no title) are not listed.
func TestCorpusSessionCounts(t *testing.T) {
	dir := corpus.Dir(t)
	lake := filepath.Join(t.TempDir(), "lake")
	p := querytest.Pipeline{User: "dev", Machine: "box", Now: func() time.Time { return querytest.Now },
		Key: []byte("querytest key of 32 bytes or more"), SkipBad: true, More: []querytest.Source{
			{Adapter: codex.Adapter{}, Root: filepath.Join(dir, "codex")},
			{Adapter: cursor.Adapter{}, Root: filepath.Join(dir, "cursor")},
			{Adapter: cline.Adapter{}, Root: filepath.Join(dir, "cline")},
			{Adapter: gemini.Adapter{}, Root: filepath.Join(dir, "gemini")},
			{Adapter: aider.Adapter{}, Root: filepath.Join(dir, "aider")},
		}}
	ctx := context.Background()
	if err := p.Run(ctx, filepath.Join(dir, "claude"), lake); err != nil {
		t.Fatal(err)
	}
	db, err := query.Open(ctx, lake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	listed := map[string]int64{}
	ss, err := db.Sessions(ctx, query.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		listed[s.Platform]++
		if s.Messages == 0 && s.Title == "" {
			t.Errorf("listed: %s session %s, without messages or title", s.Platform, s.SessionID)
		}
	}
	st, err := db.Stats(ctx, query.StatsOptions{By: []string{"platform"}})
	if err != nil {
		t.Fatal(err)
	}
	stats := map[string]int64{}
	for _, r := range st.Rows {
		stats[r.Key[0]] = r.Sessions
	}
	total, err := db.Stats(ctx, query.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	caps, err := db.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	capsN := map[string]int64{}
	for _, c := range caps {
		if c.Sessions > 0 {
			capsN[c.Platform] = c.Sessions
		}
	}
	var all int64
	for pl, n := range listed {
		all += n
		if stats[pl] != n || capsN[pl] != n {
			t.Errorf("%s: %d sessions listed, %d in stats, %d in capabilities", pl, n, stats[pl], capsN[pl])
		}
	}
	for pl, n := range capsN {
		if listed[pl] == 0 {
			t.Errorf("%s: %d sessions in capabilities, none listed", pl, n)
		}
	}
	if len(total.Rows) != 1 || total.Rows[0].Sessions != all {
		t.Errorf("stats in all: %+v, want %d sessions", total.Rows, all)
	}
	if listed["cursor"] != 14 {
		t.Errorf("%d Cursor sessions listed, want the corpus's 14 with messages (its 8 empty composers left out)", listed["cursor"])
	}
	t.Logf("sessions per platform: %v, %d in all", listed, all)
}
