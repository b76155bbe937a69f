package lexdb

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pos-lake/pos/transform/embed/lexical"
)

// Dir is where Debian installs dictd's databases.
const Dir = "/usr/share/dictd"

// intoEnglish are the FreeDict dictionaries into English, by the ISO
// 639-1 code of their source language.
var intoEnglish = map[string]string{
	"de": "freedict-deu-eng", "fr": "freedict-fra-eng", "es": "freedict-spa-eng", "it": "freedict-ita-eng",
	"pt": "freedict-por-eng", "nl": "freedict-nld-eng", "ja": "freedict-jpn-eng",
}

// fromEnglish are the dictionaries from English into a language that its
// words are looked up in backwards (see reverse.go): Russian has no
// dictionary into English, and Spanish's, French's and Italian's lack
// words that theirs from English have (servidor, modelo).
var fromEnglish = map[string][]string{
	"ru": {"mueller7", "freedict-eng-rus"},
	"es": {"freedict-eng-spa"}, "fr": {"freedict-eng-fra"}, "it": {"freedict-eng-ita"},
}

// stemLangs are the Snowball stemmers of the languages, which match an
// inflected word to its headword.
var stemLangs = map[string]lexical.Lang{
	"de": lexical.German, "fr": lexical.French, "es": lexical.Spanish, "it": lexical.Italian,
	"pt": lexical.Portuguese, "nl": lexical.Dutch, "ru": lexical.Russian,
}

// Translator looks words of other languages up in the dictionaries of a
// directory, opening each on first use; safe for concurrent use.
type Translator struct {
	dir   string
	cache string // where reversed dictionaries are kept ("": in memory)
	mu    sync.Mutex
	dicts map[string]*Dict // nil: absent
	revMu sync.Mutex
	rev   map[string]*reversed // by language; nil: no dictionary
}

// New returns a translator over the dictionaries of dir that reverses the
// dictionaries from English in memory, for each process anew.
func New(dir string) *Translator { return NewCached(dir, "") }

// NewCached returns a translator over the dictionaries of dir that keeps
// the dictionaries from English it reverses in the directory cache (made
// when missing), made once for the dictionary files' sizes and times.
func NewCached(dir, cache string) *Translator {
	return &Translator{dir: dir, cache: cache, dicts: map[string]*Dict{}}
}

// dict opens a dictionary once; nil when it is not installed.
func (t *Translator) dict(name string) *Dict {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.dicts[name]
	if !ok {
		d, _ = Open(filepath.Join(t.dir, name))
		t.dicts[name] = d
	}
	return d
}

// Has reports whether a language's dictionary is installed.
func (t *Translator) Has(lang string) bool {
	for _, n := range fromEnglish[lang] {
		if t.dict(n) != nil {
			return true
		}
	}
	name, ok := intoEnglish[lang]
	return ok && t.dict(name) != nil
}

// Close closes the dictionaries opened.
func (t *Translator) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for n, d := range t.dicts {
		if d != nil {
			d.Close()
		}
		delete(t.dicts, n)
	}
	t.revMu.Lock()
	defer t.revMu.Unlock()
	for l, r := range t.rev {
		if r != nil && r.d != nil {
			r.d.Close()
		}
		delete(t.rev, l)
	}
	return nil
}

