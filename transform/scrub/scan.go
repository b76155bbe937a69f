package scrub

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/keyword"

	"github.com/cespare/xxhash/v2"
)

// span is a part of the scan text to redact, and the rule that found it.
type span struct {
	start, end int
	rule       *rule  // the rule that found it (the Report counts by it)
	label      string // the marker's label, from the secret's text
	tier       int8
}

// scanner holds one goroutine's scratch state.
type scanner struct {
	s       *Scrubber
	doc     doc
	spans   []span
	pend    []pending
	last    []int // rule index -> index in pend of its latest window
	lastGen []uint32
	gen     uint32
	nested  []span
	marks   [][2]int
	cache   map[uint64]cached
	flat    []int32
	pieces  []piece
	applied []bool
	out     []byte
	body    []byte
	enc     []byte
	relaxed []byte
	labels  map[string]*rule // secret text -> its format (nil: none)
	cand    []int
	tier    []span
}

type pending struct {
	r *rule
	w window
}

func newScanner(s *Scrubber) *scanner {
	n := len(s.rs.rules)
	return &scanner{s: s, last: make([]int, n), lastGen: make([]uint32, n), cache: map[uint64]cached{}, labels: map[string]*rule{}}
}

// find appends the spans the rules find in text.
func (sc *scanner) find(text []byte) {
	s := sc.s
	pf := s.pf
	sc.pend = sc.pend[:0]
	sc.gen++
	keyword.Each(pf.kw, text, func(pos, id int) {
		for _, a := range pf.actions[id] {
			r, kw := a.rule, a.kw
			if r.guard != nil && !r.guard(text, pos) {
				continue
			}
			if r.find != nil {
				n := len(sc.spans)
				sc.spans = r.find(text, pos, a.kwLen, sc.spans)
				for i := n; i < len(sc.spans); i++ {
					sc.spans[i].rule = r
				}
				continue
			}
			w, ok := r.window(text, pos, a.kwLen, kw)
			if !ok {
				continue
			}
			if sc.lastGen[r.idx] == sc.gen {
				p := &sc.pend[sc.last[r.idx]]
				if w.start <= p.w.end {
					if w.end >= p.w.end {
						p.w.end, p.w.cutEnd = w.end, w.cutEnd
					}
					continue
				}
			}
			sc.last[r.idx], sc.lastGen[r.idx] = len(sc.pend), sc.gen
			sc.pend = append(sc.pend, pending{r, w})
		}
	})
	for _, p := range sc.pend {
		for _, h := range sc.detect(p.r, text[p.w.start:p.w.end]) {
			sc.spans = append(sc.spans, p.r.span(text, p.w, p.w.start+int(h[0]), p.w.start+int(h[1])))
		}
	}
	if s.opt.PII {
		sc.spans = scanPII(text, sc.spans)
	}
}

// detect runs a rule on a window, through a cache of recent windows:
// transcripts repeat themselves (a message is in its record, its raw
// record and its exchange; files are read again and again), and a rule's
// expression is the expensive part of a scan.
func (sc *scanner) detect(r *rule, frag []byte) [][2]int32 {
	if r.glConfig != nil {
		frag = sc.relax(r, frag)
	}
	key := xxhash.Sum64(frag) ^ uint64(r.idx)*0x9E3779B97F4A7C15
	if c, ok := sc.cache[key]; ok && c.n == len(frag) {
		return c.hits
	}
	flat := r.detect(frag, sc.flat[:0])
	sc.flat = flat
	var hits [][2]int32
	for i := 0; i+1 < len(flat); i += 2 {
		hits = append(hits, [2]int32{flat[i], flat[i+1]})
	}
	if len(sc.cache) >= cacheSize {
		clear(sc.cache)
	}
	sc.cache[key] = cached{n: len(frag), hits: hits}
	return hits
}

// relax returns a window for a gitleaks rule with the punctuation that
// follows a token in prose — a full stop, a comma, a closing parenthesis
// or bracket, and for token rules a colon — turned into spaces. gitleaks'
// expressions end a token at a space, a quote or a semicolon only, so
// "the key (AKIA…)" or "use hf_….": the same secret is found, and gets
// the same marker, whatever follows it. Offsets do not move.
func (sc *scanner) relax(r *rule, frag []byte) []byte {
	colon := r.class == classToken || r.class == classAnchored
	switch r.class {
	case classLines, classBlock, classPrivateKey:
		return frag
	}
	out := frag
	for i := 1; i < len(frag); i++ {
		if !closer(frag[i], colon) || !isRun(frag[i-1]) || closer(frag[i-1], colon) {
			continue
		}
		j := i
		for j < len(frag) && closer(frag[j], colon) {
			j++
		}
		if bytes.Contains(frag[i:j], []byte("..")) {
			i = j // an ellipsis: the value is cut short or stands for one
			continue
		}
		if j < len(frag) && !isSpace(frag[j]) && frag[j] != '"' && frag[j] != '\'' && frag[j] != '`' &&
			!(frag[j] == '\\' && j+1 < len(frag) && strings.IndexByte("nrt\"", frag[j+1]) >= 0) {
			i = j
			continue
		}
		if &out[0] == &frag[0] {
			sc.relaxed = append(sc.relaxed[:0], frag...)
			out = sc.relaxed
		}
		for k := i; k < j; k++ {
			out[k] = ' '
		}
		i = j
	}
	return out
}

