package lexical

import (
	"strings"
	"unicode/utf8"

	v1 "github.com/pos-lake/pos/transform/embed/lexical/internal/v1"
)

// Query is a search query, parsed:
//
//	words          any of them; a chunk with more of them (and rarer) ranks higher
//	"a phrase"     its words, in that order, next to each other
//	pars*          any term that starts with "pars" (unstemmed: as indexed)
type Query struct {
	// Terms are the distinct terms of the query's words, its phrases'
	// included.
	Terms []string
	// Prefixes are the lowercased prefixes, without their '*'.
	Prefixes []string
	// Phrases are the quoted phrases that have words.
	Phrases []Phrase
	tok     Tokenizer
}

// Phrase is a quoted phrase of a query.
type Phrase struct {
	Text string
	// Terms are the distinct terms of its words: a chunk with the phrase
	// has them all.
	Terms []string
	words []phraseWord
}

// phraseWord is a word of a phrase: its first term (the word itself,
// stemmed, or a name whole), or for a function word its lowercased text.
type phraseWord struct {
	term, text string
}

// ParseQuery parses a query with the current tokenizer.
func ParseQuery(q string) Query { return Current.ParseQuery(q) }

// ParseQuery parses a query: its words, its quoted phrases ("…", also
// “…”) and its prefixes (a word ending in '*'). A quote left open quotes
// nothing.
func (t Tokenizer) ParseQuery(q string) Query {
	out := Query{tok: t}
	seen := map[string]bool{}
	addTerms := func(terms []string) {
		for _, term := range terms {
			if !seen[term] {
				seen[term] = true
				out.Terms = append(out.Terms, term)
			}
		}
	}
	var plain strings.Builder
	for len(q) > 0 {
		open, size := quoteAt(q)
		if open < 0 {
			plain.WriteString(q)
			break
		}
		end, endSize := closeQuote(q[open+size:])
		if end < 0 {
			plain.WriteString(q)
			break
		}
		plain.WriteString(q[:open])
		plain.WriteByte(' ')
		text := q[open+size : open+size+end]
		q = q[open+size+end+endSize:]
		p := t.phrase(text)
		if len(p.words) == 0 {
			continue
		}
		addTerms(p.Terms)
		out.Phrases = append(out.Phrases, p)
	}
	// Prefixes: the runs of word characters and connectors that end in '*'.
	rest := plain.String()
	var words strings.Builder
	for _, f := range strings.Fields(rest) {
		if pre, ok := prefixOf(f); ok {
			if !containsString(out.Prefixes, pre) {
				out.Prefixes = append(out.Prefixes, pre)
			}
			continue
		}
		words.WriteString(f)
		words.WriteByte(' ')
	}
	addTerms(t.Terms(words.String()))
	return out
}

// quoteAt returns where the first opening quote of s is, and its size.
func quoteAt(s string) (int, int) {
	for i, r := range s {
		if r == '"' || r == '“' || r == '„' {
			return i, utf8.RuneLen(r)
		}
	}
	return -1, 0
}

func closeQuote(s string) (int, int) {
	for i, r := range s {
		if r == '"' || r == '”' || r == '“' {
			return i, utf8.RuneLen(r)
		}
	}
	return -1, 0
}

// prefixOf returns the prefix of a query word ending in '*' ("pars*",
// "pkg.Par*", "(pars*"), lowercased; a prefix of less than two characters,
// or with other characters than a name's, is none.
func prefixOf(f string) (string, bool) {
	if !strings.HasSuffix(f, "*") {
		return "", false
	}
	f = strings.TrimLeftFunc(strings.TrimRight(f, "*"), func(r rune) bool {
		return !v1.IsWordRune(r) && (r >= utf8.RuneSelf || !isConnector(byte(r)))
	})
	f = strings.TrimLeft(f, ".-/:\\")
	for _, r := range f {
		if !v1.IsWordRune(r) && (r >= utf8.RuneSelf || !isConnector(byte(r))) {
			return "", false
		}
	}
	if utf8.RuneCountInString(f) < 2 {
		return "", false
	}
	return strings.ToLower(f), true
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// phrase parses a phrase: its terms by t, the version of the postings
// they are looked up in, and its words by the current tokenizer, which In
// reads a chunk's text with.
func (t Tokenizer) phrase(text string) Phrase {
	p := Phrase{Text: text}
	Scan(text, func(start, end int, terms []string) {
		w := phraseWord{text: strings.ToLower(text[start:end])}
		if len(terms) > 0 {
			w.term = terms[0]
		}
		p.words = append(p.words, w)
	})
	seen := map[string]bool{}
	t.Scan(text, func(_, _ int, terms []string) {
		for _, term := range terms {
			if !seen[term] {
				seen[term] = true
				p.Terms = append(p.Terms, term)
			}
		}
	})
	return p
}

// In reports whether text has the phrase: its words next to each other,
// in order, each the same word (its first term among the text's word's
// terms, or the same text: a function word, or a word the text's language
// stems otherwise).
func (p Phrase) In(text string) bool {
	if len(p.words) == 0 {
		return true
	}
	ws := Words(text)
	for i := 0; i+len(p.words) <= len(ws); i++ {
		ok := true
		for k, pw := range p.words {
			if !pw.matches(text, ws[i+k]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (pw phraseWord) matches(text string, w Word) bool {
	if pw.term != "" && containsString(w.Terms, pw.term) {
		return true
	}
	return strings.ToLower(text[w.Start:w.End]) == pw.text
}

// Match reports whether text has every phrase of the query (true for a
// query without phrases).
func (q Query) Match(text string) bool {
	for _, p := range q.Phrases {
		if !p.In(text) {
			return false
		}
	}
	return true
}

// Highlight returns the terms and prefixes a snippet shows in bold: the
// terms, then each prefix followed by '*'.
func (q Query) Highlight() []string {
	out := append([]string(nil), q.Terms...)
	for _, p := range q.Prefixes {
		out = append(out, p+"*")
	}
	return out
}

// Empty reports whether the query has nothing to look up.
func (q Query) Empty() bool { return len(q.Terms) == 0 && len(q.Prefixes) == 0 }
