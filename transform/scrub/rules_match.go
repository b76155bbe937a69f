package scrub

import (
	"regexp/syntax"
	"strings"
	"unsafe"
)

// window is a span of the scan text handed to one rule. cutStart/cutEnd
// say the window was cut inside a token, so a finding that touches the cut
// is extended to the token's end rather than leaving its tail behind.
type window struct {
	start, end       int
	cutStart, cutEnd bool
}

const (
	lineReach  = 1024     // classLine: text either side of a keyword
	tokenReach = 4096     // an unbounded token is read this far from its keyword
	keyReach   = 64 << 10 // a private key's END is looked for this far
)

// window returns the text rule r needs around a keyword at pos, or false
// when the cheap checks say the rule cannot match there.
func (r *rule) window(text []byte, pos, kwLen int, kw string) (window, bool) {
	n := len(text)
	if r.fragment {
		return window{start: 0, end: n}, true
	}
	reach := r.max
	if reach == unbounded || reach > tokenReach {
		reach = tokenReach
	}
	switch r.class {
	case classAnchored:
		a := r.anchored[kw]
		e := pos + kwLen
		for e < n && e < pos+reach && tokenByte(text, e) {
			e++
		}
		if a == nil {
			return window{}, false
		}
		loc := a.FindIndex(text[pos:e])
		if loc == nil {
			return window{}, false
		}
		return tokenWindow(text, max(0, pos-2), pos+loc[1], e, false), true
	case classToken:
		s, e := pos, pos+kwLen
		for s > 0 && s > pos-reach && isRun(text[s-1]) {
			s--
		}
		for e < n && e < pos+reach && tokenByte(text, e) {
			e++
		}
		if e-s < r.min {
			return window{}, false
		}
		cutStart := s > 0 && isRun(text[s-1])
		for _, loc := range r.body.FindAllIndex(text[s:e], -1) {
			if s+loc[0] <= pos && pos+kwLen <= s+loc[1] {
				return tokenWindow(text, max(0, s-2), s+loc[1], e, cutStart), true
			}
		}
		return window{start: max(0, s-2), end: min(n, e+2), cutStart: cutStart, cutEnd: e < n && isRun(text[e])}, true
	case classAssign:
		v, ok := assignmentAfter(text, pos+kwLen, r.minValue)
		if !ok {
			return window{}, false
		}
		ls, le := lineBounds(text, pos, 64, 400)
		// The expressions start with [\w.-]{0,50}? before the keyword:
		// the name the keyword is part of, no more.
		s := pos
		for s > ls && pos-s < 50 && (isWord(text[s-1]) || text[s-1] == '.' || text[s-1] == '-') {
			s--
		}
		if r.generic {
			// generic-api-key, the rule whose keywords are everywhere:
			// check its value part exactly before running the expression.
			e, ok := genericValue(text, v, r.entropy)
			if !ok {
				return window{}, false
			}
			return window{start: s, end: min(n, e+2)}, true
		}
		e := le
		for e < n && e < le+tokenReach && isRun(text[e]) {
			e++ // a long value: read it whole
		}
		return window{start: s, end: min(n, e+2), cutEnd: e < n && isRun(text[e])}, true
	case classLines:
		ls, _ := lineBounds(text, pos, lineReach, 0)
		e := pos
		for lines := 0; e < n && e < pos+4*lineReach && lines < 6; e++ {
			if text[e] == '\n' {
				lines++
			}
		}
		return window{start: ls, end: e}, true
	case classBlock:
		ls, _ := lineBounds(text, pos, 400, 0)
		return window{start: ls, end: min(n, pos+1600)}, true
	case classPrivateKey:
		end := privateKeyEnd(text, pos)
		if end < 0 {
			return window{}, false
		}
		return window{start: pos, end: end}, true
	default:
		ls, le := lineBounds(text, pos, lineReach, lineReach)
		return window{start: ls, end: le}, true
	}
}

// tokenByte reports whether text[i] can be part of a token: a run byte
// that does not start a JSON escape (\" \n \u0026 … in JSON held in a
// string end a token as what they stand for does; \/ does not).
func tokenByte(text []byte, i int) bool {
	return isRun(text[i]) && !(text[i] == '\\' && i+1 < len(text) && strings.IndexByte(`"\bfnrtu`, text[i+1]) >= 0)
}

