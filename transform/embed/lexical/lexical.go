// Package lexical turns text into the terms of pos's lexical index: the
// postings pos-load writes beside each chunk, the query terms pos-query
// scores with BM25, the words its snippets highlight, and the word features
// of the hash embedder. One tokenizer for all of them, so a query term
// always meets the indexed term it stands for.
//
// The tokenizer is versioned (Version): a lake records, in each chunks
// file's sidecar, the version its postings were written with, and search
// looks them up with the terms of that version (For). Version 1 is kept
// as it was (internal/v1).
//
// Version 2:
//   - A word is a run of letters, digits and underscores, lowercased.
//     Function words of the text's language (and of English, which prose in
//     any language quotes) and one-letter words are dropped; the others are
//     stemmed with Snowball in the text's language: Russian for Cyrillic
//     words, and for Latin-script words the language whose function words
//     the text uses most among English, German, French, Spanish, Italian,
//     Portuguese and Dutch (English when none stands out). A word of a
//     Latin-script text in another language than English is also indexed by
//     its English stem, as a query of a few words, whose language cannot be
//     told, is stemmed. Words of other scripts are only lowercased.
//   - A name is indexed whole and by its parts: an identifier (camelCase,
//     snake_case, letters and digits: "hookSpecificOutput" gives
//     "hookspecificoutput", "hook", "specif", "output"), and words joined
//     by '.', '-', '/', ':' or '\' with no space (kebab-case, pkg.Func,
//     os.path.join, src/query/search.go, E0308, v1.2.3, 2026-05-01): the
//     whole, lowercased and unstemmed, each piece of a path that is itself
//     a name ("search.go"), and each word's terms. A name's parts are code,
//     stemmed as English whatever the text's language.
//   - An upper-case word (ENOENT, README) is also kept unstemmed, and an
//     upper-case word or "HTTP" followed by a code of 3 to 5 digits
//     ("HTTP 404", "ORA 600") gives the pair as one term ("http404").
//   - Chinese, Japanese and Korean text, which has no spaces, is indexed by
//     overlapping character pairs.
package lexical

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	v1 "github.com/pos-lake/pos/transform/embed/lexical/internal/v1"
)

// Version is the version of the tokenizer that Terms, Words, Scan and
// QueryTerms are.
const Version = 2

// Versions are the tokenizer's versions that can still be used, oldest
// first.
var Versions = []int{1, 2}

// MaxWord is the longest word indexed, in bytes: longer runs are encoded
// blobs, not words.
const MaxWord = 48

// maxName is the longest name (words joined by '.', '/' …) kept whole as a
// term, in bytes.
const maxName = 96

// Word is one word of a text: a name joined by '.', '/' and the like is
// one word.
type Word struct {
	Start, End int      // byte offsets in the text
	Terms      []string // its index terms: none for a stopword
}

// Tokenizer is one version of the tokenizer.
type Tokenizer struct{ version int }

// For returns the tokenizer of a version.
func For(version int) (Tokenizer, error) {
	if version < 1 || version > Version {
		return Tokenizer{}, fmt.Errorf("lexical index version %d is not known to this build (it knows 1 to %d)", version, Version)
	}
	return Tokenizer{version}, nil
}

// Current is the tokenizer of Version.
var Current = Tokenizer{Version}

// Version is the tokenizer's version.
func (t Tokenizer) Version() int { return t.version }

// Scan calls fn for each word of text, in order, with its byte offsets and
// its terms (none for a stopword). The terms slice is reused between calls:
// fn must copy what it keeps.
func (t Tokenizer) Scan(text string, fn func(start, end int, terms []string)) {
	if t.version == 1 {
		v1.Scan(text, fn)
		return
	}
	scan(text, fn)
}

// Terms returns the index terms of text in order, repeats included.
func (t Tokenizer) Terms(text string) []string {
	var out []string
	t.Scan(text, func(_, _ int, terms []string) { out = append(out, terms...) })
	return out
}

// Words returns the words of text with their offsets and terms.
func (t Tokenizer) Words(text string) []Word {
	var out []Word
	t.Scan(text, func(start, end int, terms []string) {
		out = append(out, Word{Start: start, End: end, Terms: append([]string(nil), terms...)})
	})
	return out
}

// QueryTerms returns the distinct index terms of a text, in order.
func (t Tokenizer) QueryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, term := range t.Terms(q) {
		if !seen[term] {
			seen[term] = true
			out = append(out, term)
		}
	}
	return out
}

// Terms returns the index terms of text in order, repeats included.
func Terms(text string) []string { return Current.Terms(text) }

// Words returns the words of text with their offsets and terms.
func Words(text string) []Word { return Current.Words(text) }

