package query

import (
	"strings"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// snippetWords is how many words a search snippet shows.
const snippetWords = 32

// Snippet returns the part of text with the most of the query's terms in
// at most n words, on one line, the matching words in **bold**, and "…"
// where text was cut. Without a match it is the text's first n words.
//
// A redaction marker ([REDACTED:rule:hash]) counts as one word: the snippet
// holds it whole or not at all, and bolds it whole.
func Snippet(text string, terms []string, n int) string {
	ws := markerWords(text, lexical.Words(text))
	if len(ws) == 0 {
		return ""
	}
	want := map[string]bool{}
	var prefixes []string // "pars*": any term that starts with "pars"
	for _, t := range terms {
		if p, ok := strings.CutSuffix(t, "*"); ok && p != "" {
			prefixes = append(prefixes, p)
		} else {
			want[t] = true
		}
	}
	match := make([]string, len(ws)) // the query term a word matches
	for i, w := range ws {
		for _, t := range w.Terms {
			if want[t] {
				match[i] = t
				break
			}
			for _, p := range prefixes {
				if strings.HasPrefix(t, p) {
					match[i] = p + "*"
				}
			}
			if match[i] != "" {
				break
			}
		}
	}
	// The window of n words with the most distinct terms, then the most
	// matches; the earliest of equals.
	start, bestDistinct, bestHits := 0, -1, -1
	counts := map[string]int{}
	distinct, hits := 0, 0
	for i := range ws {
		if t := match[i]; t != "" {
			if counts[t] == 0 {
				distinct++
			}
			counts[t]++
			hits++
		}
		if i >= n {
			if t := match[i-n]; t != "" {
				counts[t]--
				if counts[t] == 0 {
					distinct--
				}
				hits--
			}
		}
		if i >= min(n, len(ws))-1 {
			s := max(0, i-n+1)
			if distinct > bestDistinct || distinct == bestDistinct && hits > bestHits {
				start, bestDistinct, bestHits = s, distinct, hits
			}
		}
	}
	if bestHits > 0 {
		// Lead in with a few words of context before the first match.
		for k := start; k < len(ws) && k < start+n; k++ {
			if match[k] != "" {
				start = max(start, k-4)
				break
			}
		}
	}
	end := min(len(ws), start+n)
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := ws[start].Start
	for k := start; k < end; k++ {
		w := ws[k]
		// The text's own **bold** would read as a highlight.
		b.WriteString(strings.ReplaceAll(text[pos:w.Start], "**", ""))
		if match[k] != "" {
			b.WriteString("**" + text[w.Start:w.End] + "**")
		} else {
			b.WriteString(text[w.Start:w.End])
		}
		pos = w.End
	}
	// Punctuation that closes the last word ("word." "call()").
	if end < len(ws) {
		tail := text[pos:ws[end].Start]
		if i := strings.IndexAny(tail, " \t\n"); i >= 0 {
			tail = tail[:i]
		}
		b.WriteString(strings.ReplaceAll(tail, "**", ""))
		b.WriteString("…")
	} else {
		b.WriteString(strings.TrimRight(text[pos:], " \t\n"))
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// markerWords makes the words of each redaction marker in text one word
// with all their terms, so that a snippet cannot start or end inside a
// marker, nor bold part of one.
func markerWords(text string, ws []lexical.Word) []lexical.Word {
	ms := excerpt.Markers(text)
	if len(ms) == 0 {
		return ws
	}
	out := ws[:0]
	k := 0
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		for k < len(ms) && ms[k][1] <= w.Start {
			k++
		}
		if k == len(ms) || w.End <= ms[k][0] {
			out = append(out, w)
			continue
		}
		m := lexical.Word{Start: ms[k][0], End: ms[k][1]}
		for ; i < len(ws) && ws[i].Start < ms[k][1]; i++ {
			m.Terms = append(m.Terms, ws[i].Terms...)
		}
		i--
		out = append(out, m)
	}
	return out
}
