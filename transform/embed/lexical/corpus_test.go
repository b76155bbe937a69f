package lexical

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/corpus"
)

// corpusTexts calls fn with the texts of the corpus's session files, in a
// fixed order: every string of a JSON line or document (messages, tool
// inputs and outputs, paths, ids) and every paragraph of the other text
// files. SQLite databases are left out.
func corpusTexts(t testing.TB, fn func(string)) {
	t.Helper()
	root := corpus.Dir(t)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			fn(v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			// Go's maps have no order: the keys are taken sorted.
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v[k])
			}
		}
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".vscdb":
			return nil
		case ".jsonl", ".json":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 64<<20)
			whole := filepath.Ext(path) == ".json"
			if whole {
				sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
					if !atEOF {
						return 0, nil, nil
					}
					return len(data), data, bufio.ErrFinalToken
				})
			}
			for sc.Scan() {
				var v any
				if json.Unmarshal(sc.Bytes(), &v) != nil {
					fn(sc.Text()) // not JSON: as text
					continue
				}
				walk(v)
			}
			return sc.Err()
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, p := range strings.Split(string(data), "\n\n") {
				fn(p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// corpusTermsHash is a hash of every word each tokenizer version gives
// over the corpus texts (offsets and terms), the number of texts and of
// terms.
func corpusTermsHash(t testing.TB, tok Tokenizer) (sum uint64, texts, terms int) {
	h := fnv.New64a()
	var b [8]byte
	corpusTexts(t, func(s string) {
		texts++
		tok.Scan(s, func(start, end int, ts []string) {
			binary.LittleEndian.PutUint32(b[:4], uint32(start))
			binary.LittleEndian.PutUint32(b[4:], uint32(end))
			h.Write(b[:])
			for _, term := range ts {
				h.Write([]byte(term))
				h.Write([]byte{0})
			}
			h.Write([]byte{1})
			terms += len(ts)
		})
		h.Write([]byte{2})
	})
	return h.Sum64(), texts, terms
}

// A tokenizer version's terms are part of every lake written with it (its
// postings, its hash vectors): they never change. The words and terms of
// each version over the corpus's session texts are the ones it gave when
// it was made.
func TestCorpusTermsStable(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the whole corpus")
	}
	want := map[int]string{
		1: "82a922bc68c47d91 144696 texts 1590967 terms",
		2: "2f7545d29eb17d28 144696 texts 1781574 terms",
	}
	for _, v := range Versions {
		tok, _ := For(v)
		sum, texts, terms := corpusTermsHash(t, tok)
		got := fmt.Sprintf("%016x %d texts %d terms", sum, texts, terms)
		if got != want[v] {
			t.Errorf("version %d over the corpus: %s, want %s", v, got, want[v])
		}
	}
}
