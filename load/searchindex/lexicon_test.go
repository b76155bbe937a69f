package searchindex_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"

	"github.com/pos-lake/pos/schema"
)

// lexLake is a lake of chunks over 30 days (one chunks file each) with
// its search index.
func lexLake(t testing.TB) (lake string, files []string) {
	t.Helper()
	lake = t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var recs []*schema.Record
	for i := range 300 {
		text := fmt.Sprintf("parquet writer flush number %d of the backfill", i)
		if i%3 == 0 {
			text += " rotate logs rotate logs rotate"
		}
		recs = append(recs, chunk(fmt.Sprint("c", i), text, "m", 8, day.AddDate(0, 0, -i%30).Add(time.Duration(i)*time.Minute)))
	}
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true}, recs...)
	files, err := layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
	if err != nil || len(files) < 30 {
		t.Fatalf("chunks files: %d %v", len(files), err)
	}
	return lake, files
}

type lexHit struct {
	key    int64
	tf, dl int32
}

// The search index's segment holds one term dictionary over all its
// files: a term is looked up once and hands on the postings every file's
// sidecar has of it (the same chunks, term frequencies and lengths), and
// each file's rows' count, total length and times are the sidecar's.
func TestSearchIndexLexicon(t *testing.T) {
	lake, files := lexLake(t)
	ix, err := searchindex.Open(lake)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	sets, rest := ix.Merged(files)
	if len(sets) != 1 || len(rest) != 0 || len(sets[0].Files) != len(files) {
		t.Fatalf("merged: %d sets, %d files apart", len(sets), len(rest))
	}
	lex := sets[0].Lex
	for j, fi := range sets[0].Files {
		v, err := searchindex.ReadVectors(files[fi], false)
		if err != nil {
			t.Fatal(err)
		}
		e := lex.Entries[sets[0].Entries[j]]
		var sum int64
		for _, d := range v.DL {
			sum += int64(d)
		}
		if e.Rows != v.Rows || e.SumDL != sum || e.MinTS != slices.Min(v.TS) || e.MaxTS != slices.Max(v.TS) ||
			!slices.Equal(lex.Keys[e.Base:e.Base+e.Rows], v.Keys) || !slices.Equal(lex.DL[e.Base:e.Base+e.Rows], v.DL) {
			t.Fatalf("%s: entry %+v, sidecar rows %d, length %d", files[fi], e, v.Rows, sum)
		}
	}
	for _, term := range []searchindex.Term{{Text: "rotat"}, {Text: "flush"}, {Text: "17"}, {Text: "backfil"}, {Text: "nowhere"}, {Text: "rot", Prefix: true}} {
		var want []lexHit
		for _, f := range files {
			if _, err := searchindex.ReadLexicalQuery(f, func(int) []searchindex.Term { return []searchindex.Term{term} }, func(_ int, key int64, tf, dl int32) {
				want = append(want, lexHit{key, tf, dl})
			}); err != nil {
				t.Fatal(err)
			}
		}
		var got []lexHit
		lookups := 0
		for _, version := range lex.Versions() {
			err := lex.Postings(version, term, func(p searchindex.Postings) error {
				lookups++
				for i, o := range p.Ords {
					got = append(got, lexHit{lex.Keys[o], p.TF(i), int32(lex.DL[o])})
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		less := func(h []lexHit) func(i, j int) bool {
			return func(i, j int) bool { return h[i].key < h[j].key || h[i].key == h[j].key && h[i].tf < h[j].tf }
		}
		sort.Slice(want, less(want))
		sort.Slice(got, less(got))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%+v: %d postings from the segment's dictionary, %d from the sidecars", term, len(got), len(want))
		}
		if len(want) > 0 && lookups == 0 || len(want) == 0 && lookups != 0 {
			t.Fatalf("%+v: %d lists", term, lookups)
		}
		if term.Text == "rotat" && len(want) != 100 {
			t.Fatalf("rotat: %d postings", len(want))
		}
	}
}

// writeSegmentV1 writes the lake's sidecars as a segment of the older
// layout (POSIDX01: no merged term index).
func writeSegmentV1(t *testing.T, lake string, files []string) {
	writeOlderSegment(t, lake, files, searchindex.SegmentMagicV1)
}

// writeOlderSegment writes the lake's sidecars as a segment of an older
// layout: POSIDX01, or POSIDX02 without header copies (and here without a
// merged term index).
func writeOlderSegment(t *testing.T, lake string, files []string, magic string) {
	t.Helper()
	le := binary.LittleEndian
	var toc []byte
	var bodies [][]byte
	for _, f := range files {
		b, err := os.ReadFile(sidecarPath(f))
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(lake, f)
		toc = le.AppendUint16(toc, uint16(len(rel)))
		toc = append(toc, filepath.ToSlash(rel)...)
		toc = append(toc, make([]byte, 16)...)
		bodies = append(bodies, b)
	}
	head := 16
	if magic != searchindex.SegmentMagicV1 {
		head = 32
	}
	at := (head + len(toc) + 7) &^ 7
	p := 0
	for i, f := range files {
		rel, _ := filepath.Rel(lake, f)
		p += 2 + len(rel)
		le.PutUint64(toc[p:], uint64(at))
		le.PutUint64(toc[p+8:], uint64(len(bodies[i])))
		p += 16
		at = (at + len(bodies[i]) + 7) &^ 7
	}
	out := le.AppendUint32(le.AppendUint32([]byte(magic), uint32(len(files))), uint32(len(toc)))
	if head == 32 {
		out = le.AppendUint64(le.AppendUint64(out, 0), 0) // no merged term index; the size, below
	}
	out = append(out, toc...)
	for _, b := range bodies {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		out = append(out, b...)
	}
	if head == 32 {
		le.PutUint64(out[24:], uint64(len(out)))
	}
	dir := filepath.Join(lake, searchindex.Dir)
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "seg-old-001.idx"), out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A segment of an older build (without a merged term index) is read as
// it was, its files searched one by one, and replaced by one with a
// merged term index at the next load, even one that writes no chunks.
func TestSearchIndexOlderSegment(t *testing.T) {
	lake, files := lexLake(t)
	writeSegmentV1(t, lake, files)
	ix, err := searchindex.Open(lake)
	if err != nil {
		t.Fatal(err)
	}
	sets, rest := ix.Merged(files)
	if ix.Segments() != 1 || len(sets) != 0 || len(rest) != len(files) || !ix.Covers(files[0]) {
		t.Fatalf("an older segment: %d segments, %d merged sets, %d files apart", ix.Segments(), len(sets), len(rest))
	}
	for _, f := range files {
		want, _ := os.ReadFile(sidecarPath(f))
		if !bytes.Equal(ix.SidecarBytes(f), want) {
			t.Fatalf("%s: the older segment's copy differs", f)
		}
	}
	ix.Close()
	// A load that writes no chunks rewrites it too.
	loadtest.LoadWith(t, load.Options{Lake: lake, NoCatalog: true})
	indexState(t, lake)
	files, _ = layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
	ix, err = searchindex.Open(lake)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	sets, rest = ix.Merged(files)
	n := 0
	for _, s := range sets {
		n += len(s.Files)
	}
	if n != len(files) || len(rest) != 0 {
		t.Fatalf("after a load: %d of %d files merged, %d apart", n, len(files), len(rest))
	}
}

// FuzzSearchIndexSegment reads arbitrary bytes as a search index segment:
// an error or nothing read, never a panic. The seeds are a real segment,
// cut short and with bytes changed.
func FuzzSearchIndexSegment(f *testing.F) {
	lake := f.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.LoadWith(f, load.Options{Lake: lake, NoCatalog: true},
		chunk("a", "parquet writer flush", "m", 4, day), chunk("b", "rotate logs rotate", "m", 4, day.AddDate(0, 0, 1)))
	names, err := searchindex.SegmentNames(filepath.Join(lake, searchindex.Dir))
	if err != nil || len(names) != 1 {
		f.Fatalf("segments %v %v", names, err)
	}
	seg, err := os.ReadFile(filepath.Join(lake, searchindex.Dir, names[0]))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seg)
	f.Add(seg[:len(seg)/2])
	lexAt := binary.LittleEndian.Uint64(seg[16:])
	// The merged term index, the end, and the first entry's header copy
	// (its rows, its model names' count and length).
	head := 32 + 2 + int(binary.LittleEndian.Uint16(seg[32:])) + 16 + 2
	for _, at := range []int{int(lexAt), int(lexAt) + 8, int(lexAt) + 12, len(seg) - 40, len(seg) - 10, head + 8, head + 16, head + 48} {
		b := bytes.Clone(seg)
		b[at] ^= 0x7f
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { searchindex.ReadSegmentBytes(b) })
}
