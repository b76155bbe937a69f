package cline

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// errNotArray is returned when a file's top-level value is not a JSON array.
var errNotArray = errors.New("not a JSON array")

// errStop ends a walk over an array early without an error.
var errStop = errors.New("stop")

// elemError is a syntax error inside (or right after) the element at Index:
// the JSON is broken there and the rest of the array cannot be read.
type elemError struct {
	Index int
	Err   error
}

func (e *elemError) Error() string {
	return fmt.Sprintf("element %d: invalid JSON: %v", e.Index, e.Err)
}
func (e *elemError) Unwrap() error { return e.Err }

// truncated reports whether an error from elements means that the input
// ended in the middle of the array (a file being written): the elements
// before are complete, the rest is for a later run.
func truncated(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// elem is one element of a history file's array.
type elem struct {
	i   int
	off int64 // of its first byte
	// raw is the element as the raw layer keeps it (extract.RawJSON: on
	// one line, strict, nested too deeply: one JSON string), and rep what
	// that changed; raw is nil and bad says why when the element is not
	// JSON (its brackets match, so the array is read on).
	raw []byte
	rep schema.Repairs
	bad error
}

// elements streams the JSON array in r, calling fn with each element
// (fn may keep its raw bytes). Compact one-line files and pretty-printed
// ones read the same; a UTF-8 byte order mark at the start is passed
// over. Memory is bounded by the largest element: the array is never held
// whole. Elements are told apart by their brackets and quotes alone,
// without a limit on nesting, so one element that is too deep for a JSON
// decoder, or not JSON, does not end the reading.
//
// It returns the offset just past the last element read whole (past the
// closing bracket when the array is complete) and, when the array is not
// read to its end, why: fn's error, errNotArray, an *elemError where the
// brackets do not match (the rest cannot be told apart), or an error for
// which truncated is true when the input ends early. Data after the
// closing bracket is an error too.
func elements(r io.Reader, fn func(e elem) error) (int64, error) {
	a := &arrayReader{r: r}
	j := a.blanks(0)
	if c, ok := a.at(j); !ok {
		return 0, &elemError{Index: 0, Err: a.endErr()} // an empty file: not written yet
	} else if c != '[' {
		return 0, errNotArray
	}
	end := a.off(j + 1)
	j = a.blanks(j + 1)
	for n := 0; ; n++ {
		c, ok := a.at(j)
		if !ok {
			return end, &elemError{Index: n, Err: a.endErr()}
		}
		if c == ']' && n == 0 {
			return a.close(j, n)
		}
		j = a.drop(j)
		k, err := a.value(j)
		if err != nil {
			return end, &elemError{Index: n, Err: err}
		}
		e := elem{i: n, off: a.off(j)}
		e.raw, e.rep, e.bad = extract.RawJSON(a.buf[j:k])
		if err := fn(e); err != nil {
			return end, err
		}
		end = a.off(k)
		j = a.blanks(k)
		c, ok = a.at(j)
		switch {
		case !ok:
			return end, &elemError{Index: n + 1, Err: a.endErr()}
		case c == ']':
			return a.close(j, n+1)
		case c != ',':
			return end, &elemError{Index: n + 1, Err: fmt.Errorf("unexpected %q after an element", c)}
		}
		j = a.blanks(j + 1)
		if c, ok := a.at(j); ok && c == ']' {
			return end, &elemError{Index: n + 1, Err: errors.New("unexpected ']' after ','")}
		}
	}
}

// arrayReader holds the input of elements from the start of the element
// being read.
type arrayReader struct {
	r    io.Reader
	buf  []byte
	base int64 // the offset of buf[0]
	err  error // what ended the input: io.EOF, or a read error
}

// off is the file offset of buf[i].
func (a *arrayReader) off(i int) int64 { return a.base + int64(i) }

// endErr says why the input ended: io.ErrUnexpectedEOF at its end.
func (a *arrayReader) endErr() error {
	if a.err == nil || errors.Is(a.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return a.err
}

// at returns buf[i], reading more input as needed; ok is false when the
// input ends first.
func (a *arrayReader) at(i int) (byte, bool) {
	for i >= len(a.buf) {
		if !a.fill() {
			return 0, false
		}
	}
	return a.buf[i], true
}

// fill reads more input; false when there is no more.
func (a *arrayReader) fill() bool {
	if a.err != nil {
		return false
	}
	if len(a.buf) == cap(a.buf) {
		nb := make([]byte, len(a.buf), max(64<<10, 2*cap(a.buf)))
		copy(nb, a.buf)
		a.buf = nb
	}
	for empty := 0; empty < 100; empty++ { // as bufio.Reader gives up
		n, err := a.r.Read(a.buf[len(a.buf):cap(a.buf)])
		a.buf = a.buf[:len(a.buf)+n]
		if err != nil {
			a.err = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
	a.err = io.ErrNoProgress
	return false
}

// drop forgets the input before buf[i], which starts an element, and
// returns i's new index.
func (a *arrayReader) drop(i int) int {
	if i < 64<<10 || i < len(a.buf)/2 {
		return i // little to gain
	}
	n := copy(a.buf, a.buf[i:])
	a.buf = a.buf[:n]
	a.base += int64(i)
	return 0
}

// blanks returns the index of the first byte at or after i that is not
// JSON white space (nor, at the start of the input, a byte order mark).
func (a *arrayReader) blanks(i int) int {
	if i == 0 && a.base == 0 {
		if c, ok := a.at(0); ok && c == 0xEF {
			if b, ok := a.at(1); ok && b == 0xBB {
				if d, ok := a.at(2); ok && d == 0xBF {
					i = 3
				}
			}
		}
	}
	for {
		c, ok := a.at(i)
		if !ok || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return i
		}
		i++
	}
}

// close reads the end of the array at buf[i] (its ']'), after n elements:
// nothing but white space may follow.
func (a *arrayReader) close(i, n int) (int64, error) {
	end := a.off(i + 1)
	if _, ok := a.at(a.blanks(i + 1)); ok {
		return end, &elemError{Index: n, Err: errors.New("data after the end of the array")}
	}
	if !errors.Is(a.err, io.EOF) {
		return end, &elemError{Index: n, Err: a.err}
	}
	return end, nil
}

// value returns the index just past the value that starts at buf[i]: a
// string up to its closing quote, an array or object up to the bracket
// that closes it (the brackets between must pair up), anything else up to
// the next delimiter. Whether it is valid JSON is for the caller to check.
func (a *arrayReader) value(i int) (int, error) {
	c := a.buf[i]
	switch c {
	case '"':
		return a.str(i + 1)
	case '{', '[':
		want := []byte{closer(c)}
		for j := i + 1; ; {
			c, ok := a.at(j)
			if !ok {
				return j, a.endErr()
			}
			switch c {
			case '"':
				k, err := a.str(j + 1)
				if err != nil {
					return k, err
				}
				j = k
				continue
			case '{', '[':
				want = append(want, closer(c))
			case '}', ']':
				if c != want[len(want)-1] {
					return j, fmt.Errorf("unexpected %q", c)
				}
				if want = want[:len(want)-1]; len(want) == 0 {
					return j + 1, nil
				}
			}
			j++
		}
	}
	for j := i; ; j++ {
		c, ok := a.at(j)
		if !ok {
			return j, a.endErr() // the array is not closed
		}
		switch c {
		case ',', ']', '}', '[', '{', '"', ' ', '\t', '\n', '\r':
			if j == i {
				return j, fmt.Errorf("unexpected %q", c)
			}
			return j, nil
		}
	}
}

// str returns the index just past the closing quote of the string whose
// body starts at buf[i].
func (a *arrayReader) str(i int) (int, error) {
	for j := i; ; {
		q := bytes.IndexByte(a.buf[j:], '"')
		if q < 0 {
			j = len(a.buf)
			if !a.fill() {
				return j, a.endErr()
			}
			continue
		}
		q += j
		n := 0 // backslashes before the quote: an odd number escapes it
		for k := q - 1; k >= i && a.buf[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}
