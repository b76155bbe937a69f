package jsontext

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Reader decodes one JSON text by hand: the caller walks its objects and
// arrays and takes the values it wants, and the reader skips the rest. It
// is for decoding before a compiled decoder would pay off: sonic compiles
// one per type on first use, a cost in CPU which a small incremental sync
// pays in every process and never earns back, and for values decoded once.
//
// A member whose value is null is passed to the caller's function like any
// other (see Null), so that it can do what sonic does with it: leave a
// string or number as it was, set a pointer to nil, keep a raw value as
// "null". Values are skipped and validated with the reader's Fast.
type Reader struct {
	b []byte
	// s is b as a string, or a copy of it: strings without escapes are
	// substrings of it, so a text's strings share one copy of it, as
	// sonic's do. With clone, they are copied one by one.
	s     string
	i     int
	clone bool
	fast  *Fast
}

// Strings says where the strings a Reader returns live.
type Strings uint8

const (
	// ShareText: strings without escapes are substrings of the text,
	// which must not change while they live.
	ShareText Strings = iota
	// CopyText: they are substrings of one copy of the text.
	CopyText
	// CopyEach: each is copied, so that a small one never keeps a large
	// text alive.
	CopyEach
)

// NewReader returns a reader of the JSON text b that skips and validates
// values with f (which may be nil), its strings living as strs says.
func NewReader(b []byte, f *Fast, strs Strings) Reader {
	r := Reader{b: b, fast: f}
	if strs == CopyText {
		r.s = string(b)
	} else {
		r.s, r.clone = unsafe.String(unsafe.SliceData(b), len(b)), strs == CopyEach
	}
	return r
}

// Walk reads b, one JSON value, with fn, its strings sharing b; it reports
// fn's error, or one when anything but white space follows the value. It
// skips and validates values in Go.
func Walk(b []byte, fn func(r *Reader) error) error {
	return (*Fast)(nil).Walk(b, fn)
}

// Walk is Walk with f's skipper and validator; f may be nil.
func (f *Fast) Walk(b []byte, fn func(r *Reader) error) error {
	r := NewReader(b, f, ShareText)
	if err := fn(&r); err != nil {
		return err
	}
	return r.End("the value")
}

// Fast is the machinery the reader skips and validates with.
func (r *Reader) Fast() *Fast { return r.fast }

// End reports an error unless only white space is left; what names the
// text read in it.
func (r *Reader) End(what string) error {
	r.Space()
	if r.i != len(r.b) {
		return r.Errorf("trailing data after %s", what)
	}
	return nil
}

// Errorf returns an error saying where in the text the reader is.
func (r *Reader) Errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{r.i}, args...)...)
}

// Space moves past white space.
func (r *Reader) Space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\r', '\n':
			r.i++
		default:
			return
		}
	}
}