// closer reports whether c ends a sentence or a parenthesis after a token.
func closer(c byte, colon bool) bool {
	switch c {
	case '.', ',', '!', '?', ')', ']', '}', '>':
		return true
	case ':':
		return colon
	}
	return false
}

// cacheSize bounds a scanner's window cache.
const cacheSize = 1 << 14

type cached struct {
	n    int
	hits [][2]int32
}

// findNested scans the strings that hold escaped text themselves — JSON
// held in a JSON string (a tool's arguments, a hook's output, a rich-text
// document), decoded once by the parser and still escaped once more — with
// that level decoded too (up to three levels), so that "password": "…"
// reads as it does at the top. What it finds is mapped back to the
// escaped form in the string.
func (sc *scanner) findNested(d *doc) {
	for ti := range d.toks {
		t := d.toks[ti]
		body := d.text[t.txt0:t.txt1]
		if t.flags&tokKeep != 0 || !nestedEscapes(body) {
			continue
		}
		level := body
		for depth := 1; depth <= 3 && nestedEscapes(level); depth++ {
			inner := unescapeLoose(level)
			saved := sc.spans
			sc.spans = sc.nested[:0]
			sc.find(inner)
			found := sc.spans
			sc.nested, sc.spans = found, saved
			for _, sp := range found {
				secret := inner[sp.start:sp.end]
				for k := 0; k < depth; k++ {
					secret = escapeJSON(secret)
				}
				before := len(sc.spans)
				sc.spans = appendOccurrences(sc.spans, body, secret, sp.rule)
				for i := before; i < len(sc.spans); i++ {
					sc.spans[i].start += t.txt0
					sc.spans[i].end += t.txt0
				}
			}
			level = inner
		}
	}
}

// nestedEscapes reports whether decoded text still holds JSON escapes of
// quotes or newlines.
func nestedEscapes(b []byte) bool {
	i := bytes.IndexByte(b, '\\')
	if i < 0 {
		return false
	}
	b = b[i:]
	return bytes.Contains(b, []byte(`\"`)) || bytes.Contains(b, []byte(`\n`))
}

// unescapeLoose decodes the JSON escapes in b, leaving any other backslash
// as it is.
func unescapeLoose(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		n := b[i+1]
		if e, ok := jsontext.Simple(n); ok {
			out = append(out, e)
			i++
			continue
		}
		if n == 'u' {
			if r, ok := hex4(b, i+2); ok {
				out = utf8.AppendRune(out, r)
				i += 5
				continue
			}
		}
		out = append(out, c, n)
		i++
	}
	return out
}

