package load

import (
	"bytes"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// ReadPostings calls fn with each posting of the postings file at path
// whose term is one of terms (distinct; fn gets the term's index).
// A postings file is sorted by term and cut into small row groups, so only
// the row groups whose term range (their min/max statistics) holds one of
// the terms are read, and of those only the term column unless it has one.
func ReadPostings(path string, terms []string, fn func(term int, key int64, tf, dl int32)) error {
	f, pf, err := OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return err
	}
	defer f.Close()
	var cols [4]column
	for i, name := range []string{"term", "chunk_key", "tf", "dl"} {
		if cols[i], err = lookupColumn(pf, name, true); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	index := make(map[string]int, len(terms))
	for i, t := range terms {
		index[t] = i
	}
	md := pf.Metadata()
	var match []int32 // per row of a group: the term's index, or -1
	var keys []int64
	var tfs, dls []int32
	for g, rg := range pf.RowGroups() {
		if g < len(md.RowGroups) && !mayHold(md.RowGroups[g].Columns[cols[0].index].MetaData.Statistics, terms) {
			continue
		}
		n := int(rg.NumRows())
		match = slicesGrow(match, n)
		found := false
		err := readColumns(rg, cols[:1], func(_, row int, v parquet.Value) error {
			if row >= n {
				return fmt.Errorf("a column has more values than the row group has rows")
			}
			match[row] = -1
			if t, ok := index[string(v.ByteArray())]; ok && !v.IsNull() {
				match[row], found = int32(t), true
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
		err = readColumns(rg, cols[1:], func(c, row int, v parquet.Value) error {
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
	}
	return nil
}

// mayHold says whether a row group whose term column has these statistics
// may hold one of terms: yes when they are missing.
func mayHold(st format.Statistics, terms []string) bool {
	lo, hi := st.MinValue, st.MaxValue
	if lo == nil || hi == nil {
		return true
	}
	for _, t := range terms {
		if bytes.Compare([]byte(t), lo) >= 0 && bytes.Compare([]byte(t), hi) <= 0 {
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
