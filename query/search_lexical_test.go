package query_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// loadTexts loads one chunk a text (chunk-0, chunk-1 …) into a new lake,
// embedded with the hash provider.
func loadTexts(t *testing.T, texts ...string) *query.DB {
	t.Helper()
	lake := filepath.Join(t.TempDir(), "lake")
	var buf bytes.Buffer
	day := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	h := embed.NewHash(0)
	for i, text := range texts {
		c := schema.New(schema.KindChunk)
		c.ID, c.Platform, c.SessionID, c.ParentID = fmt.Sprintf("chunk-%d", i), "claude_code", fmt.Sprintf("s%d", i), fmt.Sprintf("m%d", i)
		c.TS, c.Role, c.ContentType, c.Text = day.Add(time.Duration(i)*time.Minute), "user", schema.ContentUserPrompt, text
		c.Chunk = &schema.Chunk{Model: h.Model(), Dim: int64(h.Dim()), Embedding: h.Vector(text)}
		buf.Write(schema.AppendRecord(nil, c))
		buf.WriteByte('\n')
	}
	now := func() time.Time { return day.Add(time.Hour) }
	if _, err := load.Load(context.Background(), &buf, load.Options{Lake: lake, Now: now, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
	db, err := query.Open(context.Background(), lake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// hitIDs are the chunks a search found, in rank order.
func hitIDs(res *query.SearchResult) []string {
	return stringsOf(res.Hits, func(h query.SearchHit) string { return h.ChunkID })
}

var lexicalTexts = []string{
	"Fix the parser before the release.",                             // 0
	"The parser will fix itself, said nobody.",                       // 1
	"Parsing the config in src/query/search.go is slow.",             // 2
	"error[E0308]: mismatched types in pkg.ParseConfig at line 12",   // 3
	"Тесты падают из-за ошибки конфигурации сервера.",                // 4
	"Wir haben die Fehler im Server behoben und die Tests laufen.",   // 5
	"Unrelated notes about lunch and the weather.",                   // 6
	"The request failed with HTTP 404 after the upgrade to v1.2.3.",  // 7
	"Upgrade the client; the server answers 404 to HTTP/1.1 probes.", // 8
}

// A phrase wants its words in order; a prefix any term that starts with
// it; names, codes and versions are found whole; other languages by their
// stems.
func TestSearchPhrasePrefixNames(t *testing.T) {
	db := loadTexts(t, lexicalTexts...)
	for _, tc := range []struct {
		q    string
		want []string // the hits, in any order
		top  string   // the first hit, if it matters
	}{
		{q: `"fix the parser"`, want: []string{"chunk-0"}},
		{q: `fix parser`, want: []string{"chunk-0", "chunk-1"}},
		{q: `"the parser will"`, want: []string{"chunk-1"}},
		{q: `"parser fix"`, want: nil},
		{q: `pars*`, want: []string{"chunk-0", "chunk-1", "chunk-2", "chunk-3"}},
		{q: `"fix the parser" pars*`, want: []string{"chunk-0"}},
		{q: `search.go`, top: "chunk-2"},
		{q: `src/query/search.go`, top: "chunk-2"},
		{q: `E0308`, want: []string{"chunk-3"}},
		{q: `ParseConfig`, top: "chunk-3"},
		{q: `pkg.ParseConfig`, top: "chunk-3"},
		{q: `HTTP 404`, top: "chunk-7"},
		{q: `"HTTP 404"`, want: []string{"chunk-7"}},
		{q: `v1.2.3`, want: []string{"chunk-7"}},
		{q: `ошибка конфигурация`, want: []string{"chunk-4"}},
		{q: `Fehler behoben`, want: []string{"chunk-5"}},
	} {
		res := search(t, db, query.SearchOptions{Query: tc.q, Mode: query.SearchLexical, K: 20})
		got := hitIDs(res)
		if tc.top != "" {
			if len(got) == 0 || got[0] != tc.top {
				t.Errorf("%s: hits %q, want %s first", tc.q, got, tc.top)
			}
			continue
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), tc.want) {
			t.Errorf("%s: hits %q, want %q", tc.q, got, tc.want)
		}
	}
	// A phrase holds in every mode: the vector side's candidates without
	// it are dropped too.
	for _, mode := range query.SearchModes {
		res := search(t, db, query.SearchOptions{Query: `"fix the parser"`, Mode: mode, K: 20})
		if got := hitIDs(res); !slices.Equal(got, []string{"chunk-0"}) {
			t.Errorf("%s: phrase hits %q", mode, got)
		}
	}
	// A prefix's matches are in bold.
	res := search(t, db, query.SearchOptions{Query: `config*`, Mode: query.SearchLexical})
	if len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Snippet, "**") || !slices.Contains(res.Terms, "config*") {
		t.Errorf("prefix snippet: %+v", res)
	}
}

// BM25's k1 and b are the search's to set: b 0 ignores lengths, so two
// chunks with one match each tie, while the default favours the shorter.
func TestSearchBM25Params(t *testing.T) {
	db := loadTexts(t, "cache", "cache and many other words about the build and the release and the tests")
	def := search(t, db, query.SearchOptions{Query: "cache", Mode: query.SearchLexical})
	flat := search(t, db, query.SearchOptions{Query: "cache", Mode: query.SearchLexical, BM25B: -1})
	if len(def.Hits) != 2 || len(flat.Hits) != 2 {
		t.Fatalf("hits %d %d", len(def.Hits), len(flat.Hits))
	}
	if def.Hits[0].LexicalScore <= def.Hits[1].LexicalScore {
		t.Errorf("default: %v <= %v", def.Hits[0].LexicalScore, def.Hits[1].LexicalScore)
	}
	if flat.Hits[0].LexicalScore != flat.Hits[1].LexicalScore {
		t.Errorf("b 0: %v != %v", flat.Hits[0].LexicalScore, flat.Hits[1].LexicalScore)
	}
	hi := search(t, db, query.SearchOptions{Query: "cache", Mode: query.SearchLexical, BM25K1: 5})
	if hi.Hits[0].LexicalScore == def.Hits[0].LexicalScore {
		t.Error("k1 changed nothing")
	}
}

// A lake indexed by the first tokenizer (testdata/lake-lexical-v1, written
// by that build's pos-load and pos-hash-v2) is searched with that
// tokenizer's terms and that model's vectors: what it finds there is what
// it found then.
func TestSearchLexicalV1Lake(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	if err := os.CopyFS(lake, os.DirFS(filepath.Join("testdata", "lake-lexical-v1"))); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, lake)
	v2, err := embed.NewHashModel(embed.HashModelV2, 0)
	if err != nil {
		t.Fatal(err)
	}
	emb := func(_ context.Context, s string) ([]float32, error) { return v2.Vector(s), nil }
	for _, tc := range []struct {
		q, mode string
		want    []string
	}{
		// "generalizations": Porter's "gener", Snowball's "general".
		{"generalizations", query.SearchLexical, []string{"chunk-0"}},
		{"generalizations", query.SearchHybrid, []string{"chunk-0"}},
		{"caching layers", query.SearchLexical, []string{"chunk-1"}},
		{`"fix the parser"`, query.SearchLexical, []string{"chunk-0"}},
		{`pars*`, query.SearchLexical, []string{"chunk-0", "chunk-1", "chunk-2"}},
		{"search.go", query.SearchLexical, []string{"chunk-1"}},
	} {
		res := search(t, db, query.SearchOptions{Query: tc.q, Mode: tc.mode, K: 20, Embed: emb})
		if res.Model != "" && res.Model != embed.HashModelV2 {
			t.Errorf("%s: model %s", tc.q, res.Model)
		}
		if got := slices.Sorted(slices.Values(hitIDs(res))); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: hits %q, want %q", tc.mode, tc.q, got, tc.want)
		}
	}
}
