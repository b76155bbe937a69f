package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf16"
)

// Deeper reports whether the JSON text b nests arrays and objects more
// than limit levels deep. Strings are passed over, so brackets inside them
// do not count; b need not be valid.
func Deeper(b []byte, limit int) bool {
	if len(b) <= limit || bytes.Count(b, []byte{'{'})+bytes.Count(b, []byte{'['}) <= limit {
		return false // too few brackets, in strings or not
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i+1)
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// stringEnd returns the index of the quote that closes the string whose
// body starts at b[i], or len(b) when it is not closed.
func stringEnd(b []byte, i int) int {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		n := 0 // backslashes before the quote: an odd number escapes it
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// ValidDeep reports whether b is one valid JSON value, however deeply it
// nests (encoding/json's validator stops at 10,000 levels, sonic's at
// 4,095). It reads b token by token, which is slow: it is meant for the
// few texts Deeper finds.
func ValidDeep(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	if SkipValue(d) != nil {
		return false
	}
	// Nothing but white space may follow the value.
	_, err := d.Token()
	return errors.Is(err, io.EOF)
}

// SkipValue reads the next value of d token by token, however deeply it
// nests: d's InputOffset is then the end of the value.
func SkipValue(d *json.Decoder) error {
	depth := 0
	for {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// LoneSurrogate reports whether the JSON text b, whose backslashes all
// start escapes, holds a \u escape of a UTF-16 surrogate that is not half
// of a pair: a high surrogate not followed by a low one, or a low one on
// its own. DuckDB's JSON reader refuses such a text ("no low surrogate in
// string"); encoding/json, sonic and jq read the escape as U+FFFD.
func LoneSurrogate(b []byte) bool { return nextLone(b, 0) >= 0 }

// FixSurrogates returns b with each lone surrogate escape (see
// LoneSurrogate) written \ufffd, the character the other readers make of
// it, in the same six bytes: b itself when there is none, else a copy.
func FixSurrogates(b []byte) []byte {
	i := nextLone(b, 0)
	if i < 0 {
		return b
	}
	out := bytes.Clone(b)
	for ; i >= 0; i = nextLone(out, i+6) {
		copy(out[i:], `\ufffd`)
	}
	return out
}

// nextLone returns the index of the first lone surrogate escape in b at or
// after from, or -1.
func nextLone(b []byte, from int) int {
	for i := from; ; {
		j := bytes.Index(b[i:], []byte(`\u`))
		if j < 0 {
			return -1
		}
		p := i + j
		i = p + 2
		if p+2 >= len(b) || b[p+2]|0x20 != 'd' || !escapeAt(b, p) {
			continue
		}
		r, ok := Hex4(b[p+2:])
		if !ok || !utf16.IsSurrogate(r) {
			continue
		}
		if r < 0xDC00 && p+12 <= len(b) && b[p+6] == '\\' && b[p+7] == 'u' {
			if lo, ok := Hex4(b[p+8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				i = p + 12 // a pair
				continue
			}
		}
		return p
	}
}

// escapeAt reports whether the backslash at b[p] starts an escape: an even
// number of backslashes comes before it.
func escapeAt(b []byte, p int) bool {
	n := 0
	for k := p - 1; k >= 0 && b[k] == '\\'; k-- {
		n++
	}
	return n%2 == 0
}

// CheckEscapes is ValidEscapes and LoneSurrogate in one pass: whether
// every backslash in b starts a JSON escape and, if so, whether one of
// them is a lone surrogate.
func CheckEscapes(b []byte) (valid, lone bool) {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return true, lone
		}
		i += j
		n := EscapeLen(b[i:])
		if n == 0 {
			return false, false
		}
		if n == 6 && b[i+2]|0x20 == 'd' && !lone {
			if r, _ := Hex4(b[i+2:]); utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo, ok := Hex4(b[i+8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 12 // a pair
						continue
					}
				}
				lone = true
			}
		}
		i += n
	}
}

// ValidEscapes reports whether every backslash in b starts a JSON escape.
// sonic's validator (v1.15) takes a backslash followed by anything in a
// string. In valid JSON a backslash is only ever inside a string, so b is
// read as a whole.
func ValidEscapes(b []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return true
		}
		i += j
		n := EscapeLen(b[i:])
		if n == 0 {
			return false
		}
		i += n
	}
}

// EscapeLen is the length of the JSON escape at the start of b (a
// backslash), or 0 when it starts none.
func EscapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, c := range b[2:6] {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// ValidNumber reports whether b is a JSON number.
func ValidNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		if i = digits(b, j); i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if i = digits(b, j); i == j {
			return false
		}
	}
	return i == len(b)
}

// digits returns the index of the first byte of b from i on that is no
// decimal digit.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Hex4 decodes the four hex digits of a \u escape at the start of b.
func Hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
