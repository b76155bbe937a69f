// Package keyword finds a set of ASCII keywords in a text, case-insensitively,
// in one pass: the prefilter that keeps regular expressions (the scrubber's
// secret rules, the decision patterns) off text that cannot match them.
package keyword

import "strings"

// Lower maps ASCII upper case to lower case and leaves every other byte as
// it is, so positions in a lowered text are positions in the text.
var Lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// Matcher finds every occurrence of a set of keywords (matched with ASCII
// case folded, overlapping occurrences included) with one table lookup per
// byte: a table indexed by the byte pair a keyword starts with.
type Matcher struct {
	// tri is a bitset over a hash of three lowered bytes: set for the
	// first three bytes of every keyword (every third byte, for keywords of
	// two). One lookup per byte in 8 KB, which stays in the L1 cache, and
	// about one false alarm in 200 bytes of text.
	tri    [1 << 10]uint64
	first  []uint16 // byte pair -> 1 + index into groups; 0: no keyword starts so
	groups [][]entry
	words  []string
}

type entry struct {
	rest string // the keyword after its first two bytes, lower case
	id   int
}

// New builds a matcher and returns each keyword's id (its index in Words).
// Keywords are lowered (strings.ToLower); keywords shorter than two bytes
// are not supported; duplicates get one id.
func New(words []string) (*Matcher, map[string]int) {
	m := &Matcher{first: make([]uint16, 1<<16)}
	ids := map[string]int{}
	for _, w := range words {
		w = strings.ToLower(w)
		if len(w) < 2 {
			panic("keyword: keyword shorter than two bytes: " + w)
		}
		if _, ok := ids[w]; ok {
			continue
		}
		id := len(m.words)
		ids[w] = id
		m.words = append(m.words, w)
		if len(w) >= 3 {
			h := triHash(uint32(w[0])<<16 | uint32(w[1])<<8 | uint32(w[2]))
			m.tri[h>>6] |= 1 << (h & 63)
		} else {
			for c := 0; c < 256; c++ {
				h := triHash(uint32(w[0])<<16 | uint32(w[1])<<8 | uint32(Lower[c]))
				m.tri[h>>6] |= 1 << (h & 63)
			}
		}
		k := uint16(w[0])<<8 | uint16(w[1])
		g := m.first[k]
		if g == 0 {
			m.groups = append(m.groups, nil)
			g = uint16(len(m.groups))
			m.first[k] = g
		}
		m.groups[g-1] = append(m.groups[g-1], entry{rest: w[2:], id: id})
	}
	return m, ids
}

// Words are the keywords, lower case, indexed by id.
func (m *Matcher) Words() []string { return m.words }

// Each calls fn with the position and id of every keyword occurrence in
// text, in order of position.
func Each[T ~string | ~[]byte](m *Matcher, text T, fn func(pos, id int)) {
	first, groups, tri := m.first, m.groups, &m.tri
	n := len(text) - 1
	if n <= 0 {
		return
	}
	// The three bytes at i, lowered, in w; a zero stands in past the end.
	w := uint32(Lower[text[0]])<<16 | uint32(Lower[text[1]])<<8
	for i := 0; i < n; i++ {
		var c uint32
		if i+2 <= n {
			c = uint32(Lower[text[i+2]])
		}
		w = (w&0xFFFF00 | c)
		h := triHash(w)
		next := w << 8 & 0xFFFFFF
		if tri[h>>6]&(1<<(h&63)) == 0 {
			w = next
			continue
		}
		k := uint16(w >> 8)
		w = next
		g := first[k]
		if g == 0 {
			continue
		}
		for _, e := range groups[g-1] {
			if HasPrefixFold(text[i+2:], e.rest) {
				fn(i, e.id)
			}
		}
	}
}

// HasPrefixFold reports whether b starts with the lower-case ASCII string
// s, ignoring ASCII case.
func HasPrefixFold[T ~string | ~[]byte](b T, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if Lower[b[i]] != s[i] {
			return false
		}
	}
	return true
}

// triHash maps three bytes to 16 bits.
func triHash(w uint32) uint32 { return w * 0x9E3779B1 >> 16 }