// Word returns the English glosses of a word of a language (an ISO 639-1
// code), most common sense first; none when the language has no
// dictionary or the word is not in it. An inflected word is found by its
// Snowball stem, a German or Dutch compound by its parts. A language with
// a dictionary from English too has the English words whose translations
// are the word after those of its own dictionary.
func (t *Translator) Word(lang, word string) []string {
	word = strings.ToLower(word)
	var out []string
	if name, ok := intoEnglish[lang]; ok && t.dict(name) != nil {
		d := t.dict(name)
		out = t.lookup(d, lang, word)
		if len(out) == 0 && (lang == "de" || lang == "nl") {
			out = t.compound(d, lang, word, true)
		}
	}
	for _, g := range t.backwards(lang, word) {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// lookup finds a word as a headword, or a headword of its stem.
func (t *Translator) lookup(d *Dict, lang, word string) []string {
	if g := glossesOf(d.Lookup(word)); len(g) > 0 {
		return g
	}
	sl, ok := stemLangs[lang]
	if !ok {
		return nil
	}
	stem := lexical.Stem(sl, word)
	if utf8.RuneCountInString(stem) < 3 {
		return nil
	}
	var defs []string
	seen := 0
	d.Prefixed(stem, func(e Entry) bool {
		seen++
		hw := strings.ToLower(e.Headword)
		if !strings.ContainsRune(hw, ' ') && lexical.Stem(sl, hw) == stem {
			defs = append(defs, d.Definition(e))
		}
		return seen < 200 && len(defs) < 3
	})
	return glossesOf(defs)
}

// minPart is the least length, in letters, of a compound's part.
const minPart = 4

// compound splits a compound word into two parts that are both in the
// dictionary (the first maybe with a linking s, n or en), the longest
// second part first, as German and Dutch compounds are headed by their
// last part; the second part may itself be a compound, once.
func (t *Translator) compound(d *Dict, lang, word string, again bool) []string {
	r := []rune(word)
	for pass := 0; pass < 2; pass++ {
		if pass == 1 && !again {
			break
		}
		for i := minPart; i+minPart <= len(r); i++ {
			head, tail := string(r[:i]), string(r[i:])
			var hg []string
			for _, h := range []string{head, strings.TrimSuffix(head, "s"), strings.TrimSuffix(head, "n"), strings.TrimSuffix(head, "en")} {
				if utf8.RuneCountInString(h) < minPart-1 {
					continue
				}
				if hg = t.lookup(d, lang, h); len(hg) > 0 {
					break
				}
			}
			if len(hg) == 0 {
				continue
			}
			var tg []string
			if pass == 0 {
				tg = t.lookup(d, lang, tail)
			} else {
				tg = t.compound(d, lang, tail, false)
			}
			if len(tg) > 0 {
				return interleave(hg, tg)
			}
		}
	}
	return nil
}

// interleave merges two gloss lists, alternating, so that the first
// glosses of each part come first.
func interleave(a, b []string) []string {
	var out []string
	for i := 0; i < max(len(a), len(b)); i++ {
		if i < len(b) {
			out = append(out, b[i])
		}
		if i < len(a) {
			out = append(out, a[i])
		}
	}
	return out
}

// glossesOf are the distinct glosses of definitions, in order.
func glossesOf(defs []string) []string {
	var out []string
	for _, def := range defs {
		for _, g := range Glosses(def) {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

// maxJapaneseWord is the longest Japanese headword tried, in characters.
const maxJapaneseWord = 10

// Japanese splits Japanese text (its runs of kana and ideographs) into the
// longest words the Japanese dictionary has, and returns each word's
// English glosses; a word of one or two hiragana is a particle or an
// inflection, not looked up.
func (t *Translator) Japanese(text string) [][]string {
	d := t.dict(intoEnglish["ja"])
	if d == nil {
		return nil
	}
	var out [][]string
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !isJapanese(r) }) {
		r := []rune(run)
		for i := 0; i < len(r); {
			// Only the texts that begin a headword can be one: the
			// longest of those bounds the words tried.
			longest := 0
			for l := 1; l <= min(maxJapaneseWord, len(r)-i) && d.HasPrefix(string(r[i:i+l])); l++ {
				longest = l
			}
			n := 0
			for l := longest; l >= 1; l-- {
				w := string(r[i : i+l])
				if isHiragana(w) && l < 3 {
					continue
				}
				if g := glossesOf(d.Lookup(w)); len(g) > 0 {
					out = append(out, g)
					n = l
					break
				}
			}
			i += max(n, 1)
		}
	}
	return out
}

// englishWord reports whether a headword is one English word of letters
// (not a phrase, an abbreviation with dots or the database's own entries).
func englishWord(w string) bool {
	if len(w) < 2 || strings.HasPrefix(w, "00database") {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z') && r != '-' {
			return false
		}
	}
	return unicode.IsLetter(rune(w[0]))
}
