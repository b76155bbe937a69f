package query

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/load/searchrows"
)

// searchIndexState keeps the lake's search index (searchindex.Index) mapped
// while the DB is open: a search reads its sidecars from the index's
// segments, and those of files no segment holds from their files. A
// search that starts after a load changed the segments maps them again;
// the segments it replaces stay mapped until no search that may read them
// runs.
type searchIndexState struct {
	mu      sync.Mutex
	cur     *searchindex.Index
	key     string
	active  int
	retired []*searchindex.Index
	off     bool // searches read every sidecar from its file (tests compare)
}

// beginSearch brings the index up to date with the lake's segments, for a
// search that then reads it through searchIndex until endSearch.
func (d *DB) beginSearch() {
	s := &d.ix
	key := searchindex.Key(d.lake)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active++
	if s.off || s.cur != nil && key == s.key {
		return
	}
	ix, err := searchindex.Open(d.lake)
	if err != nil {
		return // the sidecar files answer
	}
	if s.cur != nil {
		s.retired = append(s.retired, s.cur)
	}
	s.cur, s.key = ix, key
}

func (d *DB) endSearch() {
	s := &d.ix
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active == 0 {
		for _, ix := range s.retired {
			ix.Close()
		}
		s.retired = nil
	}
}

// searchIndex is the index a search reads (nil: none, every sidecar from
// its file).
func (d *DB) searchIndex() *searchindex.Index {
	d.ix.mu.Lock()
	defer d.ix.mu.Unlock()
	if d.ix.off {
		return nil
	}
	return d.ix.cur
}

func (s *searchIndexState) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ix := range append(s.retired, s.cur) {
		ix.Close()
	}
	s.cur, s.retired, s.key = nil, nil, ""
}

// readChunkMeta reads the metadata of the rows of a chunks file whose keys
// are in keys: from its sidecar (the index's copy, or its file), or from
// the Parquet file when the sidecar has none (an older build's).
func readChunkMeta(ix *searchindex.Index, path string, keys map[int64]bool, fn func(searchrows.ChunkMeta)) error {
	err := ix.ReadRowMeta(path, keys, false, func(key int64, ts time.Time, m searchindex.RowMeta) {
		fn(searchrows.ChunkMeta{Key: key, ID: m.ID, ParentID: m.ParentID, ContentType: m.ContentType, Platform: m.Platform,
			SessionID: m.SessionID, AgentID: m.AgentID, TS: ts})
	})
	if noRowMeta(err) {
		return searchrows.ReadChunkMeta(path, keys, fn)
	}
	return err
}

// noRowMeta tells whether ReadRowMeta failed because the file's sidecar
// holds no rows' metadata (an older build's, or none at all), so the
// Parquet file has to answer.
func noRowMeta(err error) bool {
	return errors.Is(err, searchindex.ErrNoMeta) || errors.Is(err, searchindex.ErrNoVectors)
}

// sidecarTexts hands fill the text and details of the hits whose chunks
// files' sidecars hold them, and returns their keys; the others are read
// from the Parquet files.
func (d *DB) sidecarTexts(ctx context.Context, hits []SearchHit,
	fill func(key int64, text string, idx int64, project, user, machine, tool string)) (map[int64]bool, error) {
	ix := d.searchIndex()
	var files []string
	wanted := map[string]map[int64]bool{}
	for _, h := range hits {
		if wanted[h.file] == nil {
			wanted[h.file] = map[int64]bool{}
			files = append(files, h.file)
		}
		wanted[h.file][h.chunkKey] = true
	}
	type row struct {
		key int64
		m   searchindex.RowMeta
	}
	rows, err := collectFiles(ctx, files, func(_ int, path string, emit func(row)) error {
		err := ix.ReadRowMeta(path, wanted[path], true, func(key int64, _ time.Time, m searchindex.RowMeta) {
			emit(row{key, m})
		})
		if noRowMeta(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	found := map[int64]bool{}
	for _, r := range rows {
		found[r.key] = true
		fill(r.key, r.m.Text, r.m.ChunkIndex, r.m.Project, r.m.User, r.m.Machine, r.m.Tool)
	}
	return found, nil
}

// hitTexts reads the texts of the hits' chunks: from their sidecars, and
// from the Parquet files (chunkTexts) only for chunks files whose sidecars
// have none.
func (d *DB) hitTexts(ctx context.Context, hits []SearchHit) (map[int64]string, error) {
	out := map[int64]string{}
	found, err := d.sidecarTexts(ctx, hits, func(key int64, text string, _ int64, _, _, _, _ string) { out[key] = text })
	if err != nil {
		return nil, err
	}
	var rest []SearchHit
	for _, h := range hits {
		if !found[h.chunkKey] {
			rest = append(rest, h)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	more, err := d.chunkTexts(ctx, rest)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, more)
	return out, nil
}
