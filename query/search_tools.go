package query

import (
	"strings"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// matchingLines is how many lines of a tool's output a search hit shows.
const matchingLines = 5

// matchingLineBytes bounds a line shown.
const matchingLineBytes = 240

// MatchingLines returns the lines of text that hold one of the query's
// terms, at most n, in order; a line longer than matchingLineBytes is cut
// around its first match ("…" where it was cut), never inside a redaction
// marker. A tool's output is read by its lines (the error, the failing
// test), which a snippet of words run together hides.
func MatchingLines(text string, terms []string, n int) []string {
	if len(terms) == 0 || n <= 0 {
		return nil
	}
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[t] = true
	}
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		at := -1
		for _, w := range lexical.Words(line) {
			for _, t := range w.Terms {
				if want[t] {
					at = w.Start
					break
				}
			}
			if at >= 0 {
				break
			}
		}
		if at < 0 {
			continue
		}
		out = append(out, cutLine(line, at))
		if len(out) == n {
			break
		}
	}
	return out
}

// cutLine cuts a long line to about matchingLineBytes around byte at.
func cutLine(line string, at int) string {
	if len(line) <= matchingLineBytes {
		return line
	}
	start := excerpt.Back(line, max(0, at-matchingLineBytes/4))
	end := excerpt.Forward(line, min(len(line), start+matchingLineBytes))
	s := line[start:end]
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
