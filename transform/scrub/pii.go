package scrub

import (
	"bytes"
	"net/netip"
	"regexp"
	"strings"
	"unsafe"
)

// PII rules (--pii): e-mail addresses, phone numbers, IP addresses. The
// user names in home directories are a keyword rule (homeUser). These scan
// the whole text, each with a cheap first pass: a byte every candidate must
// hold ('@', '.', ':', a digit group) found with bytes.IndexByte.

var piiRules = map[string]*rule{
	"email": {id: "email", pri: priPII, pii: true},
	"phone": {id: "phone", pri: priPII, pii: true},
	"ipv4":  {id: "ipv4", pri: priPII, pii: true},
	"ipv6":  {id: "ipv6", pri: priPII, pii: true},
}

func scanPII(text []byte, out []span) []span {
	out = scanEmail(text, out)
	out = scanIPv4(text, out)
	out = scanIPv6(text, out)
	return scanPhone(text, out)
}

// scanAround finds spans around each occurrence of the byte anchor in
// text, left to right: match looks at the anchor at offset c and returns
// the span [s, e) it holds, if ok, and the offset past c where the search
// for the next anchor starts.
func scanAround(text []byte, anchor byte, r *rule, out []span, match func(c int) (s, e, next int, ok bool)) []span {
	for i := 0; ; {
		k := bytes.IndexByte(text[i:], anchor)
		if k < 0 {
			return out
		}
		s, e, next, ok := match(i + k)
		if ok {
			out = append(out, span{start: s, end: e, rule: r})
		}
		i = next
	}
}

// notEmailTLD are file extensions that follow name@2x-style names.
var notEmailTLD = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "js": true, "ts": true,
	"tsx": true, "jsx": true, "mjs": true, "cjs": true, "py": true, "go": true, "rs": true, "md": true, "json": true,
	"yaml": true, "yml": true, "toml": true, "txt": true, "css": true, "scss": true, "html": true, "lock": true,
	"sh": true, "vue": true, "svelte": true, "map": true, "ico": true, "pdf": true, "zip": true, "gz": true,
	"local": true, "localhost": true, "internal": true, "test": true, "invalid": true, "example": true,
}

// notPersonal are addresses that belong to no person.
func notPersonal(local, domain string) bool {
	l, d := strings.ToLower(local), strings.ToLower(domain)
	switch {
	case d == "example.com" || d == "example.org" || d == "example.net" || strings.HasSuffix(d, ".example.com"):
		return true
	case strings.HasSuffix(d, "users.noreply.github.com"):
		return false // 123+name@users.noreply.github.com names a GitHub account
	case l == "git" || l == "noreply" || l == "no-reply" || l == "donotreply" || l == "do-not-reply":
		return true
	}
	return false
}

func scanEmail(text []byte, out []span) []span {
	return scanAround(text, '@', piiRules["email"], out, func(at int) (s, e, next int, ok bool) {
		next = at + 1
		s = at
		for s > 0 && at-s < 64 && isEmailLocal(text[s-1]) {
			s--
		}
		for s < at && (text[s] == '.' || text[s] == '-') {
			s++
		}
		if s >= 2 && s+1 < at && text[s-1] == '\\' && (text[s] == 'n' || text[s] == 't' || text[s] == 'r') {
			s++ // \nname@… in text held in a string
		}
		if s == at {
			return 0, 0, next, false
		}
		e = at + 1
		dot, lastDot := -1, -1
		for e < len(text) && e-at < 255 && (isAlnum(text[e]) || text[e] == '-' || text[e] == '.') {
			if text[e] == '.' {
				if dot < 0 {
					dot = e
				}
				lastDot = e
			}
			e++
		}
		for e > at+1 && (text[e-1] == '.' || text[e-1] == '-') {
			e--
		}
		if lastDot >= e {
			lastDot = bytes.LastIndexByte(text[at+1:e], '.')
			if lastDot >= 0 {
				lastDot += at + 1
			}
		}
		if dot < 0 || lastDot < 0 || lastDot <= at+1 {
			return 0, 0, next, false
		}
		tld := text[lastDot+1 : e]
		if len(tld) < 2 || len(tld) > 24 || !isLetters(tld) || notEmailTLD[strings.ToLower(string(tld))] {
			return 0, 0, next, false
		}
		if notPersonal(string(text[s:at]), string(text[at+1:e])) {
			return 0, 0, next, false
		}
		return s, e, e, true
	})
}

func isEmailLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isLetters(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanIPv4 finds dotted quads that are public or private addresses (not
// loopback, unspecified, broadcast, link-local or multicast), not part of a
// longer dotted number (a version) or of a word.
func scanIPv4(text []byte, out []span) []span {
	n := len(text)
	return scanAround(text, '.', piiRules["ipv4"], out, func(dot int) (s, e, next int, ok bool) {
		next = dot + 1
		if dot == 0 || !isDigit(text[dot-1]) {
			return 0, 0, next, false
		}
		s = dot - 1
		for s > 0 && dot-s < 3 && isDigit(text[s-1]) {
			s--
		}
		if s > 0 && (!boundaryBefore(text, s) || text[s-1] == '.' || text[s-1] == '_' || text[s-1] == ']' || text[s-1] == '-' && s > 1 && isDigit(text[s-2])) {
			return 0, 0, next, false
		}
		e = s
		parts := 0
		for parts < 4 {
			d := e
			for e < n && e-d < 3 && isDigit(text[e]) {
				e++
			}
			if e == d {
				break
			}
			parts++
			if parts < 4 {
				if e >= n || text[e] != '.' {
					break
				}
				e++
			}
		}
		if parts != 4 || e < n && (isAlnum(text[e]) || text[e] == '_' || text[e] == '.' && e+1 < n && isDigit(text[e+1])) {
			return 0, 0, max(next, e), false
		}
		a, err := netip.ParseAddr(unsafe.String(unsafe.SliceData(text[s:e]), e-s))
		if err != nil || a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() ||
			a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) || a.As4()[0] == 0 {
			return 0, 0, max(next, e), false
		}
		return s, e, max(next, e), true
	})
}

// scanIPv6 finds IPv6 addresses: runs of hex digits and colons that parse
// as one, with at least two colons, not loopback or unspecified.
func scanIPv6(text []byte, out []span) []span {
	n := len(text)
	return scanAround(text, ':', piiRules["ipv6"], out, func(c int) (s, e, next int, ok bool) {
		s = c
		for s > 0 && c-s < 40 && (isHex(text[s-1]) || text[s-1] == ':') {
			s--
		}
		e = c
		for e < n && e-s < 45 && (isHex(text[e]) || text[e] == ':' || text[e] == '.' && e+1 < n && isDigit(text[e+1])) {
			e++
		}
		next = e
		if next == c {
			next = c + 1
		}
		if s > 0 && (isAlnum(text[s-1]) || text[s-1] == '_') || e < n && (isAlnum(text[e]) || text[e] == '_') {
			return 0, 0, next, false
		}
		if e-s < 6 || bytes.Count(text[s:e], []byte{':'}) < 2 {
			return 0, 0, next, false
		}
		a, err := netip.ParseAddr(string(text[s:e]))
		if err != nil || !a.Is6() || a.Is4In6() || a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() {
			return 0, 0, next, false
		}
		return s, e, next, true
	})
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// phoneRE is a NANP number with separators, or an international number
// starting with +, ending where the candidate ends.
var phoneRE = regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}$|\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){1,5}[ .-]?\d{2,12}$`)

// scanPhone looks at each run of digits that ends a number (not followed
// by a letter, a digit or a decimal part) and is part of a grouped number
// (after a separator) or follows a +, and matches the text before it.
func scanPhone(text []byte, out []span) []span {
	n := len(text)
	last := 0
	for i := 0; i < n; {
		k := indexDigit(text[i:])
		if k < 0 {
			break
		}
		s := i + k
		e := s
		for e < n && isDigit(text[e]) {
			e++
		}
		i = e
		if e-s < 2 || s == 0 || e < n && (isAlnum(text[e]) || (text[e] == '.' || text[e] == '-') && e+1 < n && isDigit(text[e+1])) {
			continue
		}
		if c := text[s-1]; c != '+' && c != ' ' && c != '.' && c != '-' && c != ')' {
			continue
		}
		ws := max(0, s-24, last)
		digits := 0
		for _, c := range text[ws:e] {
			if isDigit(c) {
				digits++
			}
		}
		if digits < 10 {
			continue // a phone number has ten digits or more
		}
		m := phoneRE.FindIndex(text[ws:e])
		if m == nil {
			continue
		}
		ms := ws + m[0]
		if ms > 0 && !boundaryBefore(text, ms) || ms > 0 && (text[ms-1] == '.' || text[ms-1] == '-' || text[ms-1] == '+' || text[ms-1] == '/' || text[ms-1] == ']') {
			continue
		}
		digits = 0
		for _, c := range text[ms:e] {
			if isDigit(c) {
				digits++
			}
		}
		if digits < 10 || digits > 15 {
			continue
		}
		out = append(out, span{start: ms, end: e, rule: piiRules["phone"]})
		last = e
	}
	return out
}

func indexDigit(b []byte) int {
	for i, c := range b {
		if c >= '0' && c <= '9' {
			return i
		}
	}
	return -1
}

// boundaryBefore reports whether position i starts a word: the text
// before it is not a letter or digit, or is an escape (\n, \t, \r) of
// text held in a string.
func boundaryBefore(text []byte, i int) bool {
	if i == 0 || !isAlnum(text[i-1]) {
		return true
	}
	return i >= 2 && text[i-2] == '\\' && (text[i-1] == 'n' || text[i-1] == 't' || text[i-1] == 'r')
}
