package query_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/claudecode"
	claudeabout "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
)

// searchLake is the fixture run through the whole chain, pos-embed
// included.
func searchLake(t *testing.T) string {
	t.Helper()
	lake, err := buildEmbedded(context.Background(), querytest.Fixture(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return lake
}

func buildEmbedded(ctx context.Context, root, dir string) (string, error) {
	lake := filepath.Join(dir, "lake")
	var extracted, normalized, embedded bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	opt := extract.Options{Roots: []string{root}, User: "dev", Machine: "box", Now: func() time.Time { return querytest.Now }}
	if err := (claudecode.Adapter{}).Extract(ctx, opt, enc.Encode); err != nil {
		return "", err
	}
	enc.Flush()
	if _, err := normalize.Normalize(ctx, &extracted, &normalized, normalize.Options{Enrich: enrich.All}); err != nil {
		return "", err
	}
	if _, err := embed.Embed(ctx, &normalized, &embedded, embed.Options{Provider: embed.NewHash(0)}); err != nil {
		return "", err
	}
	_, err := load.Load(ctx, &embedded, load.Options{Lake: lake, Now: func() time.Time { return querytest.Now }, NoCatalog: true})
	return lake, err
}

func hashEmbedder(ctx context.Context, text string) ([]float32, error) {
	return embed.NewHash(0).Vector(text), nil
}

func openSearch(t *testing.T) *query.DB {
	t.Helper()
	return openDB(t, searchLake(t))
}

func search(t *testing.T, db *query.DB, opt query.SearchOptions) *query.SearchResult {
	t.Helper()
	if opt.Embed == nil {
		opt.Embed = hashEmbedder
	}
	res, err := db.Search(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSearchModes(t *testing.T) {
	db := openSearch(t)
	promptID := ""
	tbl, err := db.SQL(context.Background(), `SELECT prompt_id FROM exchange_rows WHERE session_id = ? AND prompt LIKE 'Add a retry%'`, sessA)
	if err != nil || len(tbl.Rows) != 1 {
		t.Fatal(tbl, err)
	}
	promptID = tbl.Rows[0][0].(string)
	want := schema.ExchangeID(claudeabout.Name, promptID)
	for _, mode := range query.SearchModes {
		res := search(t, db, query.SearchOptions{Query: "retry with exponential backoff", Mode: mode, K: 5})
		if len(res.Hits) == 0 {
			t.Fatalf("%s: no hits", mode)
		}
		h := res.Hits[0]
		if h.ExchangeID != want || h.SessionID != sessA || h.Rank != 1 {
			t.Errorf("%s: first hit %+v, want exchange %s", mode, h, want)
		}
		if h.Title == "" || h.TS.IsZero() || h.Project != "/home/dev/alpha" || h.Score <= 0 {
			t.Errorf("%s: hit not described: %+v", mode, h)
		}
		if !strings.Contains(strings.ToLower(h.Snippet), "**backoff**") {
			t.Errorf("%s: snippet %q", mode, h.Snippet)
		}
		seen := map[string]bool{}
		for _, x := range res.Hits {
			key := x.ExchangeID + "|" + x.ParentID
			if x.ContentType == schema.ContentUserPrompt || x.ContentType == schema.ContentExchange {
				key = x.ExchangeID
			}
			if seen[key] {
				t.Errorf("%s: unit %s twice", mode, key)
			}
			seen[key] = true
		}
		switch mode {
		case query.SearchHybrid:
			// The lexical side's share of its best (1 for the best BM25),
			// the rest the vector side's similarity scaled from the minimum
			// to 1.
			w := query.DefaultFusion.LexicalWeight
			want := w + (1-w)*(h.VectorScore-res.MinSimilarity)/(1-res.MinSimilarity)
			if h.VectorRank != 1 || h.LexicalRank != 1 || math.Abs(h.Score-want) > 1e-9 || res.MinSimilarity <= 0 {
				t.Errorf("hybrid: first in both lists should score %.4f (minimum %.3f): %+v", want, res.MinSimilarity, h)
			}
			for i, x := range res.Hits {
				if x.Score < 0 || x.Score > 1 || i > 0 && x.Score > res.Hits[i-1].Score {
					t.Errorf("hybrid: hit %d scores %.4f after %.4f", i+1, x.Score, res.Hits[max(i-1, 0)].Score)
				}
			}
		case query.SearchLexical:
			if h.VectorRank != 0 || h.LexicalScore <= 0 {
				t.Errorf("lexical: %+v", h)
			}
		case query.SearchVector:
			if h.LexicalRank != 0 || h.VectorScore <= 0 || h.VectorScore > 1.0001 {
				t.Errorf("vector: %+v", h)
			}
		}
	}
}

// The vector side answers only with chunks above the model's minimum
// similarity: a nonsense query finds nothing, in any mode, unless the
// minimum is turned off.
func TestSearchMinSimilarity(t *testing.T) {
	db := openSearch(t)
	const nonsense = "xqzvw blorft snarflequux"
	minSim := embed.MinSimilarity(embed.HashModel, embed.DefaultDim)
	for _, mode := range query.SearchModes {
		res := search(t, db, query.SearchOptions{Query: nonsense, Mode: mode})
		if len(res.Hits) != 0 {
			t.Errorf("%s: %d hits for nonsense, the first %+v", mode, len(res.Hits), res.Hits[0])
		}
		if mode != query.SearchLexical && res.MinSimilarity != minSim {
			t.Errorf("%s: minimum %v, want %v", mode, res.MinSimilarity, minSim)
		}
	}
	res := search(t, db, query.SearchOptions{Query: nonsense, Mode: query.SearchVector, MinSimilarity: -1})
	if len(res.Hits) == 0 || res.MinSimilarity != 0 {
		t.Errorf("no minimum: %d hits, minimum %v", len(res.Hits), res.MinSimilarity)
	}
	// Without a minimum, hybrid fuses by reciprocal rank: first in both
	// lists scores 1.
	res = search(t, db, query.SearchOptions{Query: "retry with exponential backoff", Mode: query.SearchHybrid, MinSimilarity: -1})
	if h := res.Hits[0]; h.VectorRank != 1 || h.LexicalRank != 1 || h.Score != 1 {
		t.Errorf("hybrid without a minimum: first in both lists should score 1: %+v", h)
	}
	res = search(t, db, query.SearchOptions{Query: "retry with exponential backoff", Mode: query.SearchHybrid, K: 20})
	var vec int
	for _, h := range res.Hits {
		if h.VectorRank > 0 {
			vec++
			if h.VectorScore < minSim-0.01 { // quantized: within about 1%
				t.Errorf("vector score %.3f below the minimum %.3f: %+v", h.VectorScore, minSim, h)
			}
		}
	}
	if vec == 0 {
		t.Error("no vector match for a query the fixture answers")
	}
}

func TestSearchFilters(t *testing.T) {
	db := openSearch(t)
	res := search(t, db, query.SearchOptions{Query: "build make binary", Project: "beta"})
	for _, h := range res.Hits {
		if h.SessionID != sessB {
			t.Errorf("project filter let %s through", h.SessionID)
		}
	}
	if len(res.Hits) == 0 {
		t.Fatal("no hit in beta")
	}
	res = search(t, db, query.SearchOptions{Query: "fetcher", Since: day("2026-02-28"), Until: day("2026-03-02")})
	for _, h := range res.Hits {
		if h.TS.Before(day("2026-02-28")) || !h.TS.Before(day("2026-03-02")) {
			t.Errorf("window let %v through", h.TS)
		}
	}
	res = search(t, db, query.SearchOptions{Query: "fetcher", Session: sessC, Platform: claudeabout.Name, User: "dev", Machine: "box"})
	if len(res.Hits) == 0 {
		t.Fatal("no hit in the session")
	}
	for _, h := range res.Hits {
		if h.SessionID != sessC || h.User != "dev" || h.Machine != "box" {
			t.Errorf("session filter: %+v", h)
		}
	}
	if res := search(t, db, query.SearchOptions{Query: "fetcher", User: "nobody"}); len(res.Hits) != 0 {
		t.Errorf("user filter: %d hits", len(res.Hits))
	}
	// A subagent's report counts as the subagent's exchange.
	res = search(t, db, query.SearchOptions{Query: "callers of Get main.go", Types: []string{schema.ContentSubagentSummary}})
	if len(res.Hits) != 1 || res.Hits[0].ContentType != schema.ContentSubagentSummary {
		t.Fatalf("report: %+v", res.Hits)
	}
	tbl, _ := db.SQL(context.Background(), `SELECT id FROM exchange_rows WHERE agent_id = ?`, res.Hits[0].AgentID)
	if len(tbl.Rows) != 1 || res.Hits[0].ExchangeID != tbl.Rows[0][0] {
		t.Errorf("report's exchange %q, want %v", res.Hits[0].ExchangeID, tbl.Rows)
	}
}

func TestSearchGroupBySession(t *testing.T) {
	db := openSearch(t)
	res := search(t, db, query.SearchOptions{Query: "fetcher retry tests", GroupBy: "session", K: 2})
	if len(res.Sessions) != 2 || len(res.Hits) != 0 {
		t.Fatalf("%+v", res)
	}
	s := res.Sessions[0]
	if s.SessionID != sessA || s.Hits < 2 || s.Rank != 1 || s.Title == "" || s.Snippet == "" || s.LastTS.Before(s.FirstTS) {
		t.Errorf("first session %+v", s)
	}
	if res.Sessions[1].Score > s.Score {
		t.Error("not ranked")
	}
}

func TestSearchErrors(t *testing.T) {
	db := openSearch(t)
	ctx := context.Background()
	var ae *query.ArgError
	for _, opt := range []query.SearchOptions{
		{Query: "  "},
		{Query: "x", Mode: "fuzzy"},
		{Query: "x", GroupBy: "project"},
		{Query: "x", Since: day("2026-03-02"), Until: day("2026-03-01")},
		{Query: "x", Mode: query.SearchVector}, // no embedder
	} {
		if _, err := db.Search(ctx, opt); !errors.As(err, &ae) {
			t.Errorf("%+v: %v", opt, err)
		}
	}
	// Stopwords only: nothing to look up, no error.
	if res, err := db.Search(ctx, query.SearchOptions{Query: "the of and", Embed: hashEmbedder}); err != nil || len(res.Hits) != 0 {
		t.Errorf("stopwords: %v %v", res, err)
	}
	// A lake without chunks says how to get them.
	plain := open(t)
	_, err := plain.Search(ctx, query.SearchOptions{Query: "fetcher", Embed: hashEmbedder})
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "pos-embed") {
		t.Errorf("no chunks: %v", err)
	}
}

func TestSearchLatestVersion(t *testing.T) {
	lake := searchLake(t)
	db, err := query.Open(context.Background(), lake)
	if err != nil {
		t.Fatal(err)
	}
	res := search(t, db, query.SearchOptions{Query: "feeds downloads", Mode: query.SearchLexical})
	db.Close()
	if len(res.Hits) == 0 {
		t.Fatal("no hit")
	}
	// Load a new version of the chunk that matched, with other words.
	h := res.Hits[0]
	c := schema.New(schema.KindChunk)
	c.ID, c.Platform, c.SessionID, c.ParentID, c.TS = h.ChunkID, h.Platform, h.SessionID, h.ParentID, h.TS
	c.ContentType, c.Text = h.ContentType, "It parses calendars now."
	c.Chunk = &schema.Chunk{Index: h.ChunkIndex, Model: embed.HashModel, Dim: embed.DefaultDim, Embedding: embed.NewHash(0).Vector(c.Text)}
	later := func() time.Time { return querytest.Now.Add(time.Hour) }
	if _, err := load.Load(context.Background(), bytes.NewReader(append(schema.AppendRecord(nil, c), '\n')),
		load.Options{Lake: lake, Now: later, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
	db, _ = query.Open(context.Background(), lake)
	defer db.Close()
	for _, mode := range query.SearchModes {
		for _, x := range search(t, db, query.SearchOptions{Query: "feeds downloads", Mode: mode}).Hits {
			if x.ChunkID == h.ChunkID && x.LexicalRank > 0 {
				t.Errorf("%s: the old version still matches: %+v", mode, x)
			}
		}
		got := search(t, db, query.SearchOptions{Query: "calendars", Mode: mode}).Hits
		if len(got) == 0 || got[0].ChunkID != h.ChunkID || !strings.Contains(got[0].Snippet, "calendars") {
			t.Errorf("%s: the new version: %+v", mode, got)
		}
	}
}

func TestSnippet(t *testing.T) {
	text := "First we read the config. Then the loader writes every **partition** file under a temporary name, " +
		"and renames it when complete. Readers never see half a file. " + strings.Repeat("Unrelated words follow here. ", 20)
	got := query.Snippet(text, []string{"partit", "renam"}, 12)
	if !strings.HasPrefix(got, "…") || !strings.Contains(got, "**partition**") || !strings.Contains(got, "**renames**") ||
		!strings.HasSuffix(got, "…") || strings.Contains(got, "****") {
		t.Errorf("snippet %q", got)
	}
	if got := query.Snippet("Short text here.", []string{"zzz"}, 12); got != "Short text here." {
		t.Errorf("no match %q", got)
	}
	if got := query.Snippet("a\n\n  b   c", nil, 12); got != "a b c" {
		t.Errorf("one line %q", got)
	}
}

func TestParseSearchTypes(t *testing.T) {
	got, err := query.ParseSearchTypes("prompt, report,exchange,prompt")
	if err != nil || !reflect.DeepEqual(got, []string{"user_prompt", "subagent_summary", "exchange"}) {
		t.Errorf("%v %v", got, err)
	}
	if _, err := query.ParseSearchTypes("tweet"); err == nil {
		t.Error("unknown type accepted")
	}
}

// A lake whose chunks files have no vector sidecar (an older build's) is
// searched from the Parquet vectors, with the same results.
func TestSearchWithoutSidecars(t *testing.T) {
	lake := searchLake(t)
	db, err := query.Open(context.Background(), lake)
	if err != nil {
		t.Fatal(err)
	}
	opt := query.SearchOptions{Query: "retry with exponential backoff", Mode: query.SearchVector, K: 5}
	want := search(t, db, opt).Hits
	db.Close()
	vecs, _ := filepath.Glob(filepath.Join(lake, "indexed", "chunks", "*", "*", "*"+searchindex.VectorsExt))
	if len(vecs) == 0 {
		t.Fatal("no sidecars")
	}
	for _, f := range vecs {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	db, _ = query.Open(context.Background(), lake)
	defer db.Close()
	got := search(t, db, opt).Hits
	if len(got) != len(want) {
		t.Fatalf("%d hits, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].ChunkID != want[i].ChunkID || math.Abs(got[i].VectorScore-want[i].VectorScore) > 0.02 {
			t.Errorf("hit %d: %s %.4f, want %s %.4f", i, got[i].ChunkID, got[i].VectorScore, want[i].ChunkID, want[i].VectorScore)
		}
	}
	// DuckDB keeps to the minimum similarity too.
	if res := search(t, db, query.SearchOptions{Query: "xqzvw blorft snarflequux", Mode: query.SearchVector}); len(res.Hits) != 0 {
		t.Errorf("nonsense without sidecars: %d hits", len(res.Hits))
	}
	if res := search(t, db, query.SearchOptions{Query: "xqzvw blorft snarflequux", Mode: query.SearchVector, MinSimilarity: -1}); len(res.Hits) == 0 {
		t.Error("no minimum, without sidecars: no hits")
	}
}

// Search on a lake opened with LazyViews (pos-query search) defines the
// views it reads and finds what it finds with every view defined.
func TestSearchLazyViews(t *testing.T) {
	lake := searchLake(t)
	ctx := context.Background()
	full := openDB(t, lake)
	// Titles from the session_rows view, not the session cache.
	noCache := openDB(t, lake, query.LazyViews())
	query.NoSessionCache(noCache)
	for _, opt := range []query.SearchOptions{
		{Query: "fetcher retry tests"},
		{Query: "fetcher", Mode: query.SearchLexical, Since: day("2026-02-28")},
		{Query: "build make binary", Mode: query.SearchVector, Project: "beta"},
		{Query: "fetcher retry tests", GroupBy: "session", K: 2},
		{Query: "callers of Get main.go", Types: []string{schema.ContentSubagentSummary}},
	} {
		lazy, err := query.Open(ctx, lake, query.LazyViews())
		if err != nil {
			t.Fatal(err)
		}
		got, want, view := search(t, lazy, opt), search(t, full, opt), search(t, noCache, opt)
		lazy.Close()
		got.Timing, want.Timing, view.Timing = query.SearchTiming{}, query.SearchTiming{}, query.SearchTiming{}
		if len(want.Hits)+len(want.Sessions) == 0 {
			t.Fatalf("%+v: nothing found", opt)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v:\nlazy %+v\nfull %+v", opt, got, want)
		}
		if !reflect.DeepEqual(view, want) {
			t.Fatalf("%+v:\nwithout the session cache %+v\nwith it %+v", opt, view, want)
		}
	}
}

// Lexical search finds the same hits with the same scores whichever way
// it reads the postings: from the sidecars (this build's), from the
// Parquet postings beside sidecars without them (an older build's), and
// with no sidecars at all (DuckDB counts the chunks).
func TestLexicalSearchEverySource(t *testing.T) {
	lake := searchLake(t)
	opts := []query.SearchOptions{
		{Query: "fetcher retry tests", Mode: query.SearchLexical, K: 8},
		{Query: "build make binary", Mode: query.SearchLexical, Project: "beta"},
		{Query: "callers of Get main.go", Mode: query.SearchLexical, Types: []string{schema.ContentSubagentSummary}},
		{Query: "fetcher", Mode: query.SearchLexical, Since: day("2026-02-28")},
	}
	results := func() []string {
		db := openDB(t, lake)
		var out []string
		for _, opt := range opts {
			var s strings.Builder
			for _, h := range search(t, db, opt).Hits {
				if !opt.Until.IsZero() && !h.TS.Before(opt.Until) {
					t.Errorf("%q until %v: a hit at %v", opt.Query, opt.Until, h.TS)
				}
				fmt.Fprintf(&s, "%s %.9f; ", h.ChunkID, h.LexicalScore)
			}
			out = append(out, s.String())
		}
		return out
	}
	// A window that ends within a day: no hit from the rest of that day's
	// partition, however the postings are read.
	db, err := query.Open(context.Background(), lake)
	if err != nil {
		t.Fatal(err)
	}
	all := search(t, db, query.SearchOptions{Query: "fetcher retry tests", Mode: query.SearchLexical, K: 50}).Hits
	db.Close()
	var cut time.Time
	for _, h := range all {
		if h.TS.Truncate(24*time.Hour) != h.TS {
			cut = h.TS // a hit not at midnight: the window ends just before it
			break
		}
	}
	if cut.IsZero() {
		t.Fatal("no hit to cut the window at")
	}
	opts = append(opts, query.SearchOptions{Query: "fetcher retry tests", Mode: query.SearchLexical, K: 50, Until: cut})
	check := func(out []string) {
		t.Helper()
		if out[len(out)-1] == "" {
			t.Fatal("nothing found before the cut")
		}
	}
	want := results()
	if want[0] == "" {
		t.Fatal("nothing found")
	}
	check(want)
	vecs, _ := filepath.Glob(filepath.Join(lake, "indexed", "chunks", "*", "*", "*"+searchindex.VectorsExt))
	if len(vecs) == 0 {
		t.Fatal("no sidecars")
	}
	// The sidecar files are read, not the search index's copies.
	if err := os.RemoveAll(filepath.Join(lake, searchindex.Dir)); err != nil {
		t.Fatal(err)
	}
	for _, f := range vecs {
		stripSidecarPostings(t, f)
	}
	if got := results(); !reflect.DeepEqual(got, want) {
		t.Fatalf("sidecars without postings:\n%q\nwith:\n%q", got, want)
	}
	for _, f := range vecs {
		os.Remove(f)
	}
	if got := results(); !reflect.DeepEqual(got, want) {
		t.Fatalf("no sidecars:\n%q\nwith:\n%q", got, want)
	}
}

// stripSidecarPostings rewrites a vector sidecar as a build that kept no
// postings in it wrote it (the layout is load's VectorsExt comment's).
func stripSidecarPostings(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b[:8]) != "POSVEC06" {
		t.Fatalf("%s: %v", path, err)
	}
	hdr, codesAt, codesEnd := olderVectorsHead(b, "POSVEC02", 20) // no tokenizer version, no metadata, no sign codes
	b = append(hdr, b[codesAt:codesEnd]...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCandidatesInGo holds the candidates' metadata read in Go from their
// chunks files to what DuckDB reads of them: the same hits, in every mode.
func TestCandidatesInGo(t *testing.T) {
	db := openSearch(t)
	opts := []query.SearchOptions{
		{Query: "fetcher retry tests", K: 8},
		{Query: "fetcher retry tests", Mode: query.SearchLexical, K: 20},
		{Query: "build make binary", Mode: query.SearchVector, K: 20},
		{Query: "callers of Get main.go", GroupBy: "session"},
		{Query: "fetcher build", Since: day("2026-02-28")},
	}
	results := func() string {
		var s strings.Builder
		for _, opt := range opts {
			res := search(t, db, opt)
			for _, h := range res.Hits {
				fmt.Fprintf(&s, "%s %s %s %s %s %s %v %.9f; ", h.ChunkID, h.ParentID, h.ContentType, h.Platform, h.SessionID, h.AgentID, h.TS, h.Score)
			}
			for _, g := range res.Sessions {
				fmt.Fprintf(&s, "%s %d %.9f; ", g.SessionID, g.Hits, g.Score)
			}
			s.WriteString("\n")
		}
		return s.String()
	}
	inGo := results()
	restore := query.CandidatesByDuckDB()
	byDuck := results()
	restore()
	if inGo != byDuck {
		t.Fatalf("in Go:\n%s\nby DuckDB:\n%s", inGo, byDuck)
	}
	// Every search found something to compare.
	for i, line := range strings.Split(strings.TrimSuffix(inGo, "\n"), "\n") {
		if line == "" {
			t.Fatalf("%q found nothing to compare", opts[i].Query)
		}
	}
}

// A lake whose chunks files came without their postings and sidecars (a
// cache fetched from a shared lake) searches as the lake that wrote them
// once load.IndexChunks has made those.
func TestSearchReindexed(t *testing.T) {
	lake := searchLake(t)
	queries := []string{"retry with exponential backoff", "failed tool call", "database migration"}
	results := func() []string {
		db := openDB(t, lake)
		defer db.Close()
		var out []string
		for _, mode := range query.SearchModes {
			for _, q := range queries {
				for _, h := range search(t, db, query.SearchOptions{Query: q, Mode: mode, K: 8}).Hits {
					out = append(out, fmt.Sprintf("%s %q: %s %.6f %q", mode, q, h.ChunkID, h.Score, h.Snippet))
				}
			}
		}
		return out
	}
	want := results()
	if len(want) == 0 {
		t.Fatal("no hits on the lake that wrote its indexes")
	}
	files, _ := filepath.Glob(filepath.Join(lake, "indexed", "chunks", "*", "*", "*.parquet"))
	vecs, _ := filepath.Glob(filepath.Join(lake, "indexed", "chunks", "*", "*", "*"+searchindex.VectorsExt))
	if len(files) == 0 || len(vecs) != len(files) {
		t.Fatalf("%d chunks files, %d sidecars", len(files), len(vecs))
	}
	// An orphan sidecar and postings file, as a fetch that removed a
	// chunks file leaves them.
	orphan := strings.TrimSuffix(files[0], ".parquet") + "-gone" + searchindex.VectorsExt
	for _, f := range vecs {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(orphan, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(lake, "indexed", "postings"), filepath.Join(lake, searchindex.Dir)} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	n, err := load.IndexChunks(lake)
	if err != nil || n != len(files) {
		t.Fatalf("IndexChunks: %d files, %v; want %d", n, err, len(files))
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the orphan sidecar is still there: %v", err)
	}
	if got := results(); !slices.Equal(got, want) {
		t.Errorf("hits after reindexing:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n, err := load.IndexChunks(lake); n != 0 || err != nil {
		t.Errorf("IndexChunks of an indexed lake: %d files, %v", n, err)
	}
}
