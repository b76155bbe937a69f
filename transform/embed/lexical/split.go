package lexical

import (
	"unicode"
	"unicode/utf8"
)

// simpleWord reports whether a word is one part: ASCII letters, at most
// its first upper case, or ASCII digits only, or letters of another
// script (most words of prose).
func simpleWord(w string) bool {
	digits := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z':
			digits = false
		case c >= 'A' && c <= 'Z':
			if i > 0 {
				return false
			}
			digits = false
		case c >= '0' && c <= '9':
			if !digits {
				return false
			}
		case c >= utf8.RuneSelf:
			return simpleUnicode(w)
		default:
			return false
		}
	}
	return true
}

// simpleUnicode reports whether a word with non-ASCII letters is one
// part: letters only, at most the first upper case.
func simpleUnicode(w string) bool {
	for i, r := range w {
		switch {
		case unicode.IsUpper(r):
			if i > 0 {
				return false
			}
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
		default:
			return false
		}
	}
	return true
}

// upperWord reports whether a word is 2 or more upper-case ASCII letters.
func upperWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return true
}

// splitASCII is v1.SplitParts for an ASCII word: the parts' byte offsets.
func splitASCII(w string, parts [][2]int) [][2]int {
	start := 0
	cut := func(end, next int) {
		if end > start {
			parts = appendDigitOffsets(parts, w, start, end)
		}
		start = next
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c == '_' {
			cut(i, i+1)
			continue
		}
		if i == start {
			continue
		}
		p := w[i-1]
		switch {
		case isUpper(c) && isLower(p):
			cut(i, i)
		case isUpper(c) && isUpper(p) && i+1 < len(w) && isLower(w[i+1]):
			cut(i, i)
		}
	}
	cut(len(w), len(w))
	return parts
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// appendDigitOffsets cuts the ASCII part w[start:end] where v1.SplitParts
// does: at its one change from letters to digits or back.
func appendDigitOffsets(parts [][2]int, w string, start, end int) [][2]int {
	at := -1
	for i := start + 1; i < end; i++ {
		if isDigit(w[i]) != isDigit(w[i-1]) {
			if at >= 0 {
				return append(parts, [2]int{start, end}) // more than one change: keep whole
			}
			at = i
		}
	}
	if at < 0 {
		return append(parts, [2]int{start, end})
	}
	return append(parts, [2]int{start, at}, [2]int{at, end})
}
