package load

import (
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/layout"
)

// readIDs passes the ids and content hashes of one part file to add, a
// row group at a time (the slices are reused), reading only those two
// columns' pages. It is how a load learns what a partition
// holds: an incremental run touches a few rows in each of many partitions,
// and a query engine's per-statement cost would dominate it.
func readIDs(path string, add func(ids, hashes []uint64)) error {
	f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true), parquet.ReadBufferSize(256<<10))
	if err != nil {
		return err
	}
	defer f.Close()
	idCol, ok1 := pf.Schema().Lookup("id")
	hashCol, ok2 := pf.Schema().Lookup("content_hash")
	if !ok1 || !ok2 {
		return fmt.Errorf("%s: no id or content_hash column", path)
	}
	var ids, hashes []uint64
	for _, rg := range pf.RowGroups() {
		cc := rg.ColumnChunks()
		ids, err = columnHashes(cc[idCol.ColumnIndex], ids[:0])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		hashes, err = columnHashes(cc[hashCol.ColumnIndex], hashes[:0])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(ids) != len(hashes) {
			return fmt.Errorf("%s: %d ids but %d content hashes", path, len(ids), len(hashes))
		}
		add(ids, hashes)
	}
	return nil
}

// columnHashes appends the xxhash of each value of a string column chunk.
func columnHashes(cc parquet.ColumnChunk, out []uint64) ([]uint64, error) {
	pages := cc.Pages()
	defer pages.Close()
	buf := make([]parquet.Value, 1024)
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				out = append(out, xxhash.Sum64(v.ByteArray()))
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(p)
				return out, err
			}
		}
		parquet.Release(p)
	}
}
