package searchindex

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pos-lake/pos/load/internal/pqread"
)

// ReadPostings calls fn with each posting of the postings file at path
// whose term is one of terms (distinct; fn gets the term's index).
// A postings file is sorted by term and cut into small row groups, so only
// the row groups whose term range (their min/max statistics) holds one of
// the terms are read, and of those only the term column unless it has one.
func ReadPostings(path string, terms []string, fn func(term int, key int64, tf, dl int32)) error {
	pats := Exact(terms)
	return ReadPostingsTerms(path, func(int) []Term { return pats }, fn)
}

// ReadPostingsTerms is ReadPostings for the Terms that terms returns for
// the version of the tokenizer the file's postings were made with (its
// "pos.lexical" metadata; 1 without it): a prefix hands on a posting for
// each of its terms.
func ReadPostingsTerms(path string, terms func(lexVersion int) []Term, fn func(term int, key int64, tf, dl int32)) error {
	f, pf, err := pqread.Open(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return err
	}
	defer f.Close()
	return readPostings(path, pf, terms(PostingsVersion(pf)), fn)
}

// PostingsVersion is the version of the tokenizer whose terms a postings
// file holds.
func PostingsVersion(pf *parquet.File) int {
	if v, ok := pf.Lookup(LexicalKey); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

func readPostings(path string, pf *parquet.File, terms []Term, fn func(term int, key int64, tf, dl int32)) error {
	var err error
	var cols [4]pqread.Column
	for i, name := range []string{"term", "chunk_key", "tf", "dl"} {
		if cols[i], err = pqread.LookupColumn(pf, name, true); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	index := make(map[string]int, len(terms))
	var prefixes []int
	for i, t := range terms {
		if t.Prefix {
			prefixes = append(prefixes, i)
		} else {
			index[t.Text] = i
		}
	}
	md := pf.Metadata()
	var match []int32   // per row of a group: the term's index, or -1
	var also [][2]int32 // more terms rows match: row, term (prefixes)
	var keys []int64
	var tfs, dls []int32
	for g, rg := range pf.RowGroups() {
		if g < len(md.RowGroups) && !mayHold(md.RowGroups[g].Columns[cols[0].Index].MetaData.Statistics, terms) {
			continue
		}
		n := int(rg.NumRows())
		match, also = slicesGrow(match, n), also[:0]
		found := false
		err := pqread.ReadColumns(rg, cols[:1], func(_, row int, v parquet.Value) error {
			if row >= n {
				return fmt.Errorf("a column has more values than the row group has rows")
			}
			match[row] = -1
			if v.IsNull() {
				return nil
			}
			b := v.ByteArray()
			if t, ok := index[string(b)]; ok {
				match[row], found = int32(t), true
			}
			for _, t := range prefixes {
				if !bytes.HasPrefix(b, []byte(terms[t].Text)) {
					continue
				}
				if match[row] < 0 {
					match[row], found = int32(t), true
				} else {
					also = append(also, [2]int32{int32(row), int32(t)})
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !found {
			continue
		}
		keys, tfs, dls = slicesGrow(keys, n), slicesGrow(tfs, n), slicesGrow(dls, n)
		err = pqread.ReadColumns(rg, cols[1:], func(c, row int, v parquet.Value) error {
			if row >= n {
				return fmt.Errorf("a column has more values than the row group has rows")
			}
			switch c {
			case 0:
				keys[row] = v.Int64()
			case 1:
				tfs[row] = v.Int32()
			default:
				dls[row] = v.Int32()
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for row, t := range match[:n] {
			if t >= 0 {
				fn(int(t), keys[row], tfs[row], dls[row])
			}
		}
		for _, a := range also {
			fn(int(a[1]), keys[a[0]], tfs[a[0]], dls[a[0]])
		}
	}
	return nil
}

// mayHold says whether a row group whose term column has these statistics
// may hold one of terms: yes when they are missing.
func mayHold(st format.Statistics, terms []Term) bool {
	lo, hi := st.MinValue, st.MaxValue
	if lo == nil || hi == nil {
		return true
	}
	for _, t := range terms {
		b := []byte(t.Text)
		if t.Prefix {
			// Some term of [lo, hi] may start with it.
			if bytes.Compare(lo[:min(len(lo), len(b))], b) <= 0 && bytes.Compare(hi, b) >= 0 {
				return true
			}
			continue
		}
		if bytes.Compare(b, lo) >= 0 && bytes.Compare(b, hi) <= 0 {
			return true
		}
	}
	return false
}

// slicesGrow returns s with length n, reusing its array when it can.
func slicesGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// PostingRow is a row of the postings table (indexed/postings), the
// lexical index SQL sees; a sidecar holds the same postings by row.
type PostingRow struct {
	Term     string `parquet:"term,dict"`
	ChunkKey int64  `parquet:"chunk_key"`
	TF       int32  `parquet:"tf"` // the term's occurrences in the chunk
	DL       int32  `parquet:"dl"` // the chunk's length in terms
}

// LexicalKey is the postings file's metadata key that says which version
// of the tokenizer made its terms (lexical.Version; without it, 1).
const LexicalKey = "pos.lexical"
