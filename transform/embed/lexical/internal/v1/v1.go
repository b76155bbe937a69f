// Package v1 is the first tokenizer of pos's lexical index (lexical
// version 1), frozen: the postings of a lake written with it are searched
// with its terms, and the hash embedder's pos-hash-v1 and pos-hash-v2
// features are made of them. Never change what it returns.
//
// A word is a run of letters, digits and underscores. Words are lowercased;
// English stopwords and one-letter words are dropped; plain ASCII words are
// Porter-stemmed ("caching" and "cache" are both "cach"). An identifier made
// of parts (camelCase, snake_case, letters and digits) is indexed whole and
// by its parts: "hookSpecificOutput" gives "hookspecificoutput", "hook",
// "specif", "output". Chinese, Japanese and Korean text, which has no spaces,
// is indexed by overlapping character pairs.
//
// Version 2 has kept some rules as they are here: where a word ends
// (WordEnd, IsWordByte, IsWordRune, IsCJK), the pairs of a CJK run
// (CJKTerms) and the parts of an identifier (SplitParts). It calls these,
// which are frozen with the rest; a rule that changes in a later version
// gets its own copy there.
package v1

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// MaxWord is the longest word indexed, in bytes: longer runs are encoded
// blobs, not words.
const MaxWord = 48

// Word is one word of a text.
type Word struct {
	Start, End int      // byte offsets in the text
	Terms      []string // its index terms: none for a stopword
}

// Terms returns the index terms of text in order, repeats included.
func Terms(text string) []string {
	var out []string
	scan(text, func(_, _ int, terms []string) { out = append(out, terms...) })
	return out
}

// Words returns the words of text with their offsets and terms.
func Words(text string) []Word {
	var out []Word
	scan(text, func(start, end int, terms []string) {
		out = append(out, Word{Start: start, End: end, Terms: append([]string(nil), terms...)})
	})
	return out
}

// Scan calls fn for each word of text, in order, with its byte offsets and
// its terms (none for a stopword). The terms slice is reused between calls:
// fn must copy what it keeps.
func Scan(text string, fn func(start, end int, terms []string)) { scan(text, fn) }

// QueryTerms returns the distinct index terms of a query, in order.
func QueryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range Terms(q) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// scan calls fn for each word of text with its terms (empty for a
// stopword). The terms slice is reused between calls.
func scan(text string, fn func(start, end int, terms []string)) {
	var terms []string
	var lower []byte
	i := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !IsWordByte(c) {
				i++
				continue
			}
			// An ASCII word, possibly continuing into non-ASCII letters.
			start := i
			for i < len(text) && text[i] < utf8.RuneSelf && IsWordByte(text[i]) {
				i++
			}
			if i < len(text) && text[i] >= utf8.RuneSelf {
				if r, _ := utf8.DecodeRuneInString(text[i:]); IsWordRune(r) && !IsCJK(r) {
					i = WordEnd(text, i)
				}
			}
			terms, lower = wordTerms(text[start:i], terms[:0], lower)
			fn(start, i, terms)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case IsCJK(r):
			start := i
			for i < len(text) {
				r, size := utf8.DecodeRuneInString(text[i:])
				if !IsCJK(r) {
					break
				}
				i += size
			}
			terms = CJKTerms(text[start:i], terms[:0])
			fn(start, i, terms)
		case IsWordRune(r):
			start := i
			i = WordEnd(text, i)
			terms, lower = wordTerms(text[start:i], terms[:0], lower)
			fn(start, i, terms)
		default:
			i += size
		}
	}
}

// WordEnd returns the end of the (non-CJK) word that continues at i.
func WordEnd(text string, i int) int {
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !IsWordByte(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !IsWordRune(r) || IsCJK(r) {
			return i
		}
		i += size
	}
	return i
}

// IsWordByte reports whether an ASCII byte is part of a word.
func IsWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// IsWordRune reports whether a rune is part of a word.
func IsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r)
}

