package scrub

import "strings"

// lower maps ASCII upper case to lower case and leaves every other byte as
// it is, so positions in a lowered text are positions in the text.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// kwMatcher finds every occurrence of a set of keywords (ASCII, matched
// case-insensitively, overlapping occurrences included) with one table
// lookup per byte: a table indexed by the byte pair a keyword starts with.
// It is the prefilter gitleaks does per fragment, done once per document
// and with positions, so that only the neighbourhood of a keyword is ever
// handed to a rule's regular expression.
type kwMatcher struct {
	// tri is a bitset over a hash of three lowered bytes: set for the
	// first three bytes of every keyword (every third byte, for keywords of
	// two). One lookup per byte in 8 KB, which stays in the L1 cache, and
	// about one false alarm in 200 bytes of text.
	tri    [1 << 10]uint64
	first  []uint16 // byte pair -> 1 + index into groups; 0: no keyword starts so
	groups [][]kwEntry
	words  []string
}

type kwEntry struct {
	rest string // the keyword after its first two bytes, lower case
	id   int
}

// newKWMatcher builds a matcher. Keywords shorter than two bytes are not
// supported; duplicates get one id.
func newKWMatcher(words []string) (*kwMatcher, map[string]int) {
	m := &kwMatcher{first: make([]uint16, 1<<16)}
	ids := map[string]int{}
	for _, w := range words {
		w = strings.ToLower(w)
		if len(w) < 2 {
			panic("scrub: keyword shorter than two bytes: " + w)
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
				h := triHash(uint32(w[0])<<16 | uint32(w[1])<<8 | uint32(lower[c]))
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
		m.groups[g-1] = append(m.groups[g-1], kwEntry{rest: w[2:], id: id})
	}
	return m, ids
}

// each calls fn with the position and id of every keyword occurrence in
// text, in order of position.
func (m *kwMatcher) each(text []byte, fn func(pos, id int)) {
	first, groups, tri := m.first, m.groups, &m.tri
	n := len(text) - 1
	if n <= 0 {
		return
	}
	// The three bytes at i, lowered, in w; a zero stands in past the end.
	w := uint32(lower[text[0]])<<16 | uint32(lower[text[1]])<<8
	for i := 0; i < n; i++ {
		var c uint32
		if i+2 <= n {
			c = uint32(lower[text[i+2]])
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
			if hasPrefixFold(text[i+2:], e.rest) {
				fn(i, e.id)
			}
		}
	}
}

// hasPrefixFold reports whether b starts with the lower-case ASCII string
// s, ignoring ASCII case.
func hasPrefixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower[b[i]] != s[i] {
			return false
		}
	}
	return true
}

// triHash maps three bytes to 16 bits.
func triHash(w uint32) uint32 { return w * 0x9E3779B1 >> 16 }
