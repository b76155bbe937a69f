package searchindex_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/internal/indextest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"

	"github.com/pos-lake/pos/schema"
)

func postingsOf(t *testing.T, chunksFile string, terms []string) (sidecar, table []string) {
	t.Helper()
	return indextest.PostingsOf(t, chunksFile, layout.TablePostings, terms)
}

var fileTerms = indextest.FileTerms

func TestSidecarPostings(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var recs []*schema.Record
	words := []string{"parquet", "writer", "rotate", "logs", "flush", "group", "zstd", "page"}
	for i := range 40 {
		text := ""
		for j := range i%5 + 1 {
			text += words[(i*3+j)%len(words)] + " "
		}
		recs = append(recs, chunk(fmt.Sprintf("c%d", i), text+fmt.Sprint("unique", i), "m", 4, day.Add(time.Duration(i)*time.Minute)))
	}
	recs[7].Chunk.Embedding, recs[7].Chunk.Model, recs[7].Chunk.Dim = nil, "", 0 // no vector: postings all the same
	loadtest.LoadAt(t, lake, time.Now(), recs...)
	files, err := layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
	if err != nil || len(files) != 1 {
		t.Fatalf("%v %v", files, err)
	}
	pfiles, _ := layout.PartitionFiles(lake, layout.TablePostings, "", time.Time{}, time.Time{})
	terms := fileTerms(t, pfiles[0])
	if len(terms) < 40 {
		t.Fatalf("terms %v", terms)
	}
	for _, query := range [][]string{terms, {"pars", "zzz", "flush"}, {terms[0]}, {terms[len(terms)-1], "aaa"}, {"nothing"}, nil} {
		side, table := postingsOf(t, files[0], query)
		if fmt.Sprint(side) != fmt.Sprint(table) {
			t.Fatalf("%v: sidecar\n%v\npostings file\n%v", query, side, table)
		}
		if len(query) > 0 && query[0] == terms[0] && len(side) == 0 {
			t.Fatalf("%v: nothing found", query)
		}
	}
	// A sidecar cut short, or whose postings point past its rows, is an
	// error, not a panic.
	good, err := os.ReadFile(sidecarPath(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func(what string, b []byte) {
		t.Helper()
		os.WriteFile(sidecarPath(files[0]), b, 0o600)
		if _, err := searchindex.ReadLexical(files[0], terms, func(int, int64, int32, int32) {}); err == nil {
			t.Errorf("%s: no error", what)
		}
	}
	for _, cut := range []int{1, 7, 40} {
		corrupt(fmt.Sprint("cut by ", cut), good[:len(good)-cut])
	}
	bad := slices.Clone(good)
	os.WriteFile(sidecarPath(files[0]), good, 0o600)
	postAt := searchindex.PostingsAt(t, files[0])
	nt := int64(bad[postAt]) | int64(bad[postAt+1])<<8
	rows := postAt + 12 + 8*(nt+1) // the first posting's row
	for i := range int64(bad[postAt+8]) {
		bad[rows+i] = 0xff
	}
	corrupt("a posting past the rows", bad)
	bad = slices.Clone(good)
	bad[postAt+8] = 3
	corrupt("a row number 3 bytes wide", bad)
	os.WriteFile(sidecarPath(files[0]), good, 0o600)
	// Without postings: ErrNoPostings, and the rows all the same.
	want, _ := searchindex.ReadVectors(files[0], true)
	searchindex.StripPostings(t, files[0])
	v, err := searchindex.ReadLexical(files[0], terms, func(int, int64, int32, int32) { t.Fatal("a posting from a sidecar without") })
	if !errors.Is(err, searchindex.ErrNoPostings) || v == nil || fmt.Sprint(v.Keys, v.TS, v.DL) != fmt.Sprint(want.Keys, want.TS, want.DL) {
		t.Fatalf("stripped: %v %+v", err, v)
	}
	got, err := searchindex.ReadVectors(files[0], true)
	if err != nil || fmt.Sprint(got.Codes, got.ScaleBytes()) != fmt.Sprint(want.Codes, want.ScaleBytes()) {
		t.Fatalf("stripped sidecar's vectors: %v", err)
	}
}

// FuzzSidecar: any bytes as a sidecar are read or refused, never a panic
// or a posting out of its rows.
func FuzzSidecar(f *testing.F) {
	lake := f.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	f.Add([]byte(searchindex.VectorsMagic))
	loadtest.LoadWith(f, load.Options{Lake: lake}, chunk("c1", "parquet writer flush", "m", 4, day), chunk("c2", "rotate logs", "m", 4, day))
	if files, _ := layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{}); len(files) == 1 {
		if b, err := os.ReadFile(sidecarPath(files[0])); err == nil {
			f.Add(b)
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		chunks := filepath.Join(dir, "x.parquet")
		if err := os.WriteFile(sidecarPath(chunks), b, 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := searchindex.ReadLexical(chunks, []string{"flush", "logs", "parquet", "zzz"}, func(term int, key int64, tf, dl int32) {})
		if err == nil && (v == nil || len(v.Keys) != v.Rows) {
			t.Fatalf("rows %+v", v)
		}
		searchindex.ReadVectors(chunks, true)
		searchindex.ReadVectors(chunks, false)
		for _, with := range []bool{false, true} {
			sc, err := (*searchindex.Index)(nil).ReadSignCodes(chunks, with, with, nil)
			if err != nil {
				continue
			}
			if len(sc.Bits) != sc.Rows*sc.Stride || with && (len(sc.TS) != sc.Rows || len(sc.Keys) != sc.Rows) {
				t.Fatalf("sign codes of %d rows: %d bytes of %d a row, %d times, %d keys", sc.Rows, len(sc.Bits), sc.Stride, len(sc.TS), len(sc.Keys))
			}
			var rows searchindex.SignRows
			if sc.Rows > 0 && sc.ReadRows(&rows, 0, sc.Rows) == nil {
				rows.Row(sc.Rows - 1)
			}
			sc.Close()
		}
	})
}

func sidecarPath(chunksFile string) string {
	return chunksFile[:len(chunksFile)-len(".parquet")] + searchindex.VectorsExt
}
