package query_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// writeEnglishRussianDict writes a small English-Russian dictionary in
// Mueller's format (mueller7, plain data file) into dir.
func writeEnglishRussianDict(t *testing.T, dir string) {
	writeDict(t, dir, "mueller7", []dictEntry{
		{"colour", "colour\n   [ˈkʌlə] _n. 1) цвет; 2) окраска\n"},
		{"glyph", "glyph\n   [ɡlɪf] _n. 1) символ; 2) иконка\n"},
	})
}

// loadChunks adds exchange chunks (parent id: text) to the lake.
func loadChunks(t *testing.T, lake string, texts map[string]string) {
	t.Helper()
	var buf []byte
	for _, parent := range slices.Sorted(func(yield func(string) bool) {
		for k := range texts {
			if !yield(k) {
				return
			}
		}
	}) {
		c := schema.New(schema.KindChunk)
		c.ID, c.Platform, c.SessionID, c.ParentID = "chunk-"+parent, "claude", "sess-"+parent, parent
		c.TS = querytest.Now.Add(-time.Hour)
		c.ContentType, c.Text = schema.ContentExchange, texts[parent]
		c.Chunk = &schema.Chunk{Model: embed.HashModel, Dim: embed.DefaultDim, Embedding: embed.NewHash(0).Vector(c.Text)}
		buf = append(schema.AppendRecord(buf, c), '\n')
	}
	if _, err := load.Load(context.Background(), bytes.NewReader(buf),
		load.Options{Lake: lake, Now: func() time.Time { return querytest.Now }, NoCatalog: true}); err != nil {
		t.Fatal(err)
	}
}

// TestSearchOutward: an English question finds the exchange held in
// Russian that answers it, through the dictionary's Russian translations
// of its words (stemmed as the Russian text is); without expansion, the
// translations or the dictionary it does not.
func TestSearchOutward(t *testing.T) {
	const q = "which colour do the glyphs get"
	checkTranslationFinds(t, writeEnglishRussianDict, q, "ex-ru",
		"Иконки перекрашиваются через CSS: цвет задаётся свойством fill у тега svg, а не в исходных файлах.",
		map[string]query.SearchOptions{
			"not expanded":     {Query: q, NoExpand: true},
			"not translated":   {Query: q, Feedback: query.Feedback{Outward: -1}},
			"lexical mode":     {Query: q, Mode: query.SearchLexical},
			"other dictionary": {Query: "Welche Farbe?"},
		})
}

// TestOutwardBoundedByWord: a translation weighs no more than the word it
// translates where the lake has that word. Russian is rare in this lake,
// so its words' IDF is high: unbounded, the one Russian exchange that has
// the translation outranks the English exchanges that have the question's
// own word; bounded, they come first.
func TestOutwardBoundedByWord(t *testing.T) {
	const englishDocs = 10
	lake := searchLake(t)
	texts := map[string]string{"ex-ru": "Цвет каждой панели берётся из переменных темы оформления приложения."}
	for i := range englishDocs {
		texts[fmt.Sprintf("ex-en%d", i)] = fmt.Sprintf("The colour of panel %d comes from the theme variables.", i)
	}
	loadChunks(t, lake, texts)
	db := openDB(t, lake)
	withDict(t, writeEnglishRussianDict)
	// The Russian exchange's rank and the best English one's (the
	// English exchanges, alike, may fold into one hit), by the lexical
	// side's scores alone: the bound is on them.
	ranks := func(f query.Feedback) (ru, en int) {
		ps := parents(search(t, db, query.SearchOptions{Query: "colour", Feedback: f, Fusion: query.Fusion{LexicalWeight: 1}}).Hits)
		en = slices.IndexFunc(ps, func(p string) bool { return strings.HasPrefix(p, "ex-en") })
		return slices.Index(ps, "ex-ru"), en
	}
	ru, en := ranks(query.Feedback{NoCap: true})
	t.Logf("unbounded: the Russian exchange at %d, the first English one at %d", ru, en)
	if ru < 0 || en >= 0 && en < ru {
		t.Fatalf("unbounded, the Russian exchange is at %d, the first English one at %d: the test does not show the bound", ru, en)
	}
	ru, en = ranks(query.Feedback{})
	if en < 0 || ru >= 0 && ru < en {
		t.Errorf("bounded, the Russian exchange is at %d, above the English ones that have the question's word (first at %d)", ru, en)
	}
}
