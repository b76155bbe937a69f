package pqread

import (
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// Reading rows into structs: a field tagged `parquet:"name"` takes the
// values of the file's top-level column of that name, whatever its
// repetition, physical integer width or timestamp unit, so that the files
// of every version of a table read alike. A column the file does not have
// reads as NULL, unless it is needed. NULL sets a field to its zero value
// (nil for a pointer, Valid false for sql.NullInt64 and sql.NullBool).
// A []string field reads a list of strings and a []float32 field a list
// of floats (name.list.element).

// field is how a struct field is filled from its column.
type field struct {
	name   string
	offset uintptr
	kind   fieldKind
}

type fieldKind int

const (
	kString fieldKind = iota
	kStringPtr
	kInt64
	kInt32
	kUint8
	kBool
	kNullInt64
	kNullBool
	kTime
	kStrings
	kFloats
)

var (
	timeType      = reflect.TypeFor[time.Time]()
	nullInt64Type = reflect.TypeFor[sql.NullInt64]()
	nullBoolType  = reflect.TypeFor[sql.NullBool]()
)

// fieldsOf lists the tagged fields of T, in their order.
func fieldsOf[T any]() ([]field, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%v is not a struct", t)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("parquet"), ",")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		f := field{name: name, offset: sf.Offset}
		switch ft := sf.Type; {
		case ft == timeType:
			f.kind = kTime
		case ft == nullInt64Type:
			f.kind = kNullInt64
		case ft == nullBoolType:
			f.kind = kNullBool
		case ft.Kind() == reflect.String:
			f.kind = kString
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.String:
			f.kind = kStringPtr
		case ft.Kind() == reflect.Int64:
			f.kind = kInt64
		case ft.Kind() == reflect.Int32:
			f.kind = kInt32
		case ft.Kind() == reflect.Uint8:
			f.kind = kUint8
		case ft.Kind() == reflect.Bool:
			f.kind = kBool
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			f.kind = kStrings
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Float32:
			f.kind = kFloats
		default:
			return nil, fmt.Errorf("%v.%s: cannot read a column into %v", t, sf.Name, ft)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// set stores v, a value of col, in the field of the struct at p.
func (f *field) set(p unsafe.Pointer, col Column, v parquet.Value) {
	at := unsafe.Add(p, f.offset)
	null := v.IsNull()
	switch f.kind {
	case kString:
		*(*string)(at) = ""
		if isBytes(v) {
			*(*string)(at) = string(v.ByteArray())
		}
	case kStringPtr:
		if null || !isBytes(v) {
			*(**string)(at) = nil
		} else {
			s := string(v.ByteArray())
			*(**string)(at) = &s
		}
	case kInt64:
		*(*int64)(at) = col.Int(v)
	case kInt32:
		*(*int32)(at) = int32(col.Int(v))
	case kUint8:
		*(*uint8)(at) = uint8(col.Int(v))
	case kBool:
		*(*bool)(at) = !null && v.Boolean()
	case kNullInt64:
		*(*sql.NullInt64)(at) = sql.NullInt64{Int64: col.Int(v), Valid: !null}
	case kNullBool:
		*(*sql.NullBool)(at) = sql.NullBool{Bool: !null && v.Boolean(), Valid: !null}
	case kTime:
		*(*time.Time)(at) = col.Time(v)
	}
}

// ReadRows appends to out a row of T for each row of pf, each tagged field
// filled from its column. The columns named in need must be in the file.
func ReadRows[T any](pf *parquet.File, out []T, need ...string) ([]T, error) {
	fs, err := fieldsOf[T]()
	if err != nil {
		return out, err
	}
	var flat []field
	var cols []Column
	for _, f := range fs {
		if f.kind == kStrings || f.kind == kFloats {
			continue
		}
		col, err := LookupColumn(pf, f.name, contains(need, f.name))
		if err != nil {
			return out, err
		}
		if col.Index >= 0 { // else NULL: the zero value
			flat, cols = append(flat, f), append(cols, col)
		}
	}
	for _, rg := range pf.RowGroups() {
		base := len(out)
		out, err = readRowGroup(rg, cols, out, 1, nil, func(c int, row []T, v parquet.Value) {
			flat[c].set(unsafe.Pointer(&row[0]), cols[c], v)
		})
		if err != nil {
			return out, err
		}
		rows := out[base:]
		for _, f := range fs {
			var err error
			switch f.kind {
			case kStrings:
				err = ReadStrings(pf, rg, len(rows), nil, func(row int, s string) {
					p := (*[]string)(unsafe.Add(unsafe.Pointer(&rows[row]), f.offset))
					*p = append(*p, s)
				}, f.name, "list", "element")
			case kFloats:
				err = readList(pf, rg, len(rows), nil, parquet.Float, func(row int, v parquet.Value) {
					p := (*[]float32)(unsafe.Add(unsafe.Pointer(&rows[row]), f.offset))
					*p = append(*p, v.Float())
				}, f.name, "list", "element")
			}
			if err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// ReadFile opens the Parquet file at path and appends its rows to out (see
// ReadRows).
func ReadFile[T any](path string, out []T, need ...string) ([]T, error) {
	f, pf, err := Open(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return out, err
	}
	defer f.Close()
	if out, err = ReadRows(pf, out, need...); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// ReadStrings calls fn with each string of a column of strings (a flat
// one, or a list's elements) of a row group of n rows, in order, for the
// rows want says (every row when want is nil); leaf is the column's path.
// A file without the column calls fn for none: its values are NULL.
func ReadStrings(pf *parquet.File, rg parquet.RowGroup, n int, want []bool, fn func(row int, s string), leaf ...string) error {
	return readList(pf, rg, n, want, parquet.ByteArray, func(row int, v parquet.Value) { fn(row, string(v.ByteArray())) }, leaf...)
}

// readList calls fn with each value of a column of the given kind (a flat
// one, or a list's elements) of a row group of n rows, as ReadStrings
// does.
func readList(pf *parquet.File, rg parquet.RowGroup, n int, want []bool, kind parquet.Kind, fn func(row int, v parquet.Value), leaf ...string) error {
	col, ok := pf.Schema().Lookup(leaf...)
	if !ok {
		return nil
	}
	if col.Node.Type().Kind() != kind {
		return fmt.Errorf("%s: not a column of %s", strings.Join(leaf, "."), kind)
	}
	// Repetition level 0 starts a row; a value at the full definition level
	// is an element (below it: NULL, or an empty list).
	row := -1
	return ReadColumns(rg, []Column{{Index: col.ColumnIndex}}, func(_, _ int, v parquet.Value) error {
		if v.RepetitionLevel() == 0 {
			row++
		}
		if row < 0 || row >= n {
			return fmt.Errorf("%s: more values than the row group has rows", leaf[0])
		}
		if v.DefinitionLevel() == col.MaxDefinitionLevel && (want == nil || want[row]) {
			fn(row, v)
		}
		return nil
	})
}

// Cell is a value of a flat column, for code that reads columns by name
// rather than into a struct: a string, an integer, a boolean (Int 1 for
// true) or a timestamp (Int: nanoseconds since 1970). Null is set for a
// NULL and for a column the file does not have.
type Cell struct {
	Str  string
	Int  int64
	Null bool
}

// ReadCells appends to out, for each row of pf, a Cell of each of the
// named columns, row after row; the columns named in need must be in the
// file.
func ReadCells(pf *parquet.File, out []Cell, names []string, need ...string) ([]Cell, error) {
	w := len(names)
	var cols []Column
	var at []int // of each column read, its cell in a row
	missing := make([]bool, w)
	for i, name := range names {
		col, err := LookupColumn(pf, name, contains(need, name))
		if err != nil {
			return out, err
		}
		if missing[i] = col.Index < 0; !missing[i] {
			cols, at = append(cols, col), append(at, i)
		}
	}
	for _, rg := range pf.RowGroups() {
		base := len(out)
		grown := func(out []Cell, from int) {
			for j := from; j < len(out); j++ {
				out[j].Null = missing[(j-base)%w]
			}
		}
		var err error
		out, err = readRowGroup(rg, cols, out, w, grown, func(c int, row []Cell, v parquet.Value) {
			cell := &row[at[c]]
			switch col := cols[c]; {
			case v.IsNull():
				cell.Null = true
			case isBytes(v):
				cell.Str = string(v.ByteArray())
			case v.Kind() == parquet.Boolean:
				if v.Boolean() {
					cell.Int = 1
				}
			case col.Timestamp:
				cell.Int = col.Time(v).UnixNano()
			default:
				cell.Int = col.Int(v)
			}
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// readRowGroup appends the rows of rg to out, w elements a row, calling set
// with each value of cols, its column and the elements of its row. The
// rows are made as values are read, not from the row count the file
// states, which bounds them; grown, unless nil, is called with out each
// time it grows, and the index of its first new element.
func readRowGroup[E any](rg parquet.RowGroup, cols []Column, out []E, w int, grown func(out []E, from int), set func(c int, row []E, v parquet.Value)) ([]E, error) {
	base, n, read := len(out), rg.NumRows(), 0
	err := ReadColumns(rg, cols, func(c, i int, v parquet.Value) error {
		if int64(i) >= n {
			return errors.New("a column has more values than the row group has rows")
		}
		if end := base + (i+1)*w; end > len(out) {
			k := len(out)
			out = grow(out, base, i, n, w)
			if grown != nil {
				grown(out, k)
			}
		}
		read = max(read, i+1)
		set(c, out[base+i*w:base+(i+1)*w], v)
		return nil
	})
	return out[:base+read*w], err
}

// grow makes room in out for row i of a row group of n rows that starts at
// base, w elements a row: twice the rows it has, at least 1024, at most n.
// The rows added are zero; the caller drops those no value was read for.
func grow[E any](out []E, base, i int, n int64, w int) []E {
	rows := max(i+1, 2*(len(out)-base)/w, 1024)
	rows = int(min(int64(rows), n))
	end := base + rows*w
	out = slices.Grow(out, end-len(out))
	k := len(out)
	out = out[:end]
	clear(out[k:])
	return out
}

// isBytes says v is a string's bytes (not NULL, nor of another type).
func isBytes(v parquet.Value) bool {
	return v.Kind() == parquet.ByteArray || v.Kind() == parquet.FixedLenByteArray
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
