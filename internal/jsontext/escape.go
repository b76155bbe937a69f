// Package jsontext is the JSON text machinery beneath pos's wire format:
// writing a string as the canonical encoding escapes it (AppendString),
// decoding a string's escapes (Unescape, Simple), checking a text without
// decoding it: its escapes (ValidEscapes, CheckEscapes, LoneSurrogate,
// FixSurrogates), its numbers (ValidNumber) and its nesting (Deeper,
// ValidDeep); and reading a text by hand (Reader, Walk), with or without
// the bulk machinery a binary plugs in (Fast: sonic's skipper, validator
// and decoder).
//
// Package schema builds the record codec on it; extract and transform use
// it directly for the JSON they read, write or check outside a record. It
// holds no package-level state: a Fast's count of the bytes it has seen is
// the only state, and it lives in the Fast a binary makes.
package jsontext

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// AppendStringBytes is AppendString for a byte slice, without copying it.
func AppendStringBytes(b, s []byte) []byte {
	return AppendString(b, unsafe.String(unsafe.SliceData(s), len(s)))
}

// safeASCII marks the ASCII bytes a JSON string can hold unescaped.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// HTML characters and U+2028/U+2029 are left as they are (NDJSON is split on
// '\n' only).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs attention, then straight
		// to the first that does.
		for i+8 <= len(s) {
			if m := attention8(load8(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load8 reads eight bytes of s at i as a little-endian word.
func load8(s string, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i))
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// attention8 marks (with its high bit) each byte of x that is a control
// character, '"', '\\' or not ASCII: the bytes AppendString cannot copy as
// they are. A byte above a marked one may be marked too (a borrow carries
// up), but the lowest mark is always a true one.
func attention8(x uint64) uint64 {
	ctl := (x - lsb*0x20) & ^x
	q := x ^ (lsb * '"')
	bs := x ^ (lsb * '\\')
	return (ctl | (q-lsb) & ^q | (bs-lsb) & ^bs | x) & msb
}

// Unescape decodes the body of a JSON string that holds escapes, as
// encoding/json does: a lone surrogate becomes U+FFFD.
func Unescape(b []byte) (string, error) {
	out := make([]byte, 0, len(b))
	for {
		k := bytes.IndexByte(b, '\\')
		if k < 0 {
			out = append(out, b...)
			break
		}
		out = append(out, b[:k]...)
		if k+1 >= len(b) {
			return "", errors.New("invalid escape at the end of a string")
		}
		c := b[k+1]
		b = b[k+2:]
		if e, ok := Simple(c); ok {
			out = append(out, e)
			continue
		}
		switch c {
		case 'u':
			r, ok := Hex4(b)
			if !ok {
				return "", errors.New(`invalid \u escape in a string`)
			}
			b = b[4:]
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if len(b) >= 6 && b[0] == '\\' && b[1] == 'u' {
					if lo, ok := Hex4(b[2:]); ok {
						if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
							r2 = dec
							b = b[6:]
						}
					}
				}
				r = r2
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", fmt.Errorf("invalid escape %q in a string", "\\"+string(c))
		}
	}
	return string(out), nil
}

// Simple returns the byte the escape \c stands for, for each of JSON's
// two-character escapes (\" \\ \/ \b \f \n \r \t); \u and anything else
// are not one. Readers that decode escapes themselves share it.
func Simple(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
