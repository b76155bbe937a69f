package scrub

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// classify sets the window class of a rule with expression src and its
// match lengths.
func (r *rule) classify(src string, keywords []string) error {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return fmt.Errorf("rule %s: %w", r.id, err)
	}
	body := trimBoundaries(re)
	r.min, r.max = matchLen(body)
	defer func() {
		switch r.class {
		case classToken, classAnchored, classLine:
			if !strings.Contains(src, assignOp) && !r.generic {
				r.ext = lastSet(body)
			}
		}
	}()
	switch {
	case r.id == "private-key":
		r.class = classPrivateKey
	case strings.HasPrefix(r.id, "curl-"):
		r.class = classLines
		switch r.id {
		case "curl-auth-user":
			r.pre = curlUser
		case "curl-auth-header":
			r.pre = curlHeader
		}
	case r.id == "kubernetes-secret-yaml":
		r.class = classBlock
	case strings.Contains(src, assignOp) && re.Op == syntax.OpAlternate:
		r.class = classLine // name = value or a bare token: both fit a line
	case strings.Contains(src, assignOp):
		r.class = classAssign
		r.minValue = 10
		if c := firstCapture(re); c != nil {
			l, _ := matchLen(c)
			r.minValue = max(1, min(10, l-2))
		}
	case runOnly(body):
		r.class = classToken
		var anchor *regexp.Regexp
		lits, _ := prefixes(body)
		for _, k := range keywords {
			k = strings.ToLower(k)
			if !slices.ContainsFunc(lits, func(l string) bool { return strings.HasPrefix(strings.ToLower(l), k) }) {
				continue
			}
			if anchor == nil {
				if anchor, err = regexp.Compile(`^(?:` + body.String() + `)`); err != nil {
					return fmt.Errorf("rule %s: anchored form: %w", r.id, err)
				}
				anchor.Longest()
				r.anchored = map[string]*regexp.Regexp{}
			}
			r.anchored[k] = anchor
		}
		if len(r.anchored) == len(keywords) {
			r.class = classAnchored
		} else {
			if r.body, err = regexp.Compile(body.String()); err != nil {
				return fmt.Errorf("rule %s: body: %w", r.id, err)
			}
			r.body.Longest()
		}
	default:
		r.class = classLine
	}
	return nil
}

// trimBoundaries drops the leading and trailing elements of a concatenation
// that only say what may surround a match ((?:^|[\s'"]) before a token,
// (?:[\s'";]|\\[nr]|$) after it), leaving the body of the match.
func trimBoundaries(re *syntax.Regexp) *syntax.Regexp {
	if re.Op != syntax.OpConcat {
		return re
	}
	subs := re.Sub
	for len(subs) > 0 && isBoundary(subs[0]) {
		subs = subs[1:]
	}
	for len(subs) > 0 && isBoundary(subs[len(subs)-1]) {
		subs = subs[:len(subs)-1]
	}
	if len(subs) == len(re.Sub) {
		return re
	}
	c := *re
	c.Sub = subs
	return &c
}

func isBoundary(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpBeginLine, syntax.OpEndLine:
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			switch s.Op {
			case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
				return true
			}
		}
	}
	return false
}

const unbounded = -1

// matchLen returns the shortest and longest match of re in bytes
// (unbounded: -1).
func matchLen(re *syntax.Regexp) (lo, hi int) {
	add := func(a, b int) int {
		if a == unbounded || b == unbounded {
			return unbounded
		}
		return a + b
	}
	mul := func(a, n int) int {
		if a == unbounded || n == unbounded {
			if a == 0 {
				return 0
			}
			return unbounded
		}
		return a * n
	}
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += utf8.RuneLen(r)
		}
		return n, n
	case syntax.OpCharClass:
		hi := 1
		if len(re.Rune) > 0 && re.Rune[len(re.Rune)-1] >= utf8.RuneSelf {
			hi = utf8.UTFMax
		}
		return 1, hi
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, utf8.UTFMax
	case syntax.OpCapture:
		return matchLen(re.Sub[0])
	case syntax.OpStar:
		_, h := matchLen(re.Sub[0])
		return 0, mul(h, unbounded)
	case syntax.OpPlus:
		l, h := matchLen(re.Sub[0])
		return l, mul(h, unbounded)
	case syntax.OpQuest:
		_, h := matchLen(re.Sub[0])
		return 0, h
	case syntax.OpRepeat:
		l, h := matchLen(re.Sub[0])
		return l * re.Min, mul(h, re.Max)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			l, h := matchLen(s)
			lo, hi = lo+l, add(hi, h)
		}
		return lo, hi
	case syntax.OpAlternate:
		for i, s := range re.Sub {
			l, h := matchLen(s)
			if i == 0 || l < lo {
				lo = l
			}
			if i == 0 || hi != unbounded && (h == unbounded || h > hi) {
				hi = h
			}
		}
		return lo, hi
	}
	return 0, 0
}

