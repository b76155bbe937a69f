package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// MaxNesting is the deepest nesting of arrays and objects a native value
// may have to be kept as JSON in a record. A record nests it one level
// further, and the record's line then stays within what every reader of
// the stream and the lake takes: jq 1.6 stops at 256 levels, sonic at
// 4,095, encoding/json at 10,000; DuckDB has no limit. pos-extract keeps
// a deeper native line as a JSON string (Source.Altered "text").
const MaxNesting = 255

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
	depth := 0
	for {
		t, err := d.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			break
		}
	}
	// Nothing but white space may follow the value.
	_, err := d.Token()
	return errors.Is(err, io.EOF)
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

// Repairs are what pos changed in a native record to keep it as strict
// JSON that every reader of the lake takes. Source.Altered names them.
type Repairs uint8

const (
	RepairUTF8      Repairs = 1 << iota // invalid UTF-8 became U+FFFD
	RepairControl                       // a control character inside a string became a \u00XX escape
	RepairEscape                        // a backslash that starts no escape became an escaped backslash
	RepairSurrogate                     // a lone surrogate escape became \ufffd
	RepairText                          // nested more than MaxNesting levels: kept as one JSON string
)

var repairNames = []struct {
	r          Repairs
	word, what string
}{
	{RepairUTF8, "utf8", "invalid UTF-8 became U+FFFD"},
	{RepairControl, "control", `control characters became \u00XX escapes`},
	{RepairEscape, "escape", `backslashes that start no escape became \\`},
	{RepairSurrogate, "surrogate", `lone surrogate escapes became \ufffd`},
	{RepairText, "text", "nested deeper than " + strconv.Itoa(MaxNesting) + " levels: kept as one JSON string"},
}

// String is the value of Source.Altered: the repairs' names, in a fixed
// order, separated by commas ("utf8,surrogate"); "" for none.
func (r Repairs) String() string {
	var b []byte
	for _, n := range repairNames {
		if r&n.r != 0 {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = append(b, n.word...)
		}
	}
	return string(b)
}

// Describe says in words what was changed, for a diagnostic.
func (r Repairs) Describe() string {
	var b []byte
	for _, n := range repairNames {
		if r&n.r != 0 {
			if len(b) > 0 {
				b = append(b, "; "...)
			}
			b = append(b, n.what...)
		}
	}
	return string(b)
}

// AddRepairs adds r to what s.Altered names, keeping the names already
// there (a newer build's too).
func (s *Source) AddRepairs(r Repairs) {
	if r == 0 {
		return
	}
	if s.Altered == "" {
		s.Altered = r.String()
		return
	}
	have := strings.Split(s.Altered, ",")
	for w := range strings.SplitSeq(r.String(), ",") {
		if !slices.Contains(have, w) {
			have = append(have, w)
		}
	}
	s.Altered = strings.Join(have, ",")
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
