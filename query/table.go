package query

import (
	"reflect"
	"strings"
	"time"
)

// Column is a result column: its name and its DuckDB type name (VARCHAR,
// BIGINT, TIMESTAMP WITH TIME ZONE, DATE, VARCHAR[] …), which tells the
// writers how to show it.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Table is a whole result: columns and rows of plain Go values (see
// DB.Stream). It is a RowWriter, so a streamed result can be collected.
type Table struct {
	Columns []Column
	Rows    [][]any
}

// Begin implements RowWriter.
func (t *Table) Begin(cols []Column) error {
	t.Columns = cols
	return nil
}

// Row implements RowWriter.
func (t *Table) Row(vals []any) error {
	t.Rows = append(t.Rows, vals)
	return nil
}

// Names returns the column names.
func (t *Table) Names() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// Index returns the position of the named column, or -1.
func (t *Table) Index(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Select returns a table with only the named columns, in that order;
// names the table does not have are left out.
func (t *Table) Select(names ...string) *Table {
	var idx []int
	out := &Table{}
	for _, n := range names {
		if i := t.Index(n); i >= 0 {
			idx = append(idx, i)
			out.Columns = append(out.Columns, t.Columns[i])
		}
	}
	out.Rows = make([][]any, len(t.Rows))
	for r, row := range t.Rows {
		nr := make([]any, len(idx))
		for j, i := range idx {
			nr[j] = row[i]
		}
		out.Rows[r] = nr
	}
	return out
}

// Drop returns a table without the named columns.
func (t *Table) Drop(names ...string) *Table {
	var keep []string
	for _, c := range t.Columns {
		drop := false
		for _, n := range names {
			drop = drop || c.Name == n
		}
		if !drop {
			keep = append(keep, c.Name)
		}
	}
	return t.Select(keep...)
}

// Write hands the table to a RowWriter.
func (t *Table) Write(w RowWriter) error {
	if err := w.Begin(t.Columns); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := w.Row(r); err != nil {
			return err
		}
	}
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// TableOf makes a table of a slice of structs: a column per exported field
// with a json tag (embedded structs are flattened), named by the tag. A
// zero time and a nil pointer become NULL; a nil slice becomes empty.
func TableOf[T any](items []T) *Table {
	rt := reflect.TypeFor[T]()
	t := &Table{}
	var paths [][]int
	var walk func(rt reflect.Type, prefix []int)
	walk = func(rt reflect.Type, prefix []int) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if !f.IsExported() {
				continue
			}
			path := append(append([]int(nil), prefix...), i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, path)
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			paths = append(paths, path)
			t.Columns = append(t.Columns, Column{Name: name, Type: duckType(f.Type)})
		}
	}
	walk(rt, nil)
	t.Rows = make([][]any, len(items))
	for r, it := range items {
		v := reflect.ValueOf(it)
		row := make([]any, len(paths))
		for j, p := range paths {
			row[j] = plain(v.FieldByIndex(p))
		}
		t.Rows[r] = row
	}
	return t
}

func plain(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return plain(v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return reflect.MakeSlice(v.Type(), 0, 0).Interface()
		}
	case reflect.Struct:
		if v.Type() == timeType {
			tm := v.Interface().(time.Time)
			if tm.IsZero() {
				return nil
			}
			return tm.UTC()
		}
	}
	return v.Interface()
}

// duckType names the DuckDB type a Go field's values correspond to.
func duckType(rt reflect.Type) string {
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	switch {
	case rt == timeType:
		return "TIMESTAMP WITH TIME ZONE"
	case rt.Kind() == reflect.String:
		return "VARCHAR"
	case rt.Kind() == reflect.Bool:
		return "BOOLEAN"
	case rt.Kind() >= reflect.Int && rt.Kind() <= reflect.Uint64:
		return "BIGINT"
	case rt.Kind() == reflect.Float32 || rt.Kind() == reflect.Float64:
		return "DOUBLE"
	case rt.Kind() == reflect.Slice && rt.Elem().Kind() == reflect.String:
		return "VARCHAR[]"
	}
	return "JSON"
}
