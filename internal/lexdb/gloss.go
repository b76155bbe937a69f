package lexdb

import (
	"slices"
	"strings"
	"unicode"
)

// Glosses returns the English glosses of a definition of a FreeDict
// dictionary into English, in the order the dictionary gives them (most
// common sense first): the translation lines' phrases, without the
// headword line, examples ("..." - ...), cross-references (Synonyms:,
// see:, {...}), grammar (<n>, (noun ...)), domains ([comp.]), numbering
// and pronunciations (/.../).
func Glosses(def string) []string {
	var out []string
	lines := strings.Split(def, "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if i == 0 || line == "" || line[0] == '"' || strings.HasPrefix(line, "Synonym") || strings.HasPrefix(line, "see:") ||
			strings.HasPrefix(line, "Note:") {
			continue // the headword line (its pronunciation, part of speech), examples, references
		}
		line = stripNumbering(line)
		line = stripEnclosed(line)
		for _, p := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' }) {
			if p = strings.Join(strings.Fields(p), " "); p != "" && latinText(p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// stripNumbering removes a sense's number: "1. ", "2) ".
func stripNumbering(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// stripEnclosed removes what is between <>, [], {}, () and //: grammar,
// domains, cross-references, notes and pronunciations.
func stripEnclosed(s string) string {
	var b strings.Builder
	depth := 0
	slash := false
	for _, r := range s {
		switch {
		case r == '/' && depth == 0:
			slash = !slash
			continue
		case slash:
			continue
		case strings.ContainsRune("<[{(", r):
			depth++
			continue
		case strings.ContainsRune(">]})", r):
			if depth > 0 {
				depth--
			}
			continue
		case depth > 0:
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// latinText reports whether s is written in Latin letters (an English
// gloss), not a note in the source language's script.
func latinText(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if !unicode.Is(unicode.Latin, r) {
				return false
			}
			letters++
		}
	}
	return letters > 0
}

// isJapanese reports whether r is of a Japanese script: kana or a CJK
// ideograph (and the prolonged sound mark).
func isJapanese(r rune) bool {
	return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) || r == 'ー'
}

func isHiragana(s string) bool {
	for _, r := range s {
		if !unicode.Is(unicode.Hiragana, r) {
			return false
		}
	}
	return true
}

// russianGlosses returns, from a definition of an English-Russian
// dictionary (Mueller's or FreeDict's), the Russian words of its main
// translations: the phrases of Cyrillic words only, not the examples that
// follow an English phrase (to forbid smb. the country запретить ...),
// without grammar labels (_n., _уст.) and notes in parentheses.
func russianGlosses(def string) []string {
	var out []string
	lines := strings.Split(def, "\n")
	for i, line := range lines {
		if i == 0 {
			continue // the English headword
		}
		line = stripEnclosed(stripNumbering(strings.TrimSpace(line)))
		for _, p := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' }) {
			var words []string
			latin := false
			for _, w := range strings.Fields(p) {
				if strings.HasPrefix(w, "_") || w == "=" || w == "~" {
					continue // a label
				}
				w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' })
				switch {
				case w == "":
				case cyrillic(w):
					words = append(words, strings.ToLower(w))
				default:
					latin = true
				}
			}
			if !latin && len(words) > 0 && len(words) <= 3 {
				out = append(out, strings.Join(words, " "))
			}
		}
	}
	return out
}

func cyrillic(w string) bool {
	for _, r := range w {
		if unicode.IsLetter(r) && !unicode.Is(unicode.Cyrillic, r) {
			return false
		}
	}
	return true
}
