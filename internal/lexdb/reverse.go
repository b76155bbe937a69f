package lexdb

// Dictionaries from English looked up backwards: a word of the language
// is in the translations of the English headwords it gives. The
// dictionaries are read whole once and reversed into a table (the stem of
// each single-word translation: the English headwords it translates, with
// its rank among their translations), which is written in dictd's format
// into the cache directory and looked up by binary search as the
// dictionaries are; its name holds the source files' sizes and times, so
// an upgraded dictionary makes a new one.

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pos-lake/pos/transform/embed/lexical"
)

// reverseFormat names the layout of the cached tables: a change of it or
// of how they are made changes the name.
const reverseFormat = "rev1"

// maxSenses bounds the English words a word looked up backwards gives.
const maxSenses = 8

// sense is an English headword a word translates, and the word's rank
// among the headword's translations (0: the first).
type sense struct {
	en   string
	rank int
}

// reversed is a language's table: the cached file, or in memory when it
// cannot be written.
type reversed struct {
	d   *Dict
	mem map[string][]sense
}

// senses are the stem's senses, in the dictionaries' order.
func (r *reversed) senses(stem string) []sense {
	if r.d == nil {
		return r.mem[stem]
	}
	var out []sense
	for _, def := range r.d.Lookup(stem) {
		for _, line := range strings.Split(def, "\n") {
			en, rank, ok := strings.Cut(line, "\t")
			if n, err := strconv.Atoi(rank); ok && err == nil {
				out = append(out, sense{en, n})
			}
		}
	}
	return out
}

// Bounds of near: the stems longer than a word's that are taken for it,
// and by how many letters at most (a participle's stem, "запрещ", for its
// verb's, "запреща", or its noun's, "запрещен").
const (
	nearStems = 3
	nearExtra = 3
)

// near returns the senses of the stems that begin with stem and are at
// most nearExtra letters longer, the shortest first (at most nearStems):
// a Snowball stem of an inflected form the dictionaries lack is often a
// prefix of the stem of its headword.
func (r *reversed) near(stem string) []sense {
	n := utf8.RuneCountInString(stem)
	if n < 4 {
		return nil
	}
	var keys []string
	if r.d == nil {
		for k := range r.mem {
			if strings.HasPrefix(k, stem) && k != stem && utf8.RuneCountInString(k) <= n+nearExtra {
				keys = append(keys, k)
			}
		}
	} else {
		seen := 0
		r.d.Prefixed(stem, func(e Entry) bool {
			seen++
			if k := strings.ToLower(e.Headword); k != stem && utf8.RuneCountInString(k) <= n+nearExtra && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			return seen < 200
		})
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(utf8.RuneCountInString(a), utf8.RuneCountInString(b)), cmp.Compare(a, b))
	})
	var out []sense
	for _, k := range keys[:min(len(keys), nearStems)] {
		out = append(out, r.senses(k)...)
	}
	return out
}

// backwards returns the English headwords of the language's dictionaries
// from English that have a translation of the word's stem, those it is
// the first translation of first.
// A stem no translation has stands for the translations' stems it
// begins (near).
func (t *Translator) backwards(lang, word string) []string {
	sl, ok := stemLangs[lang]
	if !ok || len(fromEnglish[lang]) == 0 {
		return nil
	}
	stem := lexical.Stem(sl, word)
	if utf8.RuneCountInString(stem) < 3 {
		return nil
	}
	r := t.reversed(lang)
	if r == nil {
		return nil
	}
	found := r.senses(stem)
	if len(found) == 0 {
		found = r.near(stem)
	}
	var senses []sense
	for _, s := range found {
		if !slices.ContainsFunc(senses, func(x sense) bool { return x.en == s.en }) {
			senses = append(senses, s)
		}
	}
	slices.SortStableFunc(senses, func(a, b sense) int { return cmp.Compare(a.rank, b.rank) })
	var out []string
	for _, s := range senses[:min(len(senses), maxSenses)] {
		out = append(out, s.en)
	}
	return out
}

// reversed returns a language's table, from the cache or made (and
// cached) once; nil when none of its dictionaries is installed.
func (t *Translator) reversed(lang string) *reversed {
	t.revMu.Lock()
	defer t.revMu.Unlock()
	if r, ok := t.rev[lang]; ok {
		return r
	}
	if t.rev == nil {
		t.rev = map[string]*reversed{}
	}
	var dicts []*Dict
	var names []string
	for _, n := range fromEnglish[lang] {
		if d := t.dict(n); d != nil {
			dicts, names = append(dicts, d), append(names, n)
		}
	}
	if len(dicts) == 0 {
		t.rev[lang] = nil
		return nil
	}
	var base string
	if t.cache != "" {
		base = filepath.Join(t.cache, lang+"-eng-"+t.sourcesHash(names))
		if d, err := Open(base); err == nil {
			r := &reversed{d: d}
			t.rev[lang] = r
			return r
		}
	}
	m := reverse(lang, dicts)
	r := &reversed{mem: m}
	if base != "" {
		if err := writeReversed(base, m); err == nil {
			if d, err := Open(base); err == nil {
				r = &reversed{d: d}
			}
		}
	}
	t.rev[lang] = r
	return r
}