// runOnly reports whether every character re can match is a token
// character: the match then lies within one token of the text.
func runOnly(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf || !isRun(byte(r)) {
				return false
			}
		}
		return true
	case syntax.OpCharClass:
		// Non-ASCII members come from case folding (K, ſ): a token
		// holding one is split there, and no format contains them.
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= min(re.Rune[i+1], utf8.RuneSelf-1); c++ {
				if !isRun(byte(c)) {
					return false
				}
			}
		}
		return true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	for _, s := range re.Sub {
		if !runOnly(s) {
			return false
		}
	}
	return true
}

// prefixes returns strings every match of re starts with (one of), and
// whether they are all re can match. It gives up (returning "") past 64
// strings.
func prefixes(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, true
	case syntax.OpCapture:
		return prefixes(re.Sub[0])
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginText, syntax.OpBeginLine:
		return []string{""}, true
	case syntax.OpConcat:
		acc := []string{""}
		for _, sub := range re.Sub {
			p, full := prefixes(sub)
			if len(acc)*len(p) > 64 {
				return acc, false
			}
			var next []string
			for _, a := range acc {
				for _, b := range p {
					next = append(next, a+b)
				}
			}
			acc = next
			if !full {
				return acc, false
			}
		}
		return acc, true
	case syntax.OpAlternate:
		var all []string
		full := true
		for _, sub := range re.Sub {
			p, f := prefixes(sub)
			all = append(all, p...)
			full = full && f
		}
		if len(all) > 64 {
			return []string{""}, false
		}
		return all, full
	}
	return []string{""}, false
}

// isRun reports whether c can be part of a token: printable ASCII other
// than quotes, brackets and separators.
func isRun(c byte) bool { return runChar[c] }

var runChar = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune("\"'`<>()[]{},;|", rune(c))
	}
	return t
}()

// lastSet returns the bytes that continue a token of re's format: what
// the last character of a match can be, and ASCII letters and digits.
func lastSet(re *syntax.Regexp) *[256]bool {
	set := new([256]bool)
	addLast(re, set)
	for c := range 256 {
		set[c] = set[c] && isRun(byte(c)) || isAlnum(byte(c))
	}
	return set
}

// addLast adds to set the bytes the last character of a match of re can
// be, and reports whether re can match the empty string (then what comes
// before it can end a match too).
func addLast(re *syntax.Regexp, set *[256]bool) (empty bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true
		}
		addRune(set, re.Rune[len(re.Rune)-1], re.Flags&syntax.FoldCase != 0)
		return false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= min(re.Rune[i+1], utf8.RuneSelf-1); c++ {
				set[c] = true
			}
		}
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return addLast(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		addLast(re.Sub[0], set)
		return true
	case syntax.OpRepeat:
		return addLast(re.Sub[0], set) || re.Min == 0
	case syntax.OpConcat:
		for i := len(re.Sub) - 1; i >= 0; i-- {
			if !addLast(re.Sub[i], set) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if addLast(sub, set) {
				empty = true
			}
		}
		return empty
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	return true // empty matches and assertions
}

func addRune(set *[256]bool, c rune, fold bool) {
	if c >= utf8.RuneSelf {
		return
	}
	set[c] = true
	if fold && c >= 'a' && c <= 'z' {
		set[c-'a'+'A'] = true
	}
	if fold && c >= 'A' && c <= 'Z' {
		set[c-'A'+'a'] = true
	}
}

// curlOption calls fn with the text after each whitespace-preceded
// occurrence of one of opts and its [= \t]{0,5}, until fn says yes.
func curlOption(frag []byte, fn func(v []byte) bool, opts ...string) bool {
	for _, o := range opts {
		for i := 0; ; {
			k := bytes.Index(frag[i:], []byte(o))
			if k < 0 {
				break
			}
			p := i + k
			i = p + len(o)
			if p == 0 || !isSpace(frag[p-1]) {
				continue
			}
			v := i
			if v < len(frag) && frag[v] == '=' {
				v++
			} else {
				for k := 0; k < 5 && v < len(frag) && (frag[v] == ' ' || frag[v] == '\t'); k++ {
					v++
				}
			}
			if fn(frag[v:]) {
				return true
			}
		}
	}
	return false
}

// curlHeader: -H "Authorization: …", or a header named …key or …token.
func curlHeader(frag []byte) bool {
	return curlOption(frag, func(v []byte) bool {
		if len(v) == 0 || v[0] != '"' && v[0] != '\'' {
			return false
		}
		v = v[1:]
		c := indexByte(v[:min(len(v), 48)], ':')
		if c < 0 {
			return false
		}
		name := strings.ToLower(string(v[:c]))
		return name == "authorization" || strings.HasSuffix(name, "key") || strings.HasSuffix(name, "token")
	}, "-H", "--header")
}

// curlUser: -u user:password.
func curlUser(frag []byte) bool {
	return curlOption(frag, func(v []byte) bool {
		e := 0
		for e < len(v) && e < 512 && !isSpace(v[e]) {
			e++
		}
		return indexByte(v[:e], ':') >= 0
	}, "-u", "--user")
}
