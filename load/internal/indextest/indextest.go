// Package indextest holds what the tests of load and load/searchindex
// share to write chunks and read back their search index: a chunk record
// with a vector made from its text, and a chunks file's postings read
// from its sidecar and from its Parquet postings file.
package indextest

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/schema"
)

// Chunk is a chunk record of pos-embed's with a vector of dim made from
// its text.
func Chunk(id, text, model string, dim int, ts time.Time) *schema.Record {
	r := schema.New(schema.KindChunk)
	r.ID, r.Platform, r.SessionID, r.ParentID, r.TS = id, "test", "s", "p-"+id, ts
	r.ContentType, r.Text = schema.ContentExchange, text
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(len(text)%7+i) / 10
	}
	r.Chunk = &schema.Chunk{Index: 0, Model: model, Dim: int64(dim), Embedding: v}
	return r
}

// PostingsOf reads a chunks file's postings of terms both ways: from its
// sidecar and from its Parquet postings file, in the lake's table
// postingsTable; each as sorted lines.
func PostingsOf(t *testing.T, chunksFile, postingsTable string, terms []string) (sidecar, table []string) {
	t.Helper()
	collect := func(out *[]string) func(int, int64, int32, int32) {
		return func(term int, key int64, tf, dl int32) {
			*out = append(*out, fmt.Sprintf("%s %d %d %d", terms[term], key, tf, dl))
		}
	}
	if _, err := searchindex.ReadLexical(chunksFile, terms, collect(&sidecar)); err != nil {
		t.Fatal(err)
	}
	dir, name := filepath.Split(chunksFile)
	pdir := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Clean(dir)))), postingsTable,
		filepath.Base(filepath.Dir(filepath.Clean(dir))), filepath.Base(dir))
	if err := searchindex.ReadPostings(filepath.Join(pdir, name), terms, collect(&table)); err != nil {
		t.Fatal(err)
	}
	slices.Sort(sidecar)
	slices.Sort(table)
	return sidecar, table
}

// FileTerms lists every term of a postings file.
func FileTerms(t *testing.T, postingsFile string) []string {
	t.Helper()
	rows, err := parquet.ReadFile[searchindex.PostingRow](postingsFile)
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, r := range rows {
		terms = append(terms, r.Term)
	}
	return slices.Compact(slices.Sorted(slices.Values(terms)))
}
