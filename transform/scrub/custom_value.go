package scrub

import (
	"bytes"
	"math"
	"regexp"
	"strings"

	"github.com/pos-lake/pos/internal/keyword"
)

// kebabLiteral reports whether an identifier-like value is a string of
// words joined by hyphens (test-jwt-secret-key-32-characters-long): no
// name in code is spelled so, and a secret made of words is still the
// secret.
func kebabLiteral(v []byte) bool {
	return len(v) >= 16 && bytes.Count(v, []byte("-")) >= 2 && bytes.IndexByte(v, '.') < 0
}

// wordRE is a name made of words: lower, upper, capitalised or camelCase
// (getUserID, XMLHttpRequest, SECRET), with at most four digits at the end.
var wordRE = regexp.MustCompile(`^(?:[a-z]+|[A-Z]+|(?:[A-Z]+|[a-z]+)?(?:[A-Z][a-z]+)+[A-Z]*)[0-9]{0,4}$`)

// identifierLike reports whether v reads as a name: words separated by
// _ . or - (user_password2, getToken, SECRET_KEY_1, v2, config.api_token).
func identifierLike(v []byte) bool {
	for _, seg := range bytes.FieldsFunc(v, func(r rune) bool { return r == '_' || r == '.' || r == '-' }) {
		if !wordRE.Match(seg) && !(len(seg) <= 4 && isDigits(seg)) {
			return false
		}
	}
	return true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// randomLetters reports whether a value of letters alone looks drawn at
// random rather than spelled: long, mixed case, few vowels, case changing
// often.
func randomLetters(v []byte) bool {
	if len(v) < 20 {
		return false
	}
	var vowels, switches, up int
	for i, c := range v {
		if strings.IndexByte("aeiouAEIOU", c) >= 0 {
			vowels++
		}
		if c >= 'A' && c <= 'Z' {
			up++
		}
		if i > 0 && (c >= 'A' && c <= 'Z') != (v[i-1] >= 'A' && v[i-1] <= 'Z') {
			switches++
		}
	}
	n := float64(len(v))
	return up > 0 && up < len(v) && float64(vowels)/n < 0.3 && float64(switches)/n > 0.2
}

// pathLike reports whether v is a file path or URL path: segments between
// slashes that are names (a/b/c.txt, ./run/secrets/db).
func pathLike(v []byte) bool {
	if bytes.IndexByte(v, '/') < 0 || bytes.IndexByte(v, '+') >= 0 {
		return false
	}
	for _, seg := range bytes.Split(v, []byte("/")) {
		seg = bytes.Trim(seg, ".~")
		if len(seg) > 0 && !identifierLike(seg) {
			return false
		}
	}
	return true
}

// homeUser finds the user name in home directory paths: /home/NAME,
// /Users/NAME, C:\Users\NAME, and Claude Code's project directory names
// (-home-NAME-…).
func homeUser(text []byte, pos, kwLen int, out []span) []span {
	dash := text[pos] == '-'
	if pos > 0 {
		c := text[pos-1]
		if dash {
			if !(c == '/' || c == '\\' || c == '"' || c == '\'' || isSpace(c) || boundaryBefore(text, pos) && !isAlnum(c)) {
				return out
			}
		} else if !boundaryBefore(text, pos) || c == '.' || c == '_' || c == '-' {
			return out // part of a URL or a longer path (/api/users/…)
		}
	}
	s := pos + kwLen
	e := s
	for e < len(text) && e-s < 64 && (isAlnum(text[e]) || text[e] == '.' || text[e] == '_' || !dash && text[e] == '-') {
		e++
	}
	if e == s || e < len(text) && isAlnum(text[e]) {
		return out
	}
	if systemUsers[strings.ToLower(string(text[s:e]))] {
		return out
	}
	return append(out, span{start: s, end: e})
}

// systemUsers are account names that say nothing about a person, and
// placeholders written in their place.
var systemUsers = map[string]bool{
	"user": true, "username": true, "you": true, "your": true, "yourname": true, "your-name": true,
	"your_name": true, "me": true, "name": true, "someone": true, "runner": true, "ubuntu": true,
	"ec2-user": true, "vagrant": true, "node": true, "app": true, "root": true, "linuxbrew": true,
	"shared": true, "admin": true, "guest": true, "default": true, "public": true, "all": true,
	"jenkins": true, "www-data": true, "nobody": true, "example": true, "...": true,
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isWord(c byte) bool { return isAlnum(c) || c == '_' }

func isIdent(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// entropy is the Shannon entropy of b in bits per byte, as gitleaks
// computes it for ASCII.
func entropy(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	inv := 1 / float64(len(b))
	e := 0.0
	for _, k := range counts {
		if k > 0 {
			f := float64(k) * inv
			e -= f * math.Log2(f)
		}
	}
	return e
}

func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }

func lastIndexByte(b []byte, c byte) int { return bytes.LastIndexByte(b, c) }

// indexFold returns the index of the lower-case ASCII string s in b,
// ignoring case, or -1.
func indexFold(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if keyword.Lower[b[i]] == s[0] && keyword.HasPrefixFold(b[i:], s) {
			return i
		}
	}
	return -1
}