// sourcesHash names a table by the format and the size and modification
// time of its dictionaries' files.
func (t *Translator) sourcesHash(names []string) string {
	h := fnv.New64a()
	fmt.Fprintln(h, reverseFormat)
	for _, n := range names {
		for _, ext := range []string{".index", ".dict", ".dict.dz"} {
			if st, err := os.Stat(filepath.Join(t.dir, n+ext)); err == nil {
				fmt.Fprintln(h, n+ext, st.Size(), st.ModTime().UnixNano())
			}
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// reverse reads the dictionaries whole and makes the table: for each
// English headword of one word and each single-word translation, the
// translation's stem gives the headword and the translation's rank (the
// first of the entry's translations of that stem).
func reverse(lang string, dicts []*Dict) map[string][]sense {
	sl := stemLangs[lang]
	m := map[string][]sense{}
	for _, d := range dicts {
		var entries []Entry
		d.Each(func(e Entry) bool {
			entries = append(entries, e)
			return true
		})
		slices.SortFunc(entries, func(a, b Entry) int { return cmp.Compare(a.off, b.off) })
		var text []byte
		if n := len(entries); n > 0 {
			last := entries[n-1]
			text = make([]byte, last.off+last.length)
			k, _ := d.data.ReadAt(text, 0)
			text = text[:k]
		}
		for _, e := range entries {
			hw := strings.ToLower(e.Headword)
			end := min(e.off+e.length, int64(len(text)))
			if !englishWord(hw) || e.off >= end {
				continue
			}
			seen := map[string]bool{}
			for rank, g := range targetGlosses(string(text[e.off:end]), lang) {
				if strings.ContainsRune(g, ' ') {
					continue
				}
				s := lexical.Stem(sl, g)
				if utf8.RuneCountInString(s) < 3 || seen[s] {
					continue
				}
				seen[s] = true
				m[s] = append(m[s], sense{hw, rank})
			}
		}
	}
	return m
}

// writeReversed writes a table in dictd's format (base.index, base.dict),
// each through a temporary file renamed into place, the data first: a
// table whose index is there is whole. The tables of older sources are
// removed.
func writeReversed(base string, m map[string][]sense) error {
	dir := filepath.Dir(base)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var index, data strings.Builder
	for _, stem := range slices.Sorted(maps.Keys(m)) {
		start := data.Len()
		for _, s := range m[stem] {
			fmt.Fprintf(&data, "%s\t%d\n", s.en, s.rank)
		}
		fmt.Fprintf(&index, "%s\t%s\t%s\n", stem, b64Encode(int64(start)), b64Encode(int64(data.Len()-start)))
	}
	for _, f := range []struct{ ext, text string }{{".dict", data.String()}, {".index", index.String()}} {
		tmp, err := os.CreateTemp(dir, filepath.Base(base)+f.ext+".tmp*")
		if err != nil {
			return err
		}
		_, err = tmp.WriteString(f.text)
		if e := tmp.Close(); err == nil {
			err = e
		}
		if err == nil {
			err = os.Rename(tmp.Name(), base+f.ext)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	lang, _, _ := strings.Cut(filepath.Base(base), "-")
	old, _ := filepath.Glob(filepath.Join(dir, lang+"-eng-*"))
	for _, o := range old {
		if !strings.HasPrefix(o, base+".") {
			os.Remove(o)
		}
	}
	return nil
}

// b64Encode writes n in dictd's base64 digits.
func b64Encode(n int64) string {
	if n == 0 {
		return "A"
	}
	var b []byte
	for ; n > 0; n /= 64 {
		b = append(b, b64Digits[n%64])
	}
	slices.Reverse(b)
	return string(b)
}

// targetGlosses returns, from a definition of a dictionary from English,
// the translations in the language: for Russian the phrases of Cyrillic
// words (russianGlosses); for the others the phrases of up to three words
// of its translation lines, without grammar, notes and numbering.
func targetGlosses(def, lang string) []string {
	if lang == "ru" {
		return russianGlosses(def)
	}
	var out []string
	for i, line := range strings.Split(def, "\n") {
		line = strings.TrimSpace(line)
		if i == 0 || line == "" || line[0] == '"' || strings.HasPrefix(line, "Synonym") || strings.HasPrefix(line, "see:") ||
			strings.HasPrefix(line, "Note:") {
			continue
		}
		line = stripEnclosed(stripNumbering(line))
		for _, p := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' }) {
			words := strings.Fields(strings.ToLower(p))
			for j, w := range words {
				words[j] = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' })
			}
			words = slices.DeleteFunc(words, func(w string) bool { return w == "" })
			if len(words) > 0 && len(words) <= 3 && !slices.Contains(out, strings.Join(words, " ")) {
				out = append(out, strings.Join(words, " "))
			}
		}
	}
	return out
}
