package schema

import "unsafe"

// Walker decodes one JSON text by hand: the caller walks its objects and
// arrays and takes the values it wants, and the walker skips the rest. It
// is for the decoding a process does before a compiled decoder would pay
// off: sonic compiles one per type on first use, a cost in CPU which a
// small incremental sync pays in every process and never earns back, and
// for values decoded once.
//
// Strings without escapes are substrings of the text, which must not
// change while they live. A member whose value is null is passed to the
// caller's function like any other (see Null), so that it can do what
// sonic does with it: leave a string or number as it was, set a pointer
// to nil, keep a raw value as "null".
type Walker struct{ d mdec }

// WalkValue walks b, one JSON value, with fn; it reports fn's error, or
// one when anything but white space follows the value. It skips and
// validates values in Go.
func WalkValue(b []byte, fn func(w *Walker) error) error {
	return (*Fast)(nil).WalkValue(b, fn)
}

// WalkValue is WalkValue with f's skipper and validator; f may be nil.
func (f *Fast) WalkValue(b []byte, fn func(w *Walker) error) error {
	w := Walker{d: mdec{scanner: scanner{b: b, fast: f}, s: unsafe.String(unsafe.SliceData(b), len(b))}}
	if err := fn(&w); err != nil {
		return err
	}
	w.d.ws()
	if w.d.i != len(w.d.b) {
		return w.d.errf("trailing data after the value")
	}
	return nil
}

// Object walks an object, calling fn with each member's key; fn consumes
// the member's value (with one of the methods below, or Skip).
func (w *Walker) Object(fn func(key string) error) error { return w.d.members(fn) }

// Array walks an array, calling fn for each element, which fn consumes.
func (w *Walker) Array(fn func() error) error {
	return w.d.array(func(*mdec) error { return fn() })
}

// Next returns the first byte of the next value (after white space), or 0
// at the end: '"', '{', '[', 'n', 't', 'f', or a number's first byte.
func (w *Walker) Next() byte {
	w.d.ws()
	if w.d.i < len(w.d.b) {
		return w.d.b[w.d.i]
	}
	return 0
}

// Null consumes a null if one is next.
func (w *Walker) Null() bool { return w.d.null() }

// Str decodes a string; null is "".
func (w *Walker) Str() (string, error) { return w.d.str() }

// Int decodes an integer.
func (w *Walker) Int() (int64, error) { return w.d.int() }

// Bool decodes true or false.
func (w *Walker) Bool() (bool, error) { return w.d.bool() }

// Raw returns the next value as it is written, not copied.
func (w *Walker) Raw() ([]byte, error) { return w.d.value() }

// Skip moves past the next value.
func (w *Walker) Skip() error { return w.d.skip() }
