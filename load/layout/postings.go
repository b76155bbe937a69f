package layout

import (
	"cmp"
	"fmt"
	"github.com/pos-lake/pos/load/internal/durable"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// postingsGroupRows is the rows of a postings file's row group: few, so
// that a term's rows are found by the row groups' min/max statistics
// without reading the rest.
const postingsGroupRows = 4 << 10

// PostingsFile is a file of the postings table being written (beside a
// chunks file, or merged from several): its rows are written sorted by
// term and chunk key, under the temporary name Tmp; its writer renames it
// to Path.
type PostingsFile struct {
	Tmp, Path string
	Written   int64 // the rows written, once written
	Made      bool  // Write created the file's directory (or a parent)
	Rows      []searchindex.PostingRow
	isSorted  bool
}

// Add adds a row.
func (pf *PostingsFile) Add(r searchindex.PostingRow) {
	pf.Rows = append(pf.Rows, r)
	pf.isSorted = false
}

// Sorted sorts the postings by term and chunk key, and returns them.
func (pf *PostingsFile) Sorted() []searchindex.PostingRow {
	if !pf.isSorted {
		slices.SortFunc(pf.Rows, func(a, b searchindex.PostingRow) int {
			return cmp.Or(cmp.Compare(a.Term, b.Term), cmp.Compare(a.ChunkKey, b.ChunkKey))
		})
		pf.isSorted = true
	}
	return pf.Rows
}

// Write sorts the postings and writes them under the temporary name.
func (pf *PostingsFile) Write() error {
	pf.Sorted()
	made, err := durable.MkdirAll(filepath.Dir(pf.Tmp))
	if err != nil {
		return err
	}
	pf.Made = pf.Made || made
	f, err := os.OpenFile(pf.Tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[searchindex.PostingRow](f, WriterOptions(parquet.SchemaOf(new(searchindex.PostingRow)),
		parquet.KeyValueMetadata(searchindex.LexicalKey, strconv.Itoa(lexical.Version)))...)
	for rows := pf.Rows; len(rows) > 0; {
		n := min(len(rows), postingsGroupRows)
		if _, err = w.Write(rows[:n]); err == nil {
			err = w.Flush()
		}
		if err != nil {
			break
		}
		rows = rows[n:]
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	pf.Written = int64(len(pf.Rows))
	pf.Rows = nil
	if err != nil {
		os.Remove(pf.Tmp)
		return fmt.Errorf("writing %s: %w", pf.Path, err)
	}
	return nil
}
