package lexdb

import (
	"bytes"
	"cmp"
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

// fromEnglishRussian are the dictionaries from English into Russian that
// Russian words are looked up in, inverted.
var fromEnglishRussian = []string{"mueller7", "freedict-eng-rus"}

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
	mu    sync.Mutex
	dicts map[string]*Dict // nil: absent
	ruMu  sync.Mutex
	inv   map[string]*inverse // dictionaries into Russian, read whole
}

// New returns a translator over the dictionaries of dir.
func New(dir string) *Translator { return &Translator{dir: dir, dicts: map[string]*Dict{}} }

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
	if lang == "ru" {
		for _, n := range fromEnglishRussian {
			if t.dict(n) != nil {
				return true
			}
		}
		return false
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
	return nil
}

// Word returns the English glosses of a word of a language (an ISO 639-1
// code), most common sense first; none when the language has no
// dictionary or the word is not in it. An inflected word is found by its
// Snowball stem, a German or Dutch compound by its parts.
func (t *Translator) Word(lang, word string) []string {
	word = strings.ToLower(word)
	if lang == "ru" {
		return t.russian(word)
	}
	name, ok := intoEnglish[lang]
	if !ok {
		return nil
	}
	d := t.dict(name)
	if d == nil {
		return nil
	}
	if g := t.lookup(d, lang, word); len(g) > 0 {
		return g
	}
	if lang == "de" || lang == "nl" {
		return t.compound(d, lang, word, true)
	}
	return nil
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
			n := 0
			for l := min(maxJapaneseWord, len(r)-i); l >= 1; l-- {
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

// russian returns the English headwords of the English-Russian
// dictionaries whose main translations have a word of the Russian word's
// stem, those it is the first translation of first.
func (t *Translator) russian(word string) []string {
	stem := lexical.Stem(lexical.Russian, word)
	if utf8.RuneCountInString(stem) < 3 {
		return nil
	}
	type sense struct {
		en   string
		rank int
	}
	var senses []sense
	for _, name := range fromEnglishRussian {
		inv := t.inverse(name)
		if inv == nil {
			continue
		}
		for _, e := range inv.containing(stem) {
			hw := strings.ToLower(e.Headword)
			if !englishWord(hw) || slices.ContainsFunc(senses, func(x sense) bool { return x.en == hw }) {
				continue
			}
			for rank, g := range russianGlosses(inv.text(e)) {
				if !strings.ContainsRune(g, ' ') && lexical.Stem(lexical.Russian, g) == stem {
					senses = append(senses, sense{hw, rank})
					break
				}
			}
		}
	}
	slices.SortStableFunc(senses, func(a, b sense) int { return cmp.Compare(a.rank, b.rank) })
	var out []string
	for _, x := range senses[:min(len(senses), maxRussianSenses)] {
		out = append(out, x.en)
	}
	return out
}

// maxRussianSenses bounds the English words a Russian word gives.
const maxRussianSenses = 8

// inverse is a dictionary read whole, to find the entries whose
// definitions hold a word: a dictionary into Russian looked up from
// Russian.
type inverse struct {
	data    []byte
	entries []Entry // by offset
}

// inverse reads a dictionary whole, once; nil when it is absent.
func (t *Translator) inverse(name string) *inverse {
	t.ruMu.Lock()
	defer t.ruMu.Unlock()
	if inv, ok := t.inv[name]; ok {
		return inv
	}
	var inv *inverse
	if d := t.dict(name); d != nil {
		inv = &inverse{}
		d.Each(func(e Entry) bool {
			inv.entries = append(inv.entries, e)
			return true
		})
		slices.SortFunc(inv.entries, func(a, b Entry) int { return cmp.Compare(a.off, b.off) })
		if n := len(inv.entries); n > 0 {
			last := inv.entries[n-1]
			inv.data = make([]byte, last.off+last.length)
			m, _ := d.data.ReadAt(inv.data, 0)
			inv.data = inv.data[:m]
		}
	}
	if t.inv == nil {
		t.inv = map[string]*inverse{}
	}
	t.inv[name] = inv
	return inv
}

// containing returns the entries whose definitions have a word that starts
// with stem.
func (inv *inverse) containing(stem string) []Entry {
	var out []Entry
	s := []byte(stem)
	for from := 0; ; {
		i := bytes.Index(inv.data[from:], s)
		if i < 0 {
			return out
		}
		p := from + i
		from = p + len(s)
		if r, _ := utf8.DecodeLastRune(inv.data[:p]); p > 0 && unicode.IsLetter(r) {
			continue // inside a word
		}
		j, _ := slices.BinarySearchFunc(inv.entries, int64(p), func(e Entry, off int64) int { return cmp.Compare(e.off, off) })
		if j < len(inv.entries) && inv.entries[j].off == int64(p) {
			j++
		}
		if j == 0 {
			continue
		}
		e := inv.entries[j-1]
		if int64(p) < e.off+e.length && (len(out) == 0 || out[len(out)-1] != e) {
			out = append(out, e)
		}
	}
}

// text is an entry's definition.
func (inv *inverse) text(e Entry) string {
	end := min(e.off+e.length, int64(len(inv.data)))
	if e.off >= end {
		return ""
	}
	return string(inv.data[e.off:end])
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