// Scan calls fn for each word of text (see Tokenizer.Scan).
func Scan(text string, fn func(start, end int, terms []string)) { scan(text, fn) }

// QueryTerms returns the distinct index terms of a text, in order. For a
// query with quoted phrases or prefixes, see ParseQuery.
func QueryTerms(q string) []string { return Current.QueryTerms(q) }

// token kinds.
const (
	tokWord = iota // one run of word characters
	tokName        // words joined by connectors
	tokCJK         // a run of CJK characters
)

// token is a word of a text before its terms are made.
type token struct {
	start, end int
	kind       int
	// stop is, for a word that detect reads, the languages it is a
	// function word of (stopLangs), and known says it was looked up: the
	// lookup that tells the text's language also drops its function words.
	stop  uint16
	known bool
}

// scanState is the reusable memory of one scan.
type scanState struct {
	toks  []token
	terms []string
	lower []byte
	sub   []byte   // a name's word, lowercased
	parts [][2]int // an identifier's parts
}

var states = sync.Pool{New: func() any { return &scanState{} }}

// scan calls fn for each word of text with its terms (empty for a
// stopword). The terms slice is reused between calls.
func scan(text string, fn func(start, end int, terms []string)) {
	st := states.Get().(*scanState)
	defer states.Put(st)
	st.toks = tokens(text, st.toks[:0])
	lang := detect(st.toks)
	prevCode := false // the previous word may start a code ("HTTP 404")
	for i, tk := range st.toks {
		w := text[tk.start:tk.end]
		terms := st.terms[:0]
		switch tk.kind {
		case tokCJK:
			terms = v1.CJKTerms(w, terms)
		case tokWord:
			terms, st.lower = st.wordTerms(w, lang, terms, st.lower, tk.stop, tk.known)
			if prevCode && isCode(w) && tk.start == st.toks[i-1].end+1 && text[tk.start-1] == ' ' {
				p := st.toks[i-1]
				terms = append(terms, strings.ToLower(text[p.start:p.end])+w)
			}
		case tokName:
			terms = st.nameTerms(w, terms)
		}
		prevCode = tk.kind == tokWord && codePrefix(w)
		st.terms = terms
		fn(tk.start, tk.end, terms)
	}
}

// tokens splits text into its words, names and CJK runs.
func tokens(text string, toks []token) []token {
	i := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf && !v1.IsWordByte(c) {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch {
		case v1.IsCJK(r):
			start := i
			for i < len(text) {
				r, size := utf8.DecodeRuneInString(text[i:])
				if !v1.IsCJK(r) {
					break
				}
				i += size
			}
			toks = append(toks, token{start: start, end: i, kind: tokCJK})
		case c < utf8.RuneSelf || v1.IsWordRune(r):
			start := i
			i = v1.WordEnd(text, i)
			kind := tokWord
			// Words joined by one to three connectors and no space are a
			// name: "os.path.join", "src/a.go", "https://x.io", "std::io".
			for {
				j := i
				for j < len(text) && j-i < 3 && isConnector(text[j]) {
					j++
				}
				if j == i || j >= len(text) || !startsWord(text[j:]) {
					break
				}
				i, kind = v1.WordEnd(text, j), tokName
			}
			tk := token{start: start, end: i, kind: kind}
			if kind == tokWord && start < detectSample {
				tk.stop, tk.known = stopMask(text[start:i])
			}
			toks = append(toks, tk)
		default:
			i += size
		}
	}
	return toks
}

func isConnector(c byte) bool { return c == '.' || c == '-' || c == '/' || c == ':' || c == '\\' }

// startsWord reports whether s starts with a (non-CJK) word character.
func startsWord(s string) bool {
	if s[0] < utf8.RuneSelf {
		return v1.IsWordByte(s[0])
	}
	r, _ := utf8.DecodeRuneInString(s)
	return v1.IsWordRune(r) && !v1.IsCJK(r)
}

// codePrefix reports whether a word may name a family of numeric codes
// ("HTTP", "ORA", "SQLSTATE"): "http" in any case, or 2 to 10 upper-case
// ASCII letters.
func codePrefix(w string) bool {
	return strings.EqualFold(w, "http") || len(w) <= 10 && upperWord(w)
}

// isCode reports whether a word is a numeric code of 3 to 5 digits.
func isCode(w string) bool {
	return len(w) >= 3 && len(w) <= 5 && isDigits(w)
}

