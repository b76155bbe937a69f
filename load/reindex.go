package load

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/internal/pqread"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
)

// IndexChunks gives each chunks part file of the lake that has no vector
// sidecar its postings and sidecar, removes the postings and sidecars of
// chunks files no longer there, and brings the search index up to date.
// It is for lakes whose chunks files something other than pos-load put in
// place (a cache fetched from a shared lake), which search would otherwise
// read without their lexical index. The caller keeps other writers away
// from the lake. It returns how many chunks files it indexed.
func IndexChunks(lake string) (int, error) {
	parts, err := layout.TablePartitions(lake, layout.TableChunks)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pk := range parts {
		files, err := layout.PartFiles(lake, layout.TableChunks, pk.Platform, pk.Date)
		if err != nil {
			return n, err
		}
		p := &partition{PartKey: pk, dir: layout.Dir(lake, layout.TableChunks, pk.Platform, pk.Date)}
		for _, f := range files {
			if _, err := os.Stat(searchindex.NewSidecarWriter(f).Path()); err == nil {
				continue
			}
			if err := indexChunksFile(lake, p, f); err != nil {
				return n, err
			}
			n++
		}
	}
	if err := removeOrphanIndexes(lake); err != nil {
		return n, err
	}
	return n, updateSearchIndex(nil, lake, newRunID(time.Now()))
}

// indexChunksFile writes one chunks file's postings and sidecar.
func indexChunksFile(lake string, p *partition, path string) error {
	rows, err := pqread.ReadFile[layout.ChunkRow](path, nil, "id", "chunk_key", "text")
	if err != nil {
		return err
	}
	x := newChunkIndex(lake, p, filepath.Base(path))
	for i := range rows {
		r := &rows[i]
		n := x.post.add(r.ChunkKey, r.Text)
		x.vecs.Add(r.ChunkKey, r.TS, n, r.Model, r.Embedding)
		x.vecs.AddMeta(rowMeta(r))
	}
	if err := x.write(); err != nil {
		return err
	}
	if _, err := x.publish(); err != nil {
		x.abort()
		return err
	}
	return nil
}

// removeOrphanIndexes removes the postings files and vector sidecars whose
// chunks file is gone.
func removeOrphanIndexes(lake string) error {
	var gone []string
	for _, t := range []string{layout.TablePostings, layout.TableChunks} {
		root := layout.TableDir(lake, t)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			chunks := ""
			switch {
			case t == layout.TablePostings && strings.HasSuffix(path, ".parquet"):
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				chunks = filepath.Join(layout.TableDir(lake, layout.TableChunks), rel)
			case t == layout.TableChunks && strings.HasSuffix(path, searchindex.VectorsExt):
				chunks = strings.TrimSuffix(path, searchindex.VectorsExt) + ".parquet"
			default:
				return nil
			}
			if _, err := os.Stat(chunks); errors.Is(err, fs.ErrNotExist) {
				gone = append(gone, path)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, f := range gone {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
