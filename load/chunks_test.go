package load_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/internal/indextest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/schema"
)

var chunk = indextest.Chunk

func TestChunksAndPostings(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	st := loadtest.Load(t, lake,
		chunk("c1", "The parquet writer flushes row groups", "m", 4, day),
		chunk("c2", "Rotate the logs nightly; rotate them again", "m", 4, day.Add(time.Hour)),
	)
	if st.Rows[layout.TableChunks] != 2 || st.Rows[layout.TablePostings] == 0 {
		t.Fatalf("rows %v", st.Rows)
	}
	db := loadtest.Views(t, lake)
	if n := loadtest.One(t, db, "SELECT count(*) FROM chunks"); n != "2" {
		t.Fatalf("chunks %s", n)
	}
	// The vector column works with array_cosine_similarity.
	if got := loadtest.One(t, db, `SELECT id FROM chunks ORDER BY array_cosine_similarity(vector, [0.3, 0.4, 0.5, 0.6]::FLOAT[4]) DESC LIMIT 1`); got == "" {
		t.Fatal("no vector")
	}
	if got := loadtest.One(t, db, "SELECT typeof(vector) FROM chunks LIMIT 1"); got != "FLOAT[4]" {
		t.Errorf("vector type %s", got)
	}
	// Postings: terms, frequencies and the chunk's length.
	if got := loadtest.One(t, db, `SELECT tf || '/' || dl FROM postings p JOIN chunks c USING (chunk_key) WHERE c.id = 'c2' AND term = 'rotat'`); got != "2/4" {
		t.Errorf("rotat in c2: %s", got)
	}
	if got := loadtest.One(t, db, `SELECT count(*) FROM postings WHERE chunk_key NOT IN (SELECT chunk_key FROM chunks)`); got != "0" {
		t.Errorf("%s orphan postings", got)
	}
	if got := loadtest.One(t, db, `SELECT string_agg(DISTINCT date::VARCHAR, ',') FROM postings`); got != "2026-05-01" {
		t.Errorf("postings partition %s", got)
	}
	// Loading the same chunks again adds nothing.
	st = loadtest.Load(t, lake, chunk("c1", "The parquet writer flushes row groups", "m", 4, day))
	if st.Rows[layout.TableChunks] != 0 || st.Rows[layout.TablePostings] != 0 || st.Duplicates != 1 {
		t.Errorf("reload: %+v", st)
	}
	// A changed chunk is a new version; the old version's postings no
	// longer match the chunk the view shows.
	loadtest.Load(t, lake, chunk("c1", "The parquet writer compresses pages", "m", 4, day))
	db = loadtest.Views(t, lake)
	if n := loadtest.One(t, db, "SELECT count(*) FROM chunks"); n != "2" {
		t.Errorf("chunks after a new version: %s", n)
	}
	if n := loadtest.One(t, db, "SELECT count(*) FROM chunk_rows"); n != "3" {
		t.Errorf("chunk_rows: %s", n)
	}
	if got := loadtest.One(t, db, `SELECT count(*) FROM postings p JOIN chunks c USING (chunk_key) WHERE term = 'flush'`); got != "0" {
		t.Errorf("stale postings match: %s", got)
	}
	if got := loadtest.One(t, db, `SELECT count(*) FROM postings p JOIN chunks c USING (chunk_key) WHERE term = 'compress'`); got != "1" {
		t.Errorf("new postings: %s", got)
	}
	files, _ := filepath.Glob(filepath.Join(lake, "indexed", "postings", "*", "*", "*.parquet"))
	if len(files) != 2 {
		t.Errorf("%d postings files", len(files))
	}
}