func (r *Reader) eat(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// Next returns the first byte of the next value (after white space), or 0
// at the end: '"', '{', '[', 'n', 't', 'f', or a number's first byte.
func (r *Reader) Next() byte {
	r.Space()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// Object reads an object, calling fn with each member's key; fn consumes
// the member's value, null included.
func (r *Reader) Object(fn func(key string) error) error {
	return r.items('{', '}', "object", "object member", func() error {
		key, err := r.Str()
		if err != nil {
			return err
		}
		r.Space()
		if !r.eat(':') {
			return r.Errorf("expected ':' after object key")
		}
		r.Space()
		return fn(key)
	})
}

// Array reads an array, calling fn for each element, which fn consumes.
func (r *Reader) Array(fn func() error) error {
	return r.items('[', ']', "array", "array element", fn)
}

// items reads the comma-separated items between open and close (an
// object's members, an array's elements), calling fn for each; fn
// consumes it. kind and item name them in errors.
func (r *Reader) items(open, close byte, kind, item string, fn func() error) error {
	r.Space()
	if !r.eat(open) {
		return r.Errorf("expected a JSON %s", kind)
	}
	r.Space()
	if r.eat(close) {
		return nil
	}
	for {
		r.Space()
		if err := fn(); err != nil {
			return err
		}
		r.Space()
		if r.eat(',') {
			continue
		}
		if r.eat(close) {
			return nil
		}
		return r.Errorf("expected ',' or '%c' after %s", close, item)
	}
}

// Null consumes a null literal if one is next.
func (r *Reader) Null() bool {
	if len(r.b)-r.i >= 4 && r.s[r.i:r.i+4] == "null" {
		r.i += 4
		return true
	}
	return false
}

// Str decodes a string (null: ""). Invalid UTF-8 is kept, as sonic keeps
// it.
func (r *Reader) Str() (string, error) {
	if r.Null() {
		return "", nil
	}
	start, end, esc, err := r.scanString()
	if err != nil {
		return "", err
	}
	if !esc {
		if r.clone {
			return strings.Clone(r.s[start:end]), nil
		}
		return r.s[start:end], nil
	}
	return Unescape(r.b[start:end])
}

// Strings decodes an array of strings.
func (r *Reader) Strings() ([]string, error) {
	var out []string
	err := r.Array(func() error {
		s, err := r.Str()
		out = append(out, s)
		return err
	})
	return out, err
}

// scanString scans a string and returns the bounds of its body and
// whether it holds escapes.
func (r *Reader) scanString() (start, end int, escaped bool, err error) {
	if !r.eat('"') {
		return 0, 0, false, r.Errorf("expected a string")
	}
	start = r.i
	for {
		j := bytes.IndexByte(r.b[r.i:], '"')
		if j < 0 {
			return 0, 0, false, r.Errorf("unterminated string")
		}
		q := r.i + j
		// An odd number of backslashes before the quote escapes it.
		n := 0
		for k := q - 1; k >= start && r.b[k] == '\\'; k-- {
			n++
		}
		r.i = q + 1
		if n%2 == 0 {
			return start, q, bytes.IndexByte(r.b[start:q], '\\') >= 0, nil
		}
	}
}

// Number returns the next token if it is a JSON number.
func (r *Reader) Number() (string, error) {
	j := r.literalEnd()
	if !ValidNumber(r.b[r.i:j]) {
		return "", r.Errorf("expected a number")
	}
	tok := r.s[r.i:j]
	r.i = j
	return tok, nil
}

// Int decodes an integer.
func (r *Reader) Int() (int64, error) {
	tok, err := r.Number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(tok, 10, 64)
}

// Uint decodes an unsigned integer.
func (r *Reader) Uint() (uint64, error) {
	tok, err := r.Number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(tok, 10, 64)
}

// Float decodes a number as a float64.
func (r *Reader) Float() (float64, error) {
	tok, err := r.Number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(tok, 64)
}

// Bool decodes true or false.
func (r *Reader) Bool() (bool, error) {
	switch {
	case len(r.b)-r.i >= 4 && r.s[r.i:r.i+4] == "true":
		r.i += 4
		return true, nil
	case len(r.b)-r.i >= 5 && r.s[r.i:r.i+5] == "false":
		r.i += 5
		return false, nil
	}
	return false, r.Errorf("expected true or false")
}

// Time decodes an RFC 3339 time string as time.Time's UnmarshalJSON
// (sonic's) does, strictly; "" (and null) is the zero time.
func (r *Reader) Time() (t time.Time, err error) {
	s, err := r.Str()
	if err != nil || s == "" {
		return time.Time{}, err
	}
	if err = t.UnmarshalText([]byte(s)); err == nil && !TimeInRange(t) {
		err = fmt.Errorf("time %q is out of range (years 0 to 9999 in UTC)", s)
	}
	return t, err
}

// TimeInRange reports whether a time's UTC year is 0 to 9999, the times
// RFC 3339 can write.
func TimeInRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// Raw moves past the next value and returns it as it is written, not
// copied.
func (r *Reader) Raw() ([]byte, error) {
	start := r.i
	if err := r.Skip(); err != nil {
		return nil, err
	}
	return r.b[start:r.i], nil
}

// ValidRaw is Raw for a value that must be valid JSON in full: Raw checks
// only that containers balance.
func (r *Reader) ValidRaw() ([]byte, error) {
	val, err := r.Raw()
	if err == nil && !r.fast.ValidJSON(val) {
		err = invalidValue(val)
	}
	return val, err
}

// SkipValid moves past the next value, which must be valid JSON.
func (r *Reader) SkipValid() error {
	_, err := r.ValidRaw()
	return err
}

// invalidValue says why ValidJSON refused val.
func invalidValue(val []byte) error {
	if !ValidEscapes(val) {
		return errors.New("invalid JSON value: a backslash that starts no escape")
	}
	if Deeper(val, MaxDepth) {
		return errors.New("invalid JSON value: nested deeper than 10,000 levels")
	}
	return errors.New("invalid JSON value")
}

// Skip moves past the next value. Containers are checked for balance here
// and validated in full by whoever decodes them.
func (r *Reader) Skip() error {
	n := r.fast.SkipJSON(r.b[r.i:])
	if n < 0 {
		if Deeper(r.b[r.i:], MaxDepth) {
			return r.Errorf("invalid JSON value: nested deeper than 10,000 levels")
		}
		return r.Errorf("invalid JSON value")
	}
	r.i += n
	return nil
}

// literalEnd is the end of the literal (number, true, false, null) at r.i:
// the next delimiter or space.
func (r *Reader) literalEnd() int {
	j := r.i
	for j < len(r.b) {
		switch r.b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// skipSlow is Skip in Go, without Fast.
func (r *Reader) skipSlow() error {
	if r.i >= len(r.b) {
		return r.Errorf("unexpected end of record")
	}
	switch c := r.b[r.i]; c {
	case '"':
		_, _, _, err := r.scanString()
		return err
	case '{', '[':
		depth := 0
		for r.i < len(r.b) {
			switch r.b[r.i] {
			case '"':
				if _, _, _, err := r.scanString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					r.i++
					return nil
				}
			}
			r.i++
		}
		return r.Errorf("unterminated %c", c)
	default:
		j := r.literalEnd()
		if !r.fast.ValidJSON(r.b[r.i:j]) {
			return r.Errorf("invalid value %q", r.b[r.i:j])
		}
		r.i = j
		return nil
	}
}
