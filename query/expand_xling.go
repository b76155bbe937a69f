package query

// Translation of a question in another language into English, the
// language of most sessions, from the bilingual dictionaries Debian ships
// for dictd (internal/lexdb) where they are installed: the English glosses
// of the query's words join its first pass with a weight below its own
// words', as WordNet's synonyms do. Without the dictionaries a query has
// no translations, and no error.

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/lexdb"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// DictDir is where the dictd databases are read from.
var DictDir = lexdb.Dir

// translationsPerWord bounds the index terms a word's translation adds:
// its first glosses, the dictionaries' most common senses.
const translationsPerWord = 3

var (
	xlMu    sync.Mutex
	xlDir   string
	xlCache string
	xl      *lexdb.Translator
)

// dictCache is where the dictionaries looked up backwards are kept once
// reversed: pos/lexdb in the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache on Linux); "" (each process reverses them) without one.
func dictCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "pos", "lexdb")
}

func translator() *lexdb.Translator {
	xlMu.Lock()
	defer xlMu.Unlock()
	if cache := dictCache(); xl == nil || xlDir != DictDir || xlCache != cache {
		if xl != nil {
			xl.Close()
		}
		xl, xlDir, xlCache = lexdb.NewCached(DictDir, cache), DictDir, cache
	}
	return xl
}

// translationTerms returns the index terms of the English translations of
// a query's words in another language (Latin-script words in the language
// its function words tell, Cyrillic words in Russian, Japanese by the
// dictionary's longest words), without the query's own terms; its English
// words have none.
func translationTerms(q string, own []string, perWord int) []string {
	if perWord <= 0 {
		return nil
	}
	have := map[string]bool{}
	for _, t := range own {
		have[t] = true
	}
	var out []string
	add := func(glosses []string) {
		n := 0
		for _, g := range glosses {
			for _, t := range lexical.Terms(g) {
				if n >= perWord {
					return
				}
				if !have[t] && expansionTerm(t) {
					have[t] = true
					out = append(out, t)
					n++
				}
			}
		}
	}
	t := translator()
	latin := lexical.Detect(q)
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' && !isJapaneseRune(r) }) {
		lw := strings.ToLower(w)
		if seen[lw] {
			continue
		}
		seen[lw] = true
		r, _ := utf8.DecodeRuneInString(w)
		switch {
		case isJapaneseRune(r):
			for _, g := range t.Japanese(w) {
				add(g)
			}
		case unicode.Is(unicode.Cyrillic, r):
			if utf8.RuneCountInString(lw) >= 3 && !lexical.IsStopword(lexical.Russian, lw) {
				add(t.Word("ru", lw))
				add(transliterations(lw))
			}
		case latin != lexical.English && unicode.Is(unicode.Latin, r):
			if utf8.RuneCountInString(lw) >= 3 && !lexical.IsStopword(latin, lw) {
				add(t.Word(latin.String(), lw))
			}
		}
	}
	return out
}

func isJapaneseRune(r rune) bool {
	return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) || r == 'ー'
}

// cyrLatin transliterates Russian letters the way loanwords are spelt back
// in English (сервер: server, логин: login).
var cyrLatin = map[rune]string{
	'а': "a", 'б': "b", 'в': "v", 'г': "g", 'д': "d", 'е': "e", 'ё': "e", 'ж': "zh", 'з': "z", 'и': "i", 'й': "i",
	'к': "k", 'л': "l", 'м': "m", 'н': "n", 'о': "o", 'п': "p", 'р': "r", 'с': "s", 'т': "t", 'у': "u", 'ф': "f",
	'х': "h", 'ц': "c", 'ч': "ch", 'ш': "sh", 'щ': "sch", 'ъ': "", 'ы': "y", 'ь': "", 'э': "e", 'ю': "yu", 'я': "ya",
}

// transliterations are the Latin spellings of a Russian word's stem, for
// the technical words Russian borrows from English and dictionaries of
// common words lack (сервер, скрипт, репозиторий): the letter for letter
// one, and the one with English's c for k and s for z (контекст: context,
// репозитори: repositori, English's stem of repository).
func transliterations(w string) []string {
	var b strings.Builder
	for _, r := range lexical.Stem(lexical.Russian, w) {
		l, ok := cyrLatin[r]
		if !ok {
			return nil
		}
		b.WriteString(l)
	}
	plain := b.String()
	english := strings.NewReplacer("ks", "x", "k", "c", "z", "s").Replace(plain)
	if english == plain {
		return []string{plain}
	}
	return []string{plain, english}
}
