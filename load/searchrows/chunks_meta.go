package searchrows

import (
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/internal/pqread"
	"github.com/pos-lake/pos/load/layout"
)

// ChunkMeta is what search reads of a candidate chunk before its text.
type ChunkMeta struct {
	Key                                 int64
	ID, ParentID, ContentType, Platform string
	SessionID, AgentID                  string
	TS                                  time.Time
}

// chunkMetaColumns are the chunks columns ChunkMeta holds, chunk_key first.
var chunkMetaColumns = []string{"chunk_key", "id", "parent_id", "content_type", "platform", "session_id", "agent_id", "ts"}

// ReadChunkMeta calls fn, in row order, with the metadata of the rows of
// the chunks file at path whose chunk_key is in keys. Only the small
// columns are read, and of a row group without such a row only its keys:
// a search asks this of the hundred or so files its candidates are in,
// where opening each with DuckDB would cost more than the reading.
func ReadChunkMeta(path string, keys map[int64]bool, fn func(ChunkMeta)) error {
	f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return err
	}
	defer f.Close()
	cols := make([]pqread.Column, len(chunkMetaColumns))
	for i, name := range chunkMetaColumns {
		if cols[i], err = pqread.LookupColumn(pf, name, i < 2); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	var found map[int]*ChunkMeta // row -> its metadata, in this row group
	for _, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		clear(found)
		err := pqread.ReadColumns(rg, cols[:1], func(_, row int, v parquet.Value) error {
			if row >= n {
				return fmt.Errorf("a column has more values than the row group has rows")
			}
			if k := v.Int64(); !v.IsNull() && keys[k] {
				if found == nil {
					found = map[int]*ChunkMeta{}
				}
				found[row] = &ChunkMeta{Key: k}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(found) == 0 {
			continue
		}
		err = pqread.ReadColumns(rg, cols[1:], func(c, row int, v parquet.Value) error {
			m := found[row]
			if m == nil || v.IsNull() {
				return nil
			}
			switch c + 1 {
			case 1:
				m.ID = string(v.ByteArray())
			case 2:
				m.ParentID = string(v.ByteArray())
			case 3:
				m.ContentType = string(v.ByteArray())
			case 4:
				m.Platform = string(v.ByteArray())
			case 5:
				m.SessionID = string(v.ByteArray())
			case 6:
				m.AgentID = string(v.ByteArray())
			case 7:
				m.TS = cols[7].Time(v)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for row := range n {
			if m := found[row]; m != nil {
				fn(*m)
			}
		}
	}
	return nil
}