// settle turns the raw findings into the redactions: drops what the
// allowlist allows, adds the other occurrences of each secret, settles
// overlapping findings (tiers) and labels each redaction by its text.
func (sc *scanner) settle(text []byte, d *doc) {
	s := sc.s
	// Markers of an earlier run are not secrets, though the end of one
	// (a rule name ending in "token", a colon, eight hex digits) reads like
	// a name = value assignment.
	marks := sc.marks[:0]
	for i := 0; ; {
		k := bytes.Index(text[i:], []byte(markerPrefix))
		if k < 0 {
			break
		}
		e := bytes.IndexByte(text[i+k:min(len(text), i+k+80)], ']')
		if e < 0 {
			break
		}
		marks = append(marks, [2]int{i + k, i + k + e + 1})
		i += k + e + 1
	}
	sc.marks = marks
	spans := sc.spans[:0]
	for _, sp := range sc.spans {
		if sp.end <= sp.start || sp.end > len(text) || s.off[sp.rule.idx] || s.allow.allowed(text[sp.start:sp.end]) {
			continue
		}
		if len(marks) > 0 && slices.ContainsFunc(marks, func(m [2]int) bool { return sp.start < m[1] && sp.end > m[0] }) {
			continue
		}
		spans = append(spans, sp)
	}
	// Each secret wherever else it occurs in the document: another field,
	// the raw record, JSON-escaped inside a string.
	n := len(spans)
	for i := 0; i < n; i++ {
		sp := spans[i]
		if !sp.rule.everywhere || sp.end-sp.start < 8 {
			continue
		}
		secret := text[sp.start:sp.end]
		dup := false
		for _, o := range spans[:i] {
			if o.rule.everywhere && bytes.Equal(text[o.start:o.end], secret) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		spans = appendOccurrences(spans, text, secret, sp.rule)
		if esc := escapeJSON(secret); !bytes.Equal(esc, secret) {
			spans = appendOccurrences(spans, text, esc, sp.rule)
		}
	}
	if d != nil {
		spans = clipToStrings(d, spans)
	}
	sc.spans = sc.tiers(text, spans)
	for i := range sc.spans {
		sc.spans[i].label = sc.label(text, sc.spans[i])
	}
}

// clipToStrings keeps each span within the JSON string it starts in (or
// the first one it reaches): a rule that reads on past the end of a string
// (a command's last word, followed in the scan text by "}) does not make
// the syntax after it part of the secret, nor its marker.
func clipToStrings(d *doc, spans []span) []span {
	out := spans[:0]
	for _, sp := range spans {
		ti := d.tokenAt(sp.start)
		if ti == len(d.toks) {
			continue
		}
		t := d.toks[ti]
		sp.start = max(sp.start, t.txt0)
		sp.end = min(sp.end, t.txt1)
		if sp.start < sp.end {
			out = append(out, sp)
		}
	}
	return out
}

// Tiers of findings: what a tier takes, the tiers after it leave.
const (
	tierToken  = iota // the text is a token format
	tierSecret        // any other secret
	tierPII           // personal data
)

// tiers turns the findings, which may overlap, into the redactions:
// disjoint, in order. A marker is a function of the text it replaces, so
// what a redaction covers must not depend on what surrounds a secret or
// on which rules found it:
//
//   - a finding whose text is a token format keeps its extent, and
//     overlapping token findings are joined (a token is never cut);
//   - any other secret finding that overlaps a token (a value
//     "ghp_…&x=1", a run "AKIA…/next" after a name) is cut around it,
//     and a piece left of it is redacted on its own only if it still
//     reads as a secret by itself (the assignment rule's check);
//   - personal data is cut around the secrets.
func (sc *scanner) tiers(text []byte, spans []span) []span {
	for i := range spans {
		sp := &spans[i]
		switch {
		case sp.rule.pii:
			sp.tier = tierPII
		case sc.format(text[sp.start:sp.end]) != nil:
			sp.tier = tierToken
		default:
			sp.tier = tierSecret
		}
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.tier != b.tier {
			return int(a.tier) - int(b.tier)
		}
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	acc := sc.tier[:0] // settled: disjoint, by start
	for i := 0; i < len(spans); {
		t := spans[i].tier
		j := i
		for j < len(spans) && spans[j].tier == t {
			j++
		}
		merged := mergeSpans(spans[i:j])
		i = j
		n0 := len(acc)
		k := 0
		for _, m := range merged {
			for k < n0 && acc[k].end <= m.start {
				k++
			}
			if k == n0 || acc[k].start >= m.end {
				acc = append(acc, m)
				continue
			}
			at := m.start
			for q := k; q < n0 && acc[q].start < m.end; q++ {
				if acc[q].start > at {
					acc = keepPiece(acc, text, m, at, acc[q].start)
				}
				at = max(at, acc[q].end)
			}
			if at < m.end {
				acc = keepPiece(acc, text, m, at, m.end)
			}
		}
		if n0 > 0 && len(acc) > n0 {
			slices.SortFunc(acc, func(a, b span) int { return a.start - b.start })
		}
	}
	sc.tier = spans[:0]
	return acc
}

// keepPiece appends the piece [a, b) of m, what overlapping redactions
// of an earlier tier left of it, if it is still worth redacting: for a
// secret, when it reads as one by itself; for personal data, when it
// holds a letter or a digit.
func keepPiece(acc []span, text []byte, m span, a, b int) []span {
	v := plain(text[a:b])
	switch m.tier {
	case tierSecret:
		if !plausibleSecret(v, modeAssign, false) {
			return acc
		}
	default:
		if !slices.ContainsFunc(v, isAlnum) {
			return acc
		}
	}
	m.start, m.end = a, b
	return append(acc, m)
}

// mergeSpans joins overlapping spans (sorted by start, longest first) in
// place: the Report counts a joined span for the most specific rule.
func mergeSpans(spans []span) []span {
	merged := spans[:0]
	for _, sp := range spans {
		if k := len(merged) - 1; k >= 0 && sp.start < merged[k].end {
			m := &merged[k]
			if better(sp, *m) {
				m.rule = sp.rule
			}
			m.end = max(m.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// better reports whether a's rule should count a span merged from a and b.
func better(a, b span) bool {
	if a.rule.pri != b.rule.pri {
		return a.rule.pri > b.rule.pri
	}
	return a.end-a.start > b.end-b.start
}

func appendOccurrences(spans []span, text, secret []byte, r *rule) []span {
	if len(secret) == 0 {
		return spans
	}
	for i := 0; ; {
		k := bytes.Index(text[i:], secret)
		if k < 0 {
			return spans
		}
		spans = append(spans, span{start: i + k, end: i + k + len(secret), rule: r})
		i += k + len(secret)
	}
}
