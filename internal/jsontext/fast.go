package jsontext

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
)

// Fast is bulk JSON machinery a binary hands to its readers. A nil *Fast
// (or one without functions) works in Go: a portable skipper and
// encoding/json's validator and decoder. A binary that streams records in
// bulk makes one per process with package internal/jsontext/fastjson,
// which fills in sonic's SIMD skipper and validator and its one-pass
// decoder, and passes it to each stage's options. A binary that decodes
// few records (pos-query, pos-mcp) does without: sonic's start-up (its
// package initialisation and the page faults that brings) costs it more
// than sonic would save.
//
// A Fast also counts the bytes of the texts it is asked about with Bulk:
// sonic's decoder for a type is compiled on first use, a cost a process
// that decodes little never earns back, so the first BulkAfter bytes are
// decoded by hand. One Fast per process keeps that rule for the process.
// It is safe for concurrent use; it must not be copied.
type Fast struct {
	// Skip returns the length of the JSON value at the start of b (after
	// any leading spaces), or -1 if it is not one.
	Skip func(b []byte) int
	// Valid reports whether b is one valid JSON value.
	Valid func(b []byte) bool
	// Unmarshal decodes a whole value strictly: an unknown member or a
	// member whose name differs in case is an error.
	Unmarshal func(data []byte, v any) error
	// UnmarshalNested decodes a nested value (a record's chunk and its
	// vector), copying its strings out of data.
	UnmarshalNested func(data []byte, v any) error

	// decoded is how many bytes Bulk has counted.
	decoded atomic.Int64
}

// BulkAfter is how many bytes of texts a Fast counts with Bulk before it
// says they should go to Unmarshal.
const BulkAfter = 16 << 20

// Bulk reports whether a text of n bytes should be decoded by f.Unmarshal:
// false (counting the n bytes) until f has counted BulkAfter bytes, true
// after, and false when f has no Unmarshal.
func (f *Fast) Bulk(n int) bool {
	if f == nil || f.Unmarshal == nil {
		return false
	}
	if f.decoded.Load() < BulkAfter {
		f.decoded.Add(int64(n))
		return false
	}
	return true
}

// ValidJSON reports whether b is one valid JSON value. Like sonic's
// validator, it takes control characters inside strings, which some native
// lines hold raw, so that a text reads the same with Fast or without.
// Unlike it, it refuses a backslash that starts no JSON escape ("\0"), as
// encoding/json, DuckDB and jq do.
//
// sonic stops at 4,095 levels of nesting: what nests deeper is read as
// without Fast, by encoding/json, which stops at 10,000 as pos-scrub's
// parser does, so that every stage takes the same texts.
func (f *Fast) ValidJSON(b []byte) bool {
	if f != nil && f.Valid != nil {
		if f.Valid(b) {
			return ValidEscapes(b)
		}
		if !Deeper(b, fastDepth) {
			return false
		}
	}
	if json.Valid(b) {
		return true
	}
	if bytes.IndexFunc(b, func(r rune) bool { return r < 0x20 }) < 0 {
		return false
	}
	return json.Valid(spaceControls(b))
}

// spaceControls returns a copy of b with each control character inside a
// string made a space, which is valid where it was: sonic takes control
// characters inside strings, and refuses them between tokens (where
// encoding/json takes only its four kinds of white space), as does the
// copy.
func spaceControls(b []byte) []byte {
	return mapControls(b, func(out []byte, _ byte) []byte { return append(out, ' ') })
}

// SkipJSON returns the length of the JSON value at the start of b (after
// any leading spaces), or -1 if it is not one.
func (f *Fast) SkipJSON(b []byte) int {
	if f != nil && f.Skip != nil {
		if n := f.Skip(b); n >= 0 || !Deeper(b, fastDepth) {
			return n
		}
	}
	return f.skipPortable(b)
}

// skipPortable is SkipJSON in Go, without Fast: it balances containers,
// then validates the span.
func (f *Fast) skipPortable(b []byte) int {
	r := Reader{b: b, fast: f}
	r.Space()
	start := r.i
	if r.skipSlow() != nil || !f.ValidJSON(b[start:r.i]) {
		return -1
	}
	return r.i
}

// fastDepth is a nesting below sonic's limit (4,095 levels): a text sonic
// refuses that nests deeper is read again without it.
const fastDepth = 4000

// MaxDepth is encoding/json's limit on nesting, and pos-scrub's.
const MaxDepth = 10000

// UnmarshalCopy decodes the JSON value data into v, with f's
// UnmarshalNested or else encoding/json; v's strings do not share data.
func (f *Fast) UnmarshalCopy(data []byte, v any) error {
	if f != nil && f.UnmarshalNested != nil {
		return f.UnmarshalNested(data, v)
	}
	err := json.Unmarshal(data, v)
	if err != nil && bytes.IndexFunc(data, func(r rune) bool { return r < 0x20 }) >= 0 {
		// sonic takes control characters inside strings, and keeps them;
		// encoding/json takes them escaped. What the failed pass set, this
		// one sets again from the same members.
		err = json.Unmarshal(escapeControls(data), v)
	}
	return err
}

// escapeControls returns b with each control character inside a string
// written as a \u00XX escape, which decodes to the same character.
func escapeControls(b []byte) []byte {
	const hex = "0123456789abcdef"
	return mapControls(b, func(out []byte, ch byte) []byte {
		return append(out, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&0xf])
	})
}

// mapControls returns a copy of b in which f writes each control character
// inside a string. An escaped character is left as it is: a control
// character there starts no escape, and b stays invalid.
func mapControls(b []byte, f func(out []byte, ch byte) []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	in := false
	for i := 0; i < len(b); i++ {
		switch ch := b[i]; {
		case !in:
			in = ch == '"'
		case ch == '"':
			in = false
		case ch == '\\' && i+1 < len(b):
			out = append(out, ch)
			i++
		case ch < 0x20:
			out = f(out, ch)
			continue
		}
		out = append(out, b[i])
	}
	return out
}
