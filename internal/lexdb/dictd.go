package lexdb

import (
	"bytes"
	"cmp"
	"io"
	"os"
	"strings"
)

// Dict is a dictd dictionary: its index and data files.
type Dict struct {
	index *os.File
	size  int64
	data  data
}

// Open opens the dictionary base.index with base.dict or base.dict.dz.
func Open(base string) (*Dict, error) {
	ix, err := os.Open(base + ".index")
	if err != nil {
		return nil, err
	}
	st, err := ix.Stat()
	if err != nil {
		ix.Close()
		return nil, err
	}
	d, err := openData(base)
	if err != nil {
		ix.Close()
		return nil, err
	}
	return &Dict{index: ix, size: st.Size(), data: d}, nil
}

// Close closes the dictionary's files.
func (d *Dict) Close() error {
	err := d.data.Close()
	if e := d.index.Close(); err == nil {
		err = e
	}
	return err
}

// Entry is one index line: a headword and where its definition is.
type Entry struct {
	Headword    string
	off, length int64
}

// key is how the index is sorted: lowercased headwords, byte by byte.
func key(s string) string { return strings.ToLower(s) }

// Lookup returns the definitions of the headwords that are word, ignoring
// case.
func (d *Dict) Lookup(word string) []string {
	var out []string
	k := key(word)
	d.scan(k, func(e Entry) bool {
		if key(e.Headword) != k {
			return false
		}
		if def := d.Definition(e); def != "" {
			out = append(out, def)
		}
		return true
	})
	return out
}

// Prefixed calls fn with the index's entries whose headword starts with
// prefix (ignoring case), in index order, until fn returns false.
func (d *Dict) Prefixed(prefix string, fn func(Entry) bool) {
	k := key(prefix)
	d.scan(k, func(e Entry) bool {
		return strings.HasPrefix(key(e.Headword), k) && fn(e)
	})
}

// HasPrefix reports whether a headword starts with prefix (ignoring
// case): one binary search.
func (d *Dict) HasPrefix(prefix string) bool {
	k := key(prefix)
	line, start := d.lineAfter(d.lowerBound(k))
	if start < 0 {
		return false
	}
	hw, _, _ := strings.Cut(string(line), "\t")
	return strings.HasPrefix(key(hw), k)
}

// Definition reads an entry's definition ("" when it cannot be read).
func (d *Dict) Definition(e Entry) string {
	if e.length <= 0 || e.length > 1<<20 {
		return ""
	}
	buf := make([]byte, e.length)
	n, err := d.data.ReadAt(buf, e.off)
	if err != nil && (err != io.EOF || n < len(buf)) {
		return ""
	}
	return string(buf[:n])
}

// Each calls fn with every entry of the index, in order, until it returns
// false.
func (d *Dict) Each(fn func(Entry) bool) {
	d.linesFrom(0, fn)
}

// scan calls fn with the entries from the first whose key is k or after.
func (d *Dict) scan(k string, fn func(Entry) bool) {
	d.linesFrom(d.lowerBound(k), fn)
}

// lowerBound is the offset of the first line whose key is k or after, by
// binary search over the file's bytes.
func (d *Dict) lowerBound(k string) int64 {
	lo, hi := int64(0), d.size // the answer is a line start in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		line, start := d.lineAfter(mid)
		if start < 0 || start >= hi {
			hi = mid
			continue
		}
		hw, _, _ := strings.Cut(string(line), "\t")
		if cmp.Compare(key(hw), k) < 0 {
			lo = start + int64(len(line)) + 1
		} else {
			hi = mid
		}
	}
	// lo is a line start or the point where a line begins after it.
	if lo > 0 {
		if _, start := d.lineAfter(lo); start >= 0 {
			return start
		}
		return d.size
	}
	return 0
}

// lineAfter returns the first whole line that starts at off or after, and
// its offset (-1: none).
func (d *Dict) lineAfter(off int64) ([]byte, int64) {
	start := off
	if off > 0 {
		start = off - 1 // a line starting at off follows a '\n' at off-1
	}
	buf := make([]byte, 1024)
	var acc []byte
	lineStart := int64(-1)
	for pos := start; ; {
		n, err := d.index.ReadAt(buf, pos)
		chunk := buf[:n]
		if lineStart < 0 {
			if off == 0 {
				lineStart = 0
			} else if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
				lineStart = pos + int64(i) + 1
				chunk = chunk[i+1:]
			} else {
				chunk = nil
			}
		}
		if lineStart >= 0 {
			if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
				return append(acc, chunk[:i]...), lineStart
			}
			acc = append(acc, chunk...)
			if len(acc) > 1<<16 {
				return nil, -1
			}
		}
		pos += int64(n)
		if err != nil || n == 0 {
			if lineStart >= 0 && lineStart < d.size && len(acc) > 0 {
				return acc, lineStart // the last line, without its '\n'
			}
			return nil, -1
		}
	}
}

// linesFrom calls fn with the entries of the lines from off on.
func (d *Dict) linesFrom(off int64, fn func(Entry) bool) {
	const bufSize = 4 << 10 // a lookup reads a line or a few
	buf := make([]byte, bufSize)
	var rest []byte
	for pos := off; pos < d.size; {
		n, err := d.index.ReadAt(buf, pos)
		if n == 0 {
			return
		}
		pos += int64(n)
		chunk := append(rest, buf[:n]...)
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			if e, ok := parseEntry(chunk[:i]); ok && !fn(e) {
				return
			}
			chunk = chunk[i+1:]
		}
		rest = append([]byte(nil), chunk...)
		if err != nil {
			break
		}
	}
	if e, ok := parseEntry(rest); ok {
		fn(e)
	}
}

// parseEntry parses an index line: headword, offset and length in
// dictd's base64 digits.
func parseEntry(line []byte) (Entry, bool) {
	f := strings.Split(strings.TrimRight(string(line), "\r"), "\t")
	if len(f) < 3 {
		return Entry{}, false
	}
	off, ok1 := b64(f[1])
	n, ok2 := b64(f[2])
	if !ok1 || !ok2 {
		return Entry{}, false
	}
	return Entry{Headword: f[0], off: off, length: n}, true
}

// b64 decodes dictd's numbers: base64 digits, most significant first.
func b64(s string) (int64, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		v := strings.IndexByte(b64Digits, s[i])
		if v < 0 {
			return 0, false
		}
		n = n*64 + int64(v)
	}
	return n, true
}

const b64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