// wordTerms returns the terms of one word of a text in lang: the word,
// and its parts when it is a compound identifier. stop is the languages
// the word is a function word of when known (see token).
func (st *scanState) wordTerms(word string, lang Lang, terms []string, buf []byte, stop uint16, known bool) ([]string, []byte) {
	if len(word) > MaxWord {
		return terms, buf
	}
	buf = appendLower(buf[:0], word)
	if simpleWord(word) {
		if !known {
			stop = stopLangs[string(buf)]
		}
		return appendTerm(terms, buf, wordLang(word, lang), stop), buf
	}
	if upperWord(word) {
		// An acronym or a code (ENOENT, EACCES): as written, and its stem
		// for the same word typed in lower case.
		if IsStopword(lang, string(buf)) {
			return terms, buf
		}
		w := string(buf)
		terms = append(terms, w)
		if s := stemOf(English, buf); s != w && len(s) >= 2 {
			terms = append(terms, s)
		}
		return terms, buf
	}
	if isASCII(word) {
		// An ASCII identifier's parts, lowercased, are slices of buf.
		st.parts = splitASCII(word, st.parts[:0])
		if len(st.parts) <= 1 {
			return appendTerm(terms, buf, lang, stopLangs[string(buf)]), buf
		}
		terms = appendWhole(terms, buf)
		for _, p := range st.parts {
			part := buf[p[0]:p[1]]
			terms = appendTerm(terms, part, English, stopLangs[string(part)])
		}
		return terms, buf
	}
	parts := v1.SplitParts(word)
	if len(parts) <= 1 {
		return appendTerm(terms, buf, wordLang(word, lang), stopLangs[string(buf)]), buf
	}
	terms = appendWhole(terms, buf)
	for _, p := range parts {
		pl := strings.ToLower(p)
		terms = appendTerm(terms, []byte(pl), partLang(p), stopLangs[pl])
	}
	return terms, buf
}

// appendWhole appends a compound identifier, lowercased, as a term of its
// own (unstemmed: it is a name, not a word).
func appendWhole(terms []string, lower []byte) []string {
	whole := strings.Trim(string(lower), "_")
	if len(whole) >= 2 && !IsStopword(English, whole) {
		terms = append(terms, whole)
	}
	return terms
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// partLang is the language a part of a name is stemmed in: English, the
// language of code, for a Latin-script part.
func partLang(p string) Lang { return wordLang(p, English) }

// nameTerms returns the terms of a name: words joined by connectors.
func (st *scanState) nameTerms(name string, terms []string) []string {
	st.lower = appendLower(st.lower[:0], name)
	whole := string(st.lower)
	if len(whole) <= maxName {
		terms = append(terms, whole)
		// The pieces of a path that are names of their own: the file
		// "search.go" of "src/query/search.go", "pos-query" of
		// "cmd/pos-query/main.go".
		if strings.ContainsAny(whole, "/\\") {
			for _, piece := range strings.FieldsFunc(whole, func(r rune) bool { return r == '/' || r == '\\' }) {
				if strings.ContainsAny(piece, ".-:") && piece != whole && len(strings.Trim(piece, ".-:")) >= 2 {
					terms = append(terms, piece)
				}
			}
		}
	}
	for i := 0; i < len(name); {
		if isConnector(name[i]) {
			i++
			continue
		}
		end := v1.WordEnd(name, i)
		// A word of a name is code: stemmed as English (partLang).
		terms, st.sub = st.wordTerms(name[i:end], English, terms, st.sub, 0, false)
		i = end
	}
	return terms
}

// appendTerm appends the term of one lowercased word of lang: none for a
// function word (stop: the languages it is one of) or a one-letter word,
// else its stem.
func appendTerm(terms []string, w []byte, lang Lang, stop uint16) []string {
	if len(w) < 2 {
		if len(w) == 1 && w[0] >= utf8.RuneSelf {
			return append(terms, string(w)) // a letter of a script with one-letter words
		}
		return terms
	}
	if lang == noLang {
		return append(terms, string(w))
	}
	if stop&(1<<lang|1<<English) != 0 {
		return terms
	}
	if w[0] >= '0' && w[0] <= '9' && isDigits(w) {
		return append(terms, string(w))
	}
	stem := stemOf(lang, w)
	terms = append(terms, stem)
	if lang != English && lang != Russian {
		// Also as English: a query of a few words, whose language
		// cannot be told, is stemmed as English ("Fehler behoben").
		if en := stemOf(English, w); en != stem {
			terms = append(terms, en)
		}
	}
	return terms
}

func isDigits[T string | []byte](w T) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// appendLower appends s lowercased, as strings.ToLower does it (a word
// is valid UTF-8: an invalid byte ends it).
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			if !utf8.ValidString(s) {
				return append(b, strings.ToLower(s)...)
			}
			for _, r := range s {
				b = utf8.AppendRune(b, unicode.ToLower(r))
			}
			return b
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
