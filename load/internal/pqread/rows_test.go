package pqread_test

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/internal/pqread"
)

// The struct a reader wants, read from files of three layouts: the same
// columns written required, optional, or missing, and timestamps and
// integers of other widths.
type want struct {
	ID     string         `parquet:"id"`
	Name   string         `parquet:"name"`
	Opt    *string        `parquet:"opt"`
	N      int64          `parquet:"n"`
	Small  int32          `parquet:"small"`
	Rank   uint8          `parquet:"rank"`
	Flag   bool           `parquet:"flag"`
	NullN  sql.NullInt64  `parquet:"null_n"`
	NullB  sql.NullBool   `parquet:"null_b"`
	TS     time.Time      `parquet:"ts"`
	Labels []string       `parquet:"labels"`
	Vec    []float32      `parquet:"vec"`
	Skip   string         `parquet:"-"`
	local  int            // untagged: left alone
	Other  map[string]int // untagged: left alone
}

type required struct {
	ID     string    `parquet:"id"`
	Name   string    `parquet:"name"`
	Opt    string    `parquet:"opt"`
	N      int64     `parquet:"n"`
	Small  int64     `parquet:"small"`
	Rank   int32     `parquet:"rank"`
	Flag   bool      `parquet:"flag"`
	NullN  int32     `parquet:"null_n"`
	NullB  bool      `parquet:"null_b"`
	TS     time.Time `parquet:"ts,timestamp(microsecond)"`
	Labels []string  `parquet:"labels,list"`
	Vec    []float32 `parquet:"vec,list"`
}

type optional struct {
	ID     string    `parquet:"id"`
	Name   string    `parquet:"name,optional,dict"`
	Opt    *string   `parquet:"opt,optional"`
	N      *int64    `parquet:"n,optional"`
	Small  int32     `parquet:"small"`
	Rank   int32     `parquet:"rank,optional"`
	Flag   *bool     `parquet:"flag,optional"`
	NullN  *int64    `parquet:"null_n,optional"`
	NullB  *bool     `parquet:"null_b,optional"`
	TS     time.Time `parquet:"ts,optional,timestamp(millisecond)"`
	Labels []string  `parquet:"labels,optional,list"`
	Vec    []float32 `parquet:"vec,optional,list"`
}

type old struct {
	ID string `parquet:"id"`
	N  int64  `parquet:"n"`
}

