package schema

import (
	"bytes"
	"encoding/json"
	"sync/atomic"

	"github.com/pos-lake/pos/internal/jsontext"
)

// Fast is bulk JSON machinery a binary hands to the decoders. A nil *Fast
// (or one without functions) decodes in Go: the member-by-member decoder, a
// portable skipper and encoding/json's validator. A binary that streams
// records in bulk makes one per process with package schema/fastjson,
// which fills in sonic's SIMD skipper and validator and its one-pass
// decoder, and passes it to each stage's options. A binary that decodes few
// records (pos-query, pos-mcp) does without: sonic's start-up (its package
// initialisation and the page faults that brings) costs it more than sonic
// would save.
//
// A Fast also counts the bytes of records it has decoded: the first
// memberBudget bytes go through the member decoder, whose cost starts at
// nothing, and the rest through sonic's, which is compiled on first use and
// faster in bulk. One Fast per process keeps that rule for the process. It
// is safe for concurrent use; it must not be copied.
type Fast struct {
	// Skip returns the length of the JSON value at the start of b (after
	// any leading spaces), or -1 if it is not one.
	Skip func(b []byte) int
	// Valid reports whether b is one valid JSON value.
	Valid func(b []byte) bool
	// Unmarshal decodes a whole record strictly: an unknown member or a
	// member whose name differs in case is an error.
	Unmarshal func(data []byte, v any) error
	// UnmarshalNested decodes a nested object (a chunk and its vector),
	// copying its strings out of data.
	UnmarshalNested func(data []byte, v any) error

	// decoded is how many bytes of records went to the member decoder.
	decoded atomic.Int64
}

// memberBudget is how many bytes of records a Fast sends to the member
// decoder before it uses Unmarshal. sonic's decoder for Record is compiled
// on first use, a cost that a stage of a small incremental sync would pay
// in every process for little input.
const memberBudget = 16 << 20

// validJSON reports whether b is one valid JSON value. Like sonic's
// validator, it takes control characters inside strings, which some native
// lines hold raw, so that a record decodes the same with Fast or without.
// Unlike it, it refuses a backslash that starts no JSON escape ("\0"), as
// encoding/json, DuckDB and jq do.
//
// sonic stops at 4,095 levels of nesting: what nests deeper is read as
// without Fast, by encoding/json, which stops at 10,000 as pos-scrub's
// parser does, so that every stage takes the same records.
func (f *Fast) validJSON(b []byte) bool {
	if f != nil && f.Valid != nil {
		if f.Valid(b) {
			return jsontext.ValidEscapes(b)
		}
		if !jsontext.Deeper(b, fastDepth) {
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

// skipValue returns the length of the JSON value at the start of b (after
// any leading spaces), or -1 if it is not one.
func (f *Fast) skipValue(b []byte) int {
	if f != nil && f.Skip != nil {
		if n := f.Skip(b); n >= 0 || !jsontext.Deeper(b, fastDepth) {
			return n
		}
	}
	return f.skipPortable(b)
}

// fastDepth is a nesting below sonic's limit (4,095 levels): a text sonic
// refuses that nests deeper is read again without it.
const fastDepth = 4000

// maxDepth is encoding/json's limit on nesting, and pos-scrub's.
const maxDepth = 10000

func (f *Fast) unmarshalNested(data []byte, v any) error {
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
