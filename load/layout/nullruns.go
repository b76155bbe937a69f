package layout

import (
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// WriteRows hands rows to w in as few calls as parquet-go v0.32.0 allows.
//
// parquet-go (writeRowsFuncOfOptional) writes an optional field that is not
// a pointer, a time or a list through a bitmap of each Write's rows (bit set:
// the value is not zero), in runs of nulls and non-nulls. At a run of
// values that starts at bit y (0 < y < 32) of a bitmap word, it compares
// what follows with (1<<y)-1 instead of testing for the rest of the word:
// a run of exactly y values followed by zeros only takes the rest of the
// word as values, and the zero values after it in the same Write ("", 0)
// are written as non-null instead of nulls. A Write of one or two rows
// never meets it, and writing two at a time cost pos-load ~1 s of CPU on
// 1.8 GB of records. Instead, each call ends where the bug would first
// misread a field (nullRuns.safe): at the end of such a run, which parquet-go
// then clamps to the call's last row and reads right.
func WriteRows[T any](w *parquet.GenericWriter[T], rows []T) error {
	p := nullRunsOf(reflect.TypeFor[T](), w.Schema())
	for len(rows) > 0 {
		n := p.safe(unsafe.Pointer(unsafe.SliceData(rows)), unsafe.Sizeof(rows[0]), len(rows))
		if _, err := w.Write(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// nullRuns lists the fields of a row type that parquet-go writes through
// its bitmap of runs: where each lies in the row and how many bytes of it
// its null test reads.
type nullRuns struct {
	fields []nullField
	// opaque is set when the row type has an optional field this code does
	// not know how parquet-go tests; such rows are written two at a time.
	opaque bool
}

// nullField is a field whose value is null when the size bytes at off are
// all zero: a number's value, a string's length, a byte slice's pointer.
type nullField struct {
	off, size uintptr
}

type nullRunsKey struct {
	t reflect.Type
	s *parquet.Schema
}

var nullRunsCache sync.Map // nullRunsKey → *nullRuns

func nullRunsOf(t reflect.Type, s *parquet.Schema) *nullRuns {
	key := nullRunsKey{t, s}
	if p, ok := nullRunsCache.Load(key); ok {
		return p.(*nullRuns)
	}
	p := &nullRuns{}
	if t.Kind() != reflect.Struct {
		p.opaque = true
	} else {
		p.add(t, s, nil, 0)
	}
	v, _ := nullRunsCache.LoadOrStore(key, p)
	return v.(*nullRuns)
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// add finds the bitmap-written fields of struct t at byte offset base and
// column path path. It follows parquet-go's choice (writeRowsFuncOfStruct):
// an optional field goes through the bitmap unless it is a pointer, an
// interface, a time, a json.RawMessage or a slice other than []byte.
func (p *nullRuns) add(t reflect.Type, s *parquet.Schema, path []string, base uintptr) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			// parquet-go lays an embedded struct's columns out in its
			// parent's (appendStructFields).
			p.add(f.Type, s, path, base+f.Offset)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		col := append(path[:len(path):len(path)], name)
		node := nodeAt(s, col)
		if node == nil {
			p.opaque = true // not a column parquet-go would find either
			return
		}
		ft := f.Type
		if !node.Optional() {
			switch {
			case ft.Kind() == reflect.Struct && ft != timeType:
				p.add(ft, s, col, base+f.Offset)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				// List elements are written row by row, each row's list
				// through the bitmap: no split of the rows mends that, so
				// such elements must hold no optional field.
				if hasOptional(s, append(col, "list", "element")) {
					p.opaque = true
				}
			}
			continue
		}
		switch k := ft.Kind(); {
		case k == reflect.Pointer, k == reflect.Interface, ft == timeType, ft == rawType:
		case k == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			// Written row by row (writeRowsFuncOfOptional's slice case),
			// or as a list's elements.
		case k == reflect.String:
			p.fields = append(p.fields, nullField{base + f.Offset + unsafe.Sizeof(uintptr(0)), unsafe.Sizeof(0)})
		case k == reflect.Slice:
			p.fields = append(p.fields, nullField{base + f.Offset, unsafe.Sizeof(uintptr(0))})
		case k == reflect.Bool || (k >= reflect.Int && k <= reflect.Uint64):
			p.fields = append(p.fields, nullField{base + f.Offset, ft.Size()})
		default:
			// Floats among them: parquet-go's portable null test takes -0
			// for zero, its amd64 one does not.
			p.opaque = true
		}
	}
}

// nodeAt is the node (a column or a group) at path in s, or nil.
func nodeAt(s *parquet.Schema, path []string) parquet.Node {
	var n parquet.Node = s
	for _, name := range path {
		var next parquet.Node
		for _, f := range n.Fields() {
			if f.Name() == name {
				next = f
				break
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// hasOptional reports whether the group at path in s has an optional field
// (true when there is no such group).
func hasOptional(s *parquet.Schema, path []string) bool {
	n := nodeAt(s, path)
	if n == nil {
		return true
	}
	var walk func(parquet.Node) bool
	walk = func(n parquet.Node) bool {
		for _, f := range n.Fields() {
			if f.Optional() || (!f.Leaf() && walk(f)) {
				return true
			}
		}
		return false
	}
	return walk(n)
}

// safe returns how many of the n rows at base (each size bytes long) one
// Write takes without misreading a null: all n, or fewer ending where a
// field's bitmap would first be misread. Cutting the rows there changes the
// bitmaps of the other fields' last words, so the check runs again on what
// is left until no field objects. Two rows or fewer are always safe.
func (p *nullRuns) safe(base unsafe.Pointer, size uintptr, n int) int {
	if p.opaque {
		return min(n, 2)
	}
	for again := true; again && n > 2; {
		again = false
		for _, f := range p.fields {
			if k := f.cut(base, size, n); k < n {
				n, again = k, true
			}
		}
	}
	return n
}

// cut returns the row at which parquet-go first misreads field f in a Write
// of the n rows at base, the end of the run it takes too far; n when none.
func (f nullField) cut(base unsafe.Pointer, size uintptr, n int) int {
	for x := 0; x*64 < n; x++ {
		var w uint64
		for y := range min(64, n-x*64) {
			if f.set(unsafe.Add(base, uintptr(x*64+y)*size)) {
				w |= 1 << y
			}
		}
		if w == 0 {
			continue
		}
		// Only the word's last run of values can be followed by zeros to
		// the end of the word.
		hi := 63 - bits.LeadingZeros64(w)
		below := ^w & (1<<hi - 1) // zeros below the last set bit
		if below == 0 {
			continue // the run starts at bit 0: read right
		}
		y := 64 - bits.LeadingZeros64(below) // the run's first bit
		if y < 32 && hi == 2*y-1 && x*64+2*y < n {
			return x*64 + 2*y
		}
	}
	return n
}

func (f nullField) set(p unsafe.Pointer) bool {
	b := unsafe.Slice((*byte)(unsafe.Add(p, f.off)), f.size)
	for _, c := range b {
		if c != 0 {
			return true
		}
	}
	return false
}
