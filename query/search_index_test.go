package query_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/query"
)

// Search reads the lake's search index (the chunks files' sidecars merged
// into a few segments) and finds what it finds reading every sidecar file,
// or, for files whose sidecars lack the rows' metadata and text (an older
// build's), the Parquet files: the same hits, scores and snippets, in
// every mode, with and without filters.
func TestSearchIndexSameHits(t *testing.T) {
	lake := searchLake(t)
	ctx := context.Background()
	opts := []query.SearchOptions{
		{Query: "fetcher retry tests"},
		{Query: "fetcher retry tests", Mode: query.SearchLexical, K: 20},
		{Query: "build make binary", Mode: query.SearchVector, K: 20},
		{Query: "callers of Get main.go", GroupBy: "session"},
		{Query: "fetcher build", Since: day("2026-02-28")},
		{Query: "test", Types: []string{"exchange"}, K: 15},
		{Query: `"retry tests"`, K: 5},
		{Query: "fetch*", Mode: query.SearchLexical, K: 10},
		{Query: "fetcher retry tests", NoExpand: true, K: 20},
		{Query: "retry the fetcher build tests", Mode: query.SearchLexical, Since: day("2026-02-28").Add(13 * time.Hour), K: 20},
		{Query: "retry the fetcher build tests", Mode: query.SearchLexical, Until: day("2026-03-01").Add(9 * time.Hour), K: 20},
		{Query: "fetcher tests main", Platform: "claude_code", BM25K1: 2, BM25B: 0.5, K: 20},
		{Query: "build make binary tests", Mode: query.SearchLexical, Project: "beta", K: 20},
		{Query: "build make binary tests", Project: "alpha", K: 20},
	}
	results := func(fromFiles bool) string {
		t.Helper()
		db := openDB(t, lake)
		files, err := layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if fromFiles {
			query.SearchFromFiles(db)
		} else if !query.SearchIndexCovers(db, files) {
			t.Fatal("the search index does not hold every chunks file's sidecar")
		}
		var b strings.Builder
		for _, o := range opts {
			o.Embed = hashEmbedder
			res, err := db.Search(ctx, o)
			if err != nil {
				t.Fatalf("%+v: %v", o, err)
			}
			for _, h := range res.Hits {
				fmt.Fprintf(&b, "%d %s %.12f %s %s %q %q\n", h.Rank, h.ChunkID, h.Score, h.ExchangeID, h.Title, h.Snippet, h.Tool)
			}
			for _, s := range res.Sessions {
				fmt.Fprintf(&b, "%d %s %.6f %q\n", s.Rank, s.SessionID, s.Score, s.Snippet)
			}
			b.WriteString("--\n")
		}
		return b.String()
	}
	want := results(true)
	if strings.Count(want, "\n") < 2*len(opts) {
		t.Fatalf("few hits:\n%s", want)
	}
	if got := results(false); got != want {
		t.Fatalf("from the search index:\n%s\nfrom the files:\n%s", got, want)
	}
	// Sidecars without the rows' metadata: the Parquet files answer.
	vecs, _ := filepath.Glob(filepath.Join(lake, "indexed", "chunks", "*", "*", "*"+searchindex.VectorsExt))
	for _, f := range vecs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(f, withoutMeta(b), 0o600)
	}
	if got := results(true); !reflect.DeepEqual(got, want) {
		t.Fatalf("sidecars without metadata:\n%s\nwith:\n%s", got, want)
	}
}

// withoutMeta rewrites a POSVEC06 sidecar as POSVEC04 (no metadata, no
// sign codes).
func withoutMeta(b []byte) []byte {
	le := binary.LittleEndian
	rows, at, bitsAt, stride := int(le.Uint32(b[8:])), int(le.Uint64(b[24:])), int(le.Uint64(b[32:])), int(le.Uint32(b[44:]))
	hdr, codesAt, codesEnd := olderVectorsHead(b, "POSVEC04", 24)
	postAt := codesEnd
	if bitsAt != 0 {
		postAt = bitsAt + rows*stride
	}
	return append(append(hdr, b[codesAt:codesEnd]...), b[postAt:at]...)
}

// olderVectorsHead returns the head of a POSVEC06 sidecar b as an older
// layout has it: magic, b's header bytes 8 to fieldsEnd, then the model
// names, padded to 8 bytes; and where b's rows of codes start and end.
func olderVectorsHead(b []byte, magic string, fieldsEnd int) (hdr []byte, codesAt, codesEnd int) {
	le := binary.LittleEndian
	rows, dim, models := int(le.Uint32(b[8:])), int(le.Uint32(b[12:])), int(le.Uint32(b[16:]))
	hdr = append([]byte(magic), b[8:fieldsEnd]...)
	off := 48
	for range models {
		n := int(le.Uint16(b[off:]))
		hdr = append(hdr, b[off:off+2+n]...)
		off += 2 + n
	}
	off = (off + 7) &^ 7
	for len(hdr)%8 != 0 {
		hdr = append(hdr, 0)
	}
	return hdr, off, off + rows*(8+8+4+1+4+dim)
}
