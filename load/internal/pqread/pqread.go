// Package pqread reads Parquet files column by column with parquet-go:
// what pos-load and search read of the lake's files in Go, where a query
// engine would spend more opening them than reading the few columns
// wanted. It reads the columns a struct's tags name into rows of that
// struct (ReadRows), or named columns into cells (ReadCells), alike from
// every version of a table's files: a column a file predates reads as
// NULL. It writes nothing.
package pqread

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Open opens the Parquet file at path for reading; the caller closes the
// returned file when done with both.
func Open(path string, opts ...parquet.FileOption) (*os.File, *parquet.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var pf *parquet.File
		if pf, err = parquet.OpenFile(f, st.Size(), opts...); err == nil {
			return f, pf, nil
		}
	}
	f.Close()
	return nil, nil, fmt.Errorf("%s: %w", path, err)
}

// Column is a leaf column of a file, with how to read its values.
type Column struct {
	Index     int // -1: the file has no such column (its values are NULL)
	Unit      time.Duration
	Timestamp bool // a timestamp in Unit
}

// LookupColumn finds a top-level column of pf; without need, a missing one
// reads as NULLs.
func LookupColumn(pf *parquet.File, name string, need bool) (Column, error) {
	c, ok := pf.Schema().Lookup(name)
	if !ok {
		if need {
			return Column{}, fmt.Errorf("no column %s", name)
		}
		return Column{Index: -1}, nil
	}
	col := Column{Index: c.ColumnIndex, Unit: time.Millisecond}
	if lt := c.Node.Type().LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
			col.Unit, col.Timestamp = ts.Unit.Value.Duration(), true
		}
	}
	return col, nil
}

// Int is an integer value of the column (0 for NULL).
func (c Column) Int(v parquet.Value) int64 {
	switch v.Kind() {
	case parquet.Int32:
		return int64(v.Int32())
	case parquet.Int64:
		return v.Int64()
	}
	return 0
}

// Time is a timestamp value of the column in its unit (zero for NULL).
func (c Column) Time(v parquet.Value) time.Time {
	if v.IsNull() {
		return time.Time{}
	}
	return time.Unix(0, v.Int64()*int64(c.Unit)).UTC()
}

// ReadColumns calls fn with each value of the given flat columns of a row
// group: the column's position in cols, the row and the value (NULL for a
// column the file does not have).
func ReadColumns(rg parquet.RowGroup, cols []Column, fn func(c, row int, v parquet.Value) error) error {
	buf := make([]parquet.Value, 1024)
	for ci, col := range cols {
		if col.Index < 0 {
			for i := range int(rg.NumRows()) {
				if err := fn(ci, i, parquet.Value{}); err != nil {
					return err
				}
			}
			continue
		}
		pages := rg.ColumnChunks()[col.Index].Pages()
		row := 0
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return err
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					if ferr := fn(ci, row, v); ferr != nil {
						parquet.Release(p)
						pages.Close()
						return ferr
					}
					row++
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					parquet.Release(p)
					pages.Close()
					return err
				}
			}
			parquet.Release(p)
		}
		pages.Close()
	}
	return nil
}