func write[T any](t testing.TB, rows []T) string {
	t.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[T](&b, parquet.MaxRowsPerRowGroup(2))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f.parquet")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadRowsLayouts(t *testing.T) {
	ts := time.Date(2026, 4, 1, 9, 30, 15, 123e6, time.UTC)
	s, z := "x", ""
	i7, tr := int64(7), true
	full := []want{
		{ID: "a", Name: "alpha", Opt: &s, N: 1, Small: 2, Rank: 3, Flag: true, NullN: sql.NullInt64{Int64: 4, Valid: true},
			NullB: sql.NullBool{Bool: true, Valid: true}, TS: ts, Labels: []string{"l1", "l2"}, Vec: []float32{0.5, -1.25}},
		{ID: "b", Name: "beta", Opt: &z, N: 5, NullN: sql.NullInt64{Valid: true}, NullB: sql.NullBool{Valid: true}, TS: ts.Add(time.Hour)},
		{ID: "c", Opt: &s, Labels: []string{"l3"}, NullN: sql.NullInt64{Valid: true}, NullB: sql.NullBool{Valid: true}, TS: ts},
	}
	req := write(t, []required{
		{ID: "a", Name: "alpha", Opt: "x", N: 1, Small: 2, Rank: 3, Flag: true, NullN: 4, NullB: true, TS: ts, Labels: []string{"l1", "l2"}, Vec: []float32{0.5, -1.25}},
		{ID: "b", Name: "beta", N: 5, TS: ts.Add(time.Hour)},
		{ID: "c", Opt: "x", Labels: []string{"l3"}, TS: ts},
	})
	got, err := pqread.ReadFile[want](req, nil, "id")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "required", got, full)

	opt := write(t, []optional{
		{ID: "a", Name: "alpha", Opt: &s, N: &i7, Small: 2, Rank: 3, Flag: &tr, NullN: &i7, NullB: &tr, TS: ts, Labels: []string{"l1", "l2"}},
		{ID: "b", TS: ts.Add(time.Hour), Labels: []string{}, Vec: []float32{}},
		{ID: "c", Vec: []float32{3}},
	})
	got, err = pqread.ReadFile[want](opt, nil, "id")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "optional", got, []want{
		{ID: "a", Name: "alpha", Opt: &s, N: 7, Small: 2, Rank: 3, Flag: true, NullN: sql.NullInt64{Int64: 7, Valid: true},
			NullB: sql.NullBool{Bool: true, Valid: true}, TS: ts, Labels: []string{"l1", "l2"}},
		{ID: "b", TS: ts.Add(time.Hour)},
		{ID: "c", Vec: []float32{3}},
	})

	// A file that predates most columns: they read as NULL.
	o := write(t, []old{{"a", 1}, {"b", 2}, {"c", 3}})
	got, err = pqread.ReadFile(o, []want{{ID: "kept"}}, "id")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "old", got, []want{{ID: "kept"}, {ID: "a", N: 1}, {ID: "b", N: 2}, {ID: "c", N: 3}})
	if _, err := pqread.ReadFile[want](o, nil, "id", "name"); err == nil {
		t.Error("a needed column missing: no error")
	}

	// Cells, as rules read them.
	f, pf, err := pqread.Open(req)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cells, err := pqread.ReadCells(pf, nil, []string{"id", "ts", "flag", "small", "none"}, "id")
	if err != nil {
		t.Fatal(err)
	}
	n := ts.UnixNano()
	wantCells := []pqread.Cell{
		{Str: "a"}, {Int: n}, {Int: 1}, {Int: 2}, {Null: true},
		{Str: "b"}, {Int: n + int64(time.Hour)}, {}, {}, {Null: true},
		{Str: "c"}, {Int: n}, {}, {}, {Null: true},
	}
	if !reflect.DeepEqual(cells, wantCells) {
		t.Errorf("cells\n%+v\nwant\n%+v", cells, wantCells)
	}
}

func check(t *testing.T, name string, got, want []want) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", name, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if (g.Opt == nil) != (w.Opt == nil) || g.Opt != nil && *g.Opt != *w.Opt {
			t.Errorf("%s: row %d: opt %v, want %v", name, i, g.Opt, w.Opt)
		}
		g.Opt, w.Opt = nil, nil
		if len(g.Labels) == 0 && len(w.Labels) == 0 {
			g.Labels, w.Labels = nil, nil
		}
		if len(g.Vec) == 0 && len(w.Vec) == 0 {
			g.Vec, w.Vec = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: row %d:\n%+v\nwant\n%+v", name, i, g, w)
		}
	}
}

// A struct with a field of a type no column reads into is an error, not a
// zero.
func TestReadRowsBadField(t *testing.T) {
	type bad struct {
		F float64 `parquet:"f"`
	}
	path := write(t, []old{{"a", 1}})
	if _, err := pqread.ReadFile[bad](path, nil); err == nil {
		t.Error("no error")
	}
}

// Bytes from disk never panic the readers: a file parquet-go opens reads
// into rows and cells or fails.
func FuzzReadRows(f *testing.F) {
	ts := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	for _, path := range []string{
		write(f, []required{{ID: "a", Name: "n", TS: ts, Labels: []string{"l"}}, {ID: "b"}}),
		write(f, []optional{{ID: "a", Labels: []string{"l", "m"}}, {ID: "b", TS: ts}}),
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
		if err != nil {
			return
		}
		pqread.ReadRows[want](pf, nil, "id")
		pqread.ReadCells(pf, nil, []string{"id", "ts", "labels", "n"})
	})
}