// tokenWindow is the window of a token rule whose format's longest match
// around the keyword ends at m, in a run of token bytes ending at e. When
// a letter or a digit goes on after m, the token is longer than the
// format and the window is the run and two bytes more (a rule that wants
// the token to end there does not match; one that does not is extended
// over the rest); otherwise the window ends at m, and what is glued after
// the token is not seen.
func tokenWindow(text []byte, start, m, e int, cutStart bool) window {
	n := len(text)
	if m < n && isAlnum(text[m]) {
		return window{start: start, end: min(n, e+2), cutStart: cutStart, cutEnd: e < n && isRun(text[e])}
	}
	return window{start: start, end: m, cutStart: cutStart}
}

// lineBounds returns the line around pos, at most back bytes before it and
// fwd bytes after it.
func lineBounds(text []byte, pos, back, fwd int) (int, int) {
	s := max(0, pos-back)
	if i := lastIndexByte(text[s:pos], '\n'); i >= 0 {
		s += i + 1
	}
	e := min(len(text), pos+fwd)
	if i := indexByte(text[pos:e], '\n'); i >= 0 {
		e = pos + i
	}
	return s, e
}

// assignmentAfter reports whether the text after a keyword can be the
// operator part of gitleaks' name = value rules:
// (?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,).
func assignmentAfter(text []byte, i, minValue int) (int, bool) {
	n := len(text)
	for k := 0; k < 20 && i < n && (isWord(text[i]) || text[i] == ' ' || text[i] == '\t' || text[i] == '.' || text[i] == '-'); k++ {
		i++
	}
	for k := 0; k < 3 && i < n && (isSpace(text[i]) || text[i] == '\'' || text[i] == '"'); k++ {
		i++
	}
	if i >= n || strings.IndexByte("=>:|?,", text[i]) < 0 {
		return 0, false
	}
	// The value: [\x60'"\s=]{0,5} then the secret, which starts with a
	// run of at least minValue of these characters (generic-api-key:
	// ([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})).
	i++
	for k := 0; k < 3 && i < n && strings.IndexByte(":=>|", text[i]) >= 0; k++ {
		i++
	}
	for k := 0; k < 5 && i < n && (isSpace(text[i]) || strings.IndexByte("`'\"=", text[i]) >= 0); k++ {
		i++
	}
	op := i
	v := i
	for i < n && i-v < minValue && (isWord(text[i]) || strings.IndexByte(".=-+/", text[i]) >= 0) {
		i++
	}
	return op, i-v >= minValue
}

// genericValue reports whether generic-api-key can match a value at i
// (just past the first operator character): after [\x60'"\s=]{0,5}, a
// secret ([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3}) whose entropy
// is above ent, then (?:[\x60'"\s;]|\\[nr]|$). It returns where the
// value ends.
func genericValue(text []byte, i int, ent float64) (int, bool) {
	n := len(text)
	// The rest of a multi-character operator (:=, ::=, ||, =>, ?=).
	for k := 0; k < 3 && i < n && strings.IndexByte(":=>|", text[i]) >= 0; k++ {
		i++
	}
	for k := 0; k <= 5 && i+k <= n; k++ {
		if k > 0 {
			if c := text[i+k-1]; !(isSpace(c) || c == '`' || c == '\'' || c == '"' || c == '=') {
				break
			}
		}
		v := i + k
		e := v
		for e < n && e-v <= 150 && (isWord(text[e]) || text[e] == '.' || text[e] == '=' || text[e] == '-') {
			e++
		}
		if e-v >= 10 && e-v <= 150 && tailAt(text, e) && entropy(text[v:e]) > ent {
			return e, true
		}
		if v < n && isAlnum(text[v]) {
			e = v + 1
			for e < n && (isAlnum(text[e]) || text[e] == '+' || text[e] == '/') {
				e++
			}
			for p := 0; p < 3 && e < n && text[e] == '='; p++ {
				e++
			}
			if e-v >= 12 && tailAt(text, e) && entropy(text[v:e]) > ent {
				return e, true
			}
		}
	}
	return 0, false
}

// tailAt reports whether a secret may end at e: (?:[\x60'"\s;]|\\[nr]|$).
func tailAt(text []byte, e int) bool {
	if e >= len(text) {
		return true
	}
	switch c := text[e]; c {
	case '`', '\'', '"', ';', ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	case '\\':
		return e+1 < len(text) && (text[e+1] == 'n' || text[e+1] == 'r')
	}
	return false
}

// firstCapture returns the first capturing group of re.
func firstCapture(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpCapture {
		return re
	}
	for _, s := range re.Sub {
		if c := firstCapture(s); c != nil {
			return c
		}
	}
	return nil
}