// IsCJK reports whether a rune is Chinese, Japanese or Korean.
func IsCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// CJKTerms indexes a run of CJK characters by overlapping pairs (a lone
// character by itself).
func CJKTerms(run string, terms []string) []string {
	first, size := utf8.DecodeRuneInString(run)
	if size == len(run) {
		_ = first
		return append(terms, run)
	}
	prev := 0
	for i := size; i < len(run); {
		_, s := utf8.DecodeRuneInString(run[i:])
		terms = append(terms, run[prev:i+s])
		prev, i = i, i+s
	}
	return terms
}

// wordTerms returns the terms of one word: the word, and its parts when it
// is a compound identifier.
func wordTerms(word string, terms []string, buf []byte) ([]string, []byte) {
	if len(word) > MaxWord {
		return terms, buf
	}
	buf = appendLower(buf[:0], word)
	if simpleWord(word) {
		if t := term(string(buf), true); t != "" {
			terms = append(terms, t)
		}
		return terms, buf
	}
	parts := SplitParts(word)
	if len(parts) <= 1 {
		if t := term(string(buf), true); t != "" {
			terms = append(terms, t)
		}
		return terms, buf
	}
	// The whole identifier, as written, is a term of its own (unstemmed:
	// it is a name, not an English word).
	whole := strings.Trim(string(buf), "_")
	if len(whole) >= 2 && !isStop(whole) {
		terms = append(terms, whole)
	}
	for _, p := range parts {
		if t := term(strings.ToLower(p), true); t != "" {
			terms = append(terms, t)
		}
	}
	return terms, buf
}

// term normalizes one lowercased word: "" for a stopword or a one-letter
// word, else its stem.
func term(w string, stem bool) string {
	if len(w) < 2 || isStop(w) {
		if len(w) == 1 && w[0] >= utf8.RuneSelf {
			return w // a letter of a script with one-letter words
		}
		return ""
	}
	if stem {
		return cachedStem(w)
	}
	return w
}

// Stems of the words seen most are kept: prose repeats its words, and a
// stem costs two allocations.
var (
	stems     sync.Map
	stemCount atomic.Int64
)

const maxStems = 1 << 17

func cachedStem(w string) string {
	if s, ok := stems.Load(w); ok {
		return s.(string)
	}
	s := Stem(w)
	if stemCount.Load() < maxStems {
		stemCount.Add(1)
		stems.Store(strings.Clone(w), s)
	}
	return s
}

func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(b, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// simpleWord reports whether a word is one part: ASCII letters, at most
// its first upper case, or ASCII digits only (most words of prose).
func simpleWord(w string) bool {
	digits := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z':
			digits = false
		case c >= 'A' && c <= 'Z':
			if i > 0 {
				return false
			}
			digits = false
		case c >= '0' && c <= '9':
			if !digits {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// SplitParts splits an identifier at underscores, lower-to-upper case
// changes (fooBar), the end of an upper-case run followed by a word
// (HTTPServer: HTTP, Server), and a part with one change from letters to
// digits or back (utf8, v2, sha256) there too; a part with more changes is
// kept whole (hex ids, hashes).
func SplitParts(w string) []string {
	var parts []string
	runes := []rune(w)
	start := 0
	cut := func(end, next int) {
		if end > start {
			parts = appendDigitParts(parts, runes[start:end])
		}
		start = next
	}
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if r == '_' {
			cut(i, i+1)
			continue
		}
		if i == start {
			continue
		}
		p := runes[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(p):
			cut(i, i)
		case unicode.IsUpper(r) && unicode.IsUpper(p) && i+1 < len(runes) && unicode.IsLower(runes[i+1]):
			cut(i, i)
		}
	}
	cut(len(runes), len(runes))
	return parts
}

func appendDigitParts(parts []string, p []rune) []string {
	at := -1
	for i := 1; i < len(p); i++ {
		if unicode.IsDigit(p[i]) != unicode.IsDigit(p[i-1]) {
			if at >= 0 {
				return append(parts, string(p)) // more than one change: keep whole
			}
			at = i
		}
	}
	if at < 0 {
		return append(parts, string(p))
	}
	return append(parts, string(p[:at]), string(p[at:]))
}
