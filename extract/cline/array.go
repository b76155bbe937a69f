package cline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
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

// elements streams the JSON array in r, calling fn with each element's
// index, the byte offset of its first byte and its bytes, compacted to one
// line and made valid UTF-8 (fn may keep them). Compact one-line files and
// pretty-printed ones read the same. Memory is bounded by the largest
// element: the array is never held whole.
//
// It returns the offset just past the last element read whole (past the
// closing bracket when the array is complete) and, when the array is not
// read to its end, why: fn's error, errNotArray, an *elemError for broken
// JSON, or an error for which truncated is true when the input ends early.
// Data after the closing bracket is an error too.
func elements(r io.Reader, fn func(i int, off int64, raw []byte) error) (int64, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // an empty file: not written yet
		}
		return 0, &elemError{Index: 0, Err: err}
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return 0, errNotArray
	}
	end := dec.InputOffset()
	var buf bytes.Buffer
	i := 0
	for ; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return end, &elemError{Index: i, Err: err}
		}
		next := dec.InputOffset()
		off := next - int64(len(raw))
		if err := fn(i, off, oneLine(&buf, raw)); err != nil {
			return end, err
		}
		end = next
	}
	n := i // an error after the last element is reported at the next index
	tok, err = dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return end, &elemError{Index: n, Err: err}
	}
	if d, ok := tok.(json.Delim); !ok || d != ']' {
		return end, &elemError{Index: n, Err: fmt.Errorf("unexpected %v", tok)}
	}
	end = dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return end, &elemError{Index: n, Err: errors.New("data after the end of the array")}
	}
	return end, nil
}

// oneLine returns raw on one line and valid UTF-8: raw itself when it is,
// else a compacted copy.
func oneLine(buf *bytes.Buffer, raw []byte) []byte {
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	buf.Reset()
	if err := json.Compact(buf, raw); err != nil {
		return raw
	}
	return bytes.Clone(buf.Bytes())
}
