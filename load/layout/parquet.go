package layout

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/load/internal/pqread"
	"github.com/pos-lake/pos/load/internal/zstdcodec"
	"github.com/pos-lake/pos/schema"
)

// Limits of every Parquet file of the lake's tables.
const (
	RowGroupRows = 50_000  // a row group holds at most this many rows
	PageBytes    = 1 << 20 // a column's page is compressed when it holds this much
)

// WriterOptions are the Parquet settings of every file pos-load writes with
// rows of sch: zstd pages, pos's name and schema version in the metadata,
// then more.
//
// Two of parquet-go's defaults (v0.32.0) are turned off. Page statistics:
// each data page's header would hold the page's smallest and largest values
// whole, twice (the deprecated fields and their successors); DuckDB prunes
// by the column chunks' statistics in the footer, which stay. And the
// bounds of blob columns (blobColumns): the smallest and largest raw line
// or prompt of a chunk prune no query, parquet-go compares every value of
// a page to find them and keeps them whole in the footer; those columns
// keep their null counts. Without either the lake is markedly smaller.
func WriterOptions(sch *parquet.Schema, more ...parquet.WriterOption) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(&zstdcodec.Page),
		parquet.CreatedBy("pos", schema.Version, ""),
		parquet.KeyValueMetadata("pos.schema", schema.Version),
		parquet.DataPageStatistics(false),
	}
	for _, path := range sch.Columns() {
		if blobColumns[path[len(path)-1]] {
			opts = append(opts, parquet.SkipPageBounds(path...))
		}
	}
	return append(opts, more...)
}

// PartWriterOptions are the settings of a table's part files, however
// they are written (pos-load's lanes, compaction's merge, the catalog's
// zero-row schema files): WriterOptions with pages buffered up to
// PageBytes, then more.
func PartWriterOptions(sch *parquet.Schema, more ...parquet.WriterOption) []parquet.WriterOption {
	return WriterOptions(sch, append([]parquet.WriterOption{parquet.PageBufferSize(PageBytes)}, more...)...)
}

// blobColumns are the leaf names of the columns that hold long free text
// or JSON (a message's text, a tool's input, a raw line), in every table.
var blobColumns = map[string]bool{
	"raw": true, "record": true, "text": true, "thinking": true, "prompt": true, "response": true,
	"input": true, "output": true, "context": true, "meta": true, "extra": true,
}

// OpenParquet opens the Parquet file at path for reading; the caller
// closes the returned file when done with both.
func OpenParquet(path string, opts ...parquet.FileOption) (*os.File, *parquet.File, error) {
	return pqread.Open(path, opts...)
}

func HasParquet(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// PartitionFiles lists the Parquet files of a table's partitions of a
// platform ("": every platform) whose date is within [since, until] (zero:
// unbounded), by their directory names alone. Searches read these files
// instead of a glob over the whole table, which DuckDB would list and prune
// file by file on every query.
func PartitionFiles(lake, table, platform string, since, until time.Time) ([]string, error) {
	return (*Listing)(nil).PartitionFiles(lake, table, platform, since, until)
}

// AppendParquetFiles appends the paths of the Parquet files in dir, in
// name order, to out.
func AppendParquetFiles(out []string, dir string) ([]string, error) {
	return (*Listing)(nil).AppendParquetFiles(out, dir)
}

func FileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// PartFiles lists the Parquet files of one partition of a table (none
// when it has no directory; files being written end in .tmp).
func PartFiles(lake, table, platform, date string) ([]string, error) {
	return filepath.Glob(filepath.Join(fsglob.Quote(Dir(lake, table, platform, date)), "*.parquet"))
}

// WriteParquetFile writes rows to a new file at path, the user's alone,
// with WriterOptions, and syncs it.
func WriteParquetFile[T any](path string, rows []T, opts ...parquet.WriterOption) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[T](f, WriterOptions(parquet.SchemaOf(new(T)), opts...)...)
	err = WriteRows(w, rows)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
