package query

// Synonyms from WordNet, read from the files of the system's WordNet
// database (Debian's wordnet-base: /usr/share/wordnet) where it is
// installed; without them a query has no synonyms, and no error.
//
// The index files are sorted by lemma, so a word is found by binary search
// over the file (a few reads of a few KB), and its synsets read at their
// byte offsets in the data files: nothing is loaded whole, which keeps a
// search from a cold CLI fast.

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/pos-lake/pos/transform/embed/lexical"
)

// WordNetDir is where the WordNet database is read from.
var WordNetDir = "/usr/share/wordnet"

// wordnetPOS are WordNet's parts of speech, by the suffix of their files.
var wordnetPOS = []string{"noun", "verb", "adj", "adv"}

const (
	// synonymSenses is how many senses of a word, most frequent first,
	// give their lemmas: rarer senses are mostly other meanings.
	synonymSenses = 2
	// synonymsPerWord bounds the lemmas a word adds.
	synonymsPerWord = 6
)

// wordnet is the opened database; nil files when it is absent.
type wordnet struct {
	index, data, exc map[string]*os.File
	// The synonyms of the words looked up: a process that searches again
	// and again (pos-mcp) reads a word's lines once.
	mu   sync.Mutex
	memo map[string][]string
}

var (
	wnDB  *wordnet
	wnDir string
	wnMu  sync.Mutex
)

// openWordNet opens the database once per directory; nil when absent.
func openWordNet() *wordnet {
	wnMu.Lock()
	defer wnMu.Unlock()
	if wnDir != WordNetDir {
		wnDir, wnDB = WordNetDir, nil
		wn := &wordnet{index: map[string]*os.File{}, data: map[string]*os.File{}, exc: map[string]*os.File{}, memo: map[string][]string{}}
		for _, p := range wordnetPOS {
			ix, err1 := os.Open(filepath.Join(WordNetDir, "index."+p))
			da, err2 := os.Open(filepath.Join(WordNetDir, "data."+p))
			if err1 != nil || err2 != nil {
				if ix != nil {
					ix.Close()
				}
				if da != nil {
					da.Close()
				}
				continue
			}
			wn.index[p], wn.data[p] = ix, da
			if ex, err := os.Open(filepath.Join(WordNetDir, p+".exc")); err == nil {
				wn.exc[p] = ex
			}
		}
		if len(wn.index) > 0 {
			wnDB = wn
		}
	}
	return wnDB
}