// privateKeyEnd returns the end of the PEM block starting at pos: just
// past "-----END … KEY-----", or -1 when there is none near.
func privateKeyEnd(text []byte, pos int) int {
	lim := min(len(text), pos+keyReach)
	i := indexFold(text[pos+10:lim], "-----end")
	if i < 0 {
		return -1
	}
	i += pos + 10 + 8
	j := indexByte(text[i:min(lim, i+120)], '-')
	if j < 0 {
		return -1
	}
	e := i + j
	for e < lim && text[e] == '-' {
		e++
	}
	return e
}

// detect runs the rule on a window and appends the findings' offsets in
// the window (start, end pairs) to hits.
func (r *rule) detect(frag []byte, hits []int32) []int32 {
	if r.pre != nil && !r.pre(frag) {
		return hits
	}
	if r.glConfig != nil {
		s := unsafe.String(unsafe.SliceData(frag), len(frag))
		for _, f := range r.detector().DetectString(s) {
			secret := f.Secret
			if secret == "" {
				continue
			}
			if r.wholeMatch {
				if m := strings.Index(s, f.Match); m >= 0 {
					a, b := trimMatch(s, m, m+len(f.Match))
					if a < b {
						hits = append(hits, int32(a), int32(b))
						continue
					}
				}
			}
			at := -1
			if m := strings.Index(s, f.Match); m >= 0 {
				if k := strings.LastIndex(f.Match, secret); k >= 0 {
					at = m + k
				}
			}
			if at < 0 {
				at = strings.Index(s, secret)
			}
			if at >= 0 {
				end := at + len(secret)
				if r.noCapture {
					_, end = trimMatch(s, at, end)
					for end > at+1 && !tokenEnd(s[end-1]) {
						end--
					}
				}
				hits = append(hits, int32(at), int32(end))
			}
		}
		return hits
	}
	for _, m := range r.re.FindAllSubmatchIndex(frag, -1) {
		s, e := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			s, e = m[2], m[3]
		}
		if r.minEnt > 0 && entropy(frag[s:e]) < r.minEnt || r.random && !drawn(frag[s:e]) {
			continue
		}
		hits = append(hits, int32(s), int32(e))
	}
	return hits
}

// trimMatch trims from a gitleaks match [a, b) of s what its expression
// only requires around a token: spaces, quotes, a semicolon, a \n or \r
// escape.
func trimMatch(s string, a, b int) (int, int) {
	for a < b && (isSpace(s[a]) || strings.IndexByte("'\"`;", s[a]) >= 0) {
		a++
	}
	for a < b {
		switch c := s[b-1]; {
		case isSpace(c) || strings.IndexByte("'\"`;", c) >= 0:
			b--
			continue
		case (c == 'n' || c == 'r') && b-2 >= a && s[b-2] == '\\':
			b -= 2
			continue
		}
		break
	}
	return a, b
}

// tokenEnd reports whether a token may end with c: an alphanumeric
// character, or base64 padding and the separators of token alphabets.
func tokenEnd(c byte) bool { return isAlnum(c) || strings.IndexByte("=-_+/", c) >= 0 }

// span makes a span of a finding. A token rule's finding goes on over
// the bytes that continue its token (a token longer than its format's
// count is never left in part) and stops at anything else, so that what
// is glued after a token is not part of its marker; the full stop or
// comma of prose after a token is not part of it either. Another rule's
// finding is extended over the rest of its token when the window cut the
// token.
func (r *rule) span(text []byte, w window, s, e int) span {
	if r.re != nil {
		for e > s+1 && strings.IndexByte(".,:;!?", text[e-1]) >= 0 {
			e-- // a full stop after the token, not part of it
		}
	}
	e0 := e
	switch {
	case r.ext != nil && (e < len(text) && isAlnum(text[e]) || w.cutEnd && e >= w.end-2):
		for e < len(text) && r.ext[text[e]] {
			e++
		}
	case r.ext == nil && w.cutEnd && e >= w.end-2:
		for e < len(text) && isRun(text[e]) {
			e++
		}
	}
	// Not the full stop, comma or colon that follows the token in prose.
	for e > e0 && strings.IndexByte(".,:;!?", text[e-1]) >= 0 {
		e--
	}
	if w.cutStart && s <= w.start+2 {
		for s > 0 && isRun(text[s-1]) {
			s--
		}
	}
	return span{start: s, end: e, rule: r}
}
