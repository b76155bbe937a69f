package lexdb

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pos-lake/pos/transform/embed/lexical"
)

// FromEnglish returns up to n translations of an English word into a
// language (an ISO 639-1 code) from its dictionaries from English, the
// first senses of each dictionary first (Mueller's, then FreeDict's, in
// turn); none when the language has no such dictionary or the word is not
// in it. An inflected word ("glyphs") is found by its English Snowball
// stem, and so is a stem itself ("measur"), so that the index terms of a
// translation can be carried on into a third language.
func (t *Translator) FromEnglish(lang, word string, n int) []string {
	word = strings.ToLower(word)
	var lists [][]string
	for _, name := range fromEnglish[lang] {
		if d := t.dict(name); d != nil {
			lists = append(lists, forwardLookup(d, lang, word))
		}
	}
	var out []string
	for i := 0; len(out) < n; i++ {
		more := false
		for _, l := range lists {
			if i < len(l) && len(out) < n {
				more = true
				if !slices.Contains(out, l[i]) {
					out = append(out, l[i])
				}
			}
		}
		if !more {
			break
		}
	}
	return out
}

// maxForwardHeadwords bounds the headwords of one stem read.
const maxForwardHeadwords = 3

// forwardLookup returns the translations of the headword word and of
// the other one-word headwords of its English stem (word itself may be
// the stem), word's first; the headword word alone where its stem is not
// a prefix of it ("library", "librari").
func forwardLookup(d *Dict, lang, word string) []string {
	var out []string
	add := func(defs []string) {
		for _, def := range defs {
			for _, g := range targetGlosses(def, lang) {
				if !slices.Contains(out, g) {
					out = append(out, g)
				}
			}
		}
	}
	stem := lexical.Stem(lexical.English, word)
	if utf8.RuneCountInString(stem) < 3 || !strings.HasPrefix(word, stem) {
		add(d.Lookup(word))
		return out
	}
	var exact, others []string
	seen := 0
	d.Prefixed(stem, func(e Entry) bool {
		seen++
		hw := strings.ToLower(e.Headword)
		switch {
		case hw == word:
			exact = append(exact, d.Definition(e))
		case englishWord(hw) && len(others) < maxForwardHeadwords && (hw == stem || lexical.Stem(lexical.English, hw) == stem):
			others = append(others, d.Definition(e))
		}
		return seen < 200
	})
	add(exact)
	add(others)
	return out
}