// synonymTerms returns the index terms of the WordNet synonyms of a
// query's English words, without the query's own terms.
func synonymTerms(q string, own []string) []string {
	wn := openWordNet()
	if wn == nil || lexical.Detect(q) != lexical.English {
		return nil // WordNet is English's: another language's words would find false friends
	}
	have := map[string]bool{}
	for _, t := range own {
		have[t] = true
	}
	var out []string
	seenWord := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
		if seenWord[w] || len(w) < 3 || !isASCII(w) || lexical.IsStopword(lexical.English, w) {
			continue
		}
		seenWord[w] = true
		n := 0
		for _, lemma := range wn.synonyms(w) {
			for _, t := range lexical.Terms(strings.ReplaceAll(lemma, "_", " ")) {
				if !have[t] && n < synonymsPerWord {
					have[t] = true
					out = append(out, t)
					n++
				}
			}
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// synonyms returns the lemmas of the first senses of a word's base forms,
// in every part of speech.
func (wn *wordnet) synonyms(w string) []string {
	wn.mu.Lock()
	out, ok := wn.memo[w]
	wn.mu.Unlock()
	if ok {
		return slices.Clone(out)
	}
	out = wn.lookup(w)
	wn.mu.Lock()
	if len(wn.memo) >= synonymMemo {
		clear(wn.memo)
	}
	wn.memo[w] = out
	wn.mu.Unlock()
	return slices.Clone(out)
}

// synonymMemo bounds the words whose synonyms are kept.
const synonymMemo = 4096

func (wn *wordnet) lookup(w string) []string {
	var out []string
	for _, p := range wordnetPOS {
		if wn.index[p] == nil {
			continue
		}
		for _, base := range wn.baseForms(w, p) {
			line := searchSorted(wn.index[p], base)
			if line == nil {
				continue
			}
			for _, off := range senseOffsets(line, synonymSenses) {
				out = append(out, synsetLemmas(wn.data[p], off)...)
			}
			break
		}
	}
	return out
}

// detachments are WordNet's rules of morphology (morphy), by part of
// speech: a suffix and what replaces it.
var detachments = map[string][][2]string{
	"noun": {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	"verb": {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	"adj":  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// baseForms are the forms a word may have in the index: itself, its
// exceptions' base forms (mice: mouse) and its detached forms.
func (wn *wordnet) baseForms(w, p string) []string {
	out := []string{w}
	if ex := wn.exc[p]; ex != nil {
		if line := searchSorted(ex, w); line != nil {
			out = append(out, strings.Fields(string(line))[1:]...)
		}
	}
	for _, d := range detachments[p] {
		if b, ok := strings.CutSuffix(w, d[0]); ok && len(b)+len(d[1]) >= 2 {
			out = append(out, b+d[1])
		}
	}
	return out
}

// senseOffsets reads an index line's synset offsets, most frequent sense
// first, at most n.
func senseOffsets(line []byte, n int) []int64 {
	// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
	f := strings.Fields(string(line))
	if len(f) < 4 {
		return nil
	}
	pcnt, err := strconv.Atoi(f[3])
	if err != nil || 4+pcnt+2 > len(f) {
		return nil
	}
	var out []int64
	for _, s := range f[4+pcnt+2:] {
		if off, err := strconv.ParseInt(s, 10, 64); err == nil && len(out) < n {
			out = append(out, off)
		}
	}
	return out
}

// synsetLemmas reads the lemmas of the synset at a byte offset of a data
// file.
func synsetLemmas(f *os.File, off int64) []string {
	buf := make([]byte, 1024)
	n, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil
	}
	line := buf[:n]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	// synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] ...
	fs := strings.Fields(string(line))
	if len(fs) < 4 {
		return nil
	}
	cnt, err := strconv.ParseInt(fs[3], 16, 32)
	if err != nil {
		return nil
	}
	var out []string
	for i := 0; i < int(cnt) && 4+2*i < len(fs); i++ {
		w := fs[4+2*i]
		if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: "big(a)"
			w = w[:j]
		}
		out = append(out, strings.ToLower(w))
	}
	return out
}

// searchSorted finds the line of a file sorted by its first field whose
// first field is key, by binary search over byte offsets; nil if none.
func searchSorted(f *os.File, key string) []byte {
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	lo, hi := int64(0), st.Size()
	buf := make([]byte, 4096)
	// lineAt returns the first whole line starting at or after off, and
	// where it starts.
	lineAt := func(off int64) ([]byte, int64) {
		start := off
		if off > 0 {
			start = off - 1 // a line that starts at off follows a '\n' at off-1
		}
		for {
			n, err := f.ReadAt(buf, start)
			if n == 0 {
				return nil, -1
			}
			chunk := buf[:n]
			i := 0
			if off > 0 {
				j := bytes.IndexByte(chunk, '\n')
				if j < 0 {
					if err != nil {
						return nil, -1
					}
					start += int64(n)
					continue
				}
				i = j + 1
			}
			lineStart := start + int64(i)
			if lineStart >= st.Size() {
				return nil, -1
			}
			rest := chunk[i:]
			if k := bytes.IndexByte(rest, '\n'); k >= 0 {
				return append([]byte(nil), rest[:k]...), lineStart
			}
			// The line is longer than the buffer: read it whole.
			big := make([]byte, 1<<16)
			m, _ := f.ReadAt(big, lineStart)
			big = big[:m]
			if k := bytes.IndexByte(big, '\n'); k >= 0 {
				big = big[:k]
			}
			return big, lineStart
		}
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		line, start := lineAt(mid)
		if start < 0 {
			hi = mid
			continue
		}
		word := line
		if i := bytes.IndexByte(line, ' '); i >= 0 {
			word = line[:i]
		}
		switch c := strings.Compare(string(word), key); {
		case len(line) == 0 || line[0] == ' ': // the license at the top of the file
			lo = start + int64(len(line)) + 1
		case c == 0:
			return line
		case c < 0:
			lo = start + int64(len(line)) + 1
		default:
			hi = mid
		}
	}
	return nil
}