func TestMixedEmbeddingsRefused(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.Load(t, lake, chunk("c1", "first", "model-a", 4, day))
	ms, err := layout.Embeddings(lake)
	if err != nil || len(ms) != 1 || ms[0].Model != "model-a" || ms[0].Dim != 4 {
		t.Fatalf("%v %v", ms, err)
	}
	tryLoad := func(opt load.Options, recs ...*schema.Record) error {
		opt.Lake = lake
		_, err := load.Load(context.Background(), strings.NewReader(string(encodeAll(recs))), opt)
		return err
	}
	for _, other := range []*schema.Record{chunk("c2", "second", "model-b", 4, day), chunk("c3", "third", "model-a", 8, day)} {
		err := tryLoad(load.Options{}, other)
		var me *load.MixedEmbeddingsError
		if !errors.As(err, &me) || !errors.Is(err, load.ErrMixedEmbeddings) || !strings.Contains(err.Error(), "--allow-mixed-embeddings") {
			t.Fatalf("%s: %v", other.ID, err)
		}
	}
	if n := loadtest.One(t, loadtest.Views(t, lake), "SELECT count(*) FROM chunks"); n != "1" {
		t.Errorf("refused chunks were loaded: %s", n)
	}
	if err := tryLoad(load.Options{AllowMixedEmbeddings: true}, chunk("c2", "second", "model-b", 4, day)); err != nil {
		t.Fatal(err)
	}
	ms, _ = layout.Embeddings(lake)
	if len(ms) != 2 || ms[1].Model != "model-b" {
		t.Errorf("models %v", ms)
	}
	// A state file naming a model whose load never finished does not
	// lock the lake: the data decides.
	fresh := t.TempDir()
	layout.WriteEmbeddings(fresh, []layout.EmbeddingModel{{Model: "ghost", Dim: 3}})
	lake = fresh
	if err := tryLoad(load.Options{}, chunk("c1", "first", "model-a", 4, day)); err != nil {
		t.Errorf("stale state: %v", err)
	}
	// Chunks without vectors are welcome anywhere.
	noVec := chunk("c9", "lexical only", "", 0, day)
	noVec.Chunk.Embedding = nil
	if err := tryLoad(load.Options{}, noVec); err != nil {
		t.Error(err)
	}
}

func encodeAll(recs []*schema.Record) []byte {
	var b strings.Builder
	for _, r := range recs {
		b.Write(schema.AppendRecord(nil, r))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func TestVectorSidecar(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	noVec := chunk("c0", "no vector here", "", 0, day)
	noVec.Chunk.Embedding = nil
	recs := []*schema.Record{noVec, chunk("c1", "alpha", "m", 4, day), chunk("c2", "beta gamma", "m", 4, day.Add(time.Minute))}
	recs[2].Chunk.Embedding = []float32{-0.5, 0.25, 0, 1}
	loadtest.Load(t, lake, recs...)
	files, err := layout.PartitionFiles(lake, layout.TableChunks, "", time.Time{}, time.Time{})
	if err != nil || len(files) != 1 {
		t.Fatalf("%v %v", files, err)
	}
	v, err := searchindex.ReadVectors(files[0], true)
	if err != nil {
		t.Fatal(err)
	}
	if v.Rows != 3 || v.Dim != 4 || len(v.Models) != 1 || v.Models[0] != "m" {
		t.Fatalf("%+v", v)
	}
	// The sidecar's rows are the Parquet file's, in order.
	db := loadtest.Views(t, lake)
	rows, err := db.Query(`SELECT chunk_key, id FROM read_parquet(?) ORDER BY file_row_number`, files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for i := 0; rows.Next(); i++ {
		var k int64
		var id string
		rows.Scan(&k, &id)
		if v.Keys[i] != k {
			t.Errorf("row %d: key %d, sidecar %d", i, k, v.Keys[i])
		}
		ids = append(ids, id)
	}
	for i, id := range ids {
		if id == "c0" {
			if v.Model[i] != searchindex.NoModel || v.ScaleAt(i) != 0 {
				t.Errorf("a chunk without a vector has one: %d %v", v.Model[i], v.ScaleAt(i))
			}
			continue
		}
		if v.TS[i] == 0 || v.Model[i] != 0 {
			t.Errorf("row %d: ts %d model %d", i, v.TS[i], v.Model[i])
		}
		if id == "c2" {
			want := []float32{-0.5, 0.25, 0, 1}
			for j, w := range want {
				if got := v.ScaleAt(i) * float32(v.Codes[i*4+j]); got-w > 0.005 || w-got > 0.005 {
					t.Errorf("c2[%d] = %v, want %v", j, got, w)
				}
			}
		}
	}
	// A chunks file without its sidecar says so.
	if meta, err := searchindex.ReadVectors(files[0], false); err != nil || meta.Codes != nil || meta.DL[1] == 0 || meta.Keys[2] != v.Keys[2] {
		t.Errorf("keys and lengths only: %+v %v", meta, err)
	}
	if _, err := searchindex.ReadVectors(filepath.Join(lake, "nope.parquet"), true); !errors.Is(err, searchindex.ErrNoVectors) {
		t.Errorf("missing sidecar: %v", err)
	}
}
