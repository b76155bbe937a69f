// Package excerpt cuts texts that may hold redaction markers, so that no
// cut ever splits one: a marker cut short ("[REDACTED:github-p…") is a
// different marker, and a reader can no longer tell which secret, or that
// a secret, was there.
//
// A redaction marker is what pos-scrub writes in place of a secret:
//
//	[REDACTED:<rule>:<8 hex digits>]
//
// Every function here cuts at a rune boundary and moves a cut that falls
// inside a marker to the marker's start (for a prefix) or end (for a
// suffix).
//
// It also holds the rule for the texts the lake keeps cut (titles, decision
// contexts and sentences): a stage before pos-scrub carries such a field's
// whole source (Source), and the stages after it make the field (Finish),
// so the field is cut from text that is already redacted, exactly as its
// source is. See Finish.
package excerpt

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// MarkerPrefix is how a redaction marker starts.
const MarkerPrefix = "[REDACTED:"

// maxRuleID bounds the rule name inside a marker.
const maxRuleID = 64

// MaxMarker is the longest a redaction marker can be, in bytes.
const MaxMarker = len(MarkerPrefix) + maxRuleID + 1 + 8 + 1

// MarkerLen returns the length of the redaction marker s starts with, or 0.
func MarkerLen(s string) int {
	if !strings.HasPrefix(s, MarkerPrefix) {
		return 0
	}
	i := len(MarkerPrefix)
	j := i
	for j < len(s) && j-i < maxRuleID && isRuleByte(s[j]) {
		j++
	}
	if j == i || j >= len(s) || s[j] != ':' {
		return 0
	}
	j++
	if len(s) < j+9 || s[j+8] != ']' {
		return 0
	}
	for k := j; k < j+8; k++ {
		if c := s[k]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return 0
		}
	}
	return j + 9
}

func isRuleByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// Markers returns the byte spans of the redaction markers in s, in order.
func Markers(s string) [][2]int {
	var out [][2]int
	for i := 0; ; {
		k := strings.Index(s[i:], MarkerPrefix)
		if k < 0 {
			return out
		}
		i += k
		if n := MarkerLen(s[i:]); n > 0 {
			out = append(out, [2]int{i, i + n})
			i += n
			continue
		}
		i++
	}
}

// Around returns the marker that position i of s falls strictly inside
// (start < i < end), if any.
func Around(s string, i int) (start, end int, ok bool) {
	if i <= 0 || i >= len(s) {
		return 0, 0, false
	}
	// A marker that starts before lo ends at or before i. A marker holds
	// no '[', so only the last marker start before i can hold i.
	lo := max(0, i-MaxMarker+1)
	hi := min(len(s), i+len(MarkerPrefix)-1)
	k := strings.LastIndex(s[lo:hi], MarkerPrefix)
	if k < 0 {
		return 0, 0, false
	}
	k += lo
	if n := MarkerLen(s[k:]); n > 0 && k+n > i {
		return k, k + n, true
	}
	return 0, 0, false
}

// Back returns the greatest cut point of s at or before i that is a rune
// boundary and not inside a marker.
func Back(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	if i <= 0 {
		return 0
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if start, _, ok := Around(s, i); ok {
		return start
	}
	return i
}

// Forward returns the least cut point of s at or after i that is a rune
// boundary and not inside a marker.
func Forward(s string, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	if _, end, ok := Around(s, i); ok {
		return end
	}
	return i
}

// Prefix returns s cut to at most n bytes.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:Back(s, max(n, 0))]
}

// Suffix returns the end of s, at most n bytes.
func Suffix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[Forward(s, len(s)-max(n, 0)):]
}

// runeOffset is the byte offset of s's n-th rune (len(s) if it has fewer).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// PrefixRunes returns s cut to at most n runes.
func PrefixRunes(s string, n int) string {
	i := runeOffset(s, max(n, 0))
	return s[:Back(s, i)]
}

// SuffixRunes returns the end of s, at most n runes.
func SuffixRunes(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	return s[Forward(s, runeOffset(s, total-max(n, 0))):]
}

// Ellipsis ends a text that was cut.
const Ellipsis = "…"

// Line returns the first line of s, without the white space around it,
// cut to at most n bytes with Ellipsis at the end when it was longer. The
// result is its own Line: cutting it again changes nothing.
func Line(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) <= n {
		return s
	}
	return strings.TrimRight(s[:Back(s, max(n-len(Ellipsis), 0))], " \t") + Ellipsis
}

// Width returns s cut to at most w terminal columns, ending with tail when
// it was cut (as runewidth.Truncate).
func Width(s string, w int, tail string) string {
	if runewidth.StringWidth(s) <= w {
		return s
	}
	p := runewidth.Truncate(s, max(w-runewidth.StringWidth(tail), 0), "")
	return s[:Back(s, len(p))] + tail
}

// WidthStart returns the end of s that is left when its first n columns
// are taken off (as runewidth.TruncateLeft without a prefix), starting
// after a marker the cut falls inside.
func WidthStart(s string, n int) string {
	t := runewidth.TruncateLeft(s, n, "")
	return s[Forward(s, len(s)-len(t)):]
}
