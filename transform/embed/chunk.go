package embed

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunker splits long texts into token-bounded chunks that overlap, so a
// passage cut at a boundary is still whole in one of the two chunks.
//
// Tokens are estimated, not counted with a model's tokenizer: a word of n
// letters is about n/4 tokens (at least one), a CJK character one. The
// estimate errs on the high side for English prose, so a chunk stays under
// the limit of the models it is sized for.
type Chunker struct {
	// MaxTokens bounds a chunk (default 400).
	MaxTokens int
	// Overlap is how many tokens a chunk repeats from the end of the one
	// before it (default 50; less than MaxTokens/2).
	Overlap int
}

// Span is a chunk: text[Start:End] of the text split.
type Span struct {
	Start, End int
	Tokens     int // estimated
}

// DefaultChunker is the chunking pos-embed uses unless told otherwise.
var DefaultChunker = Chunker{MaxTokens: 400, Overlap: 50}

func (c Chunker) limits() (max, overlap int) {
	max, overlap = c.MaxTokens, c.Overlap
	if max <= 0 {
		max = DefaultChunker.MaxTokens
	}
	if max < 8 {
		max = 8
	}
	if overlap < 0 {
		overlap = 0
	}
	if overlap > max/2 {
		overlap = max / 2
	}
	return max, overlap
}

// piece is a word (a run of non-space characters, long runs cut) with its
// estimated tokens.
type piece struct {
	start, end int
	tokens     int
}

// EstimateTokens estimates how many tokens a model needs for text.
func EstimateTokens(text string) int {
	n := 0
	for _, p := range pieces(text, 1<<30) {
		n += p.tokens
	}
	return n
}

// Split returns the chunks of text, in order. A text within MaxTokens is
// one chunk; a text without a word is none. Chunks end at the best boundary
// in their second half: a blank line, else a line end, else a sentence end,
// else a word.
func (c Chunker) Split(text string) []Span {
	max, overlap := c.limits()
	ps := pieces(text, max/2)
	if len(ps) == 0 {
		return nil
	}
	// cum[i] is the tokens before piece i.
	cum := make([]int, len(ps)+1)
	for i, p := range ps {
		cum[i+1] = cum[i] + p.tokens
	}
	var out []Span
	for i := 0; i < len(ps); {
		j := i + 1 // the end of the longest window from i within max
		for j < len(ps) && cum[j+1]-cum[i] <= max {
			j++
		}
		end := j
		if j < len(ps) {
			end = c.boundary(text, ps, i, j, cum, max)
		}
		out = append(out, Span{Start: ps[i].start, End: ps[end-1].end, Tokens: cum[end] - cum[i]})
		if end >= len(ps) {
			break
		}
		next := end
		for next > i+1 && cum[end]-cum[next-1] <= overlap {
			next--
		}
		i = next
	}
	return out
}

// boundary picks where the window ps[i:j] ends: the strongest break between
// pieces in its second half, the latest of equal strength.
func (c Chunker) boundary(text string, ps []piece, i, j int, cum []int, max int) int {
	best, bestScore := j, -1
	for e := j; e > i+1 && cum[e]-cum[i] >= max/2; e-- {
		s := breakScore(text, ps[e-1], ps[e])
		if s > bestScore {
			best, bestScore = e, s
			if s == 3 {
				break
			}
		}
	}
	return best
}

// breakScore rates the gap between two pieces as a place to cut: 3 a blank
// line, 2 a line end, 1 after a sentence, 0 between words.
func breakScore(text string, a, b piece) int {
	gap := text[a.end:b.start]
	switch n := strings.Count(gap, "\n"); {
	case n >= 2:
		return 3
	case n == 1:
		return 2
	}
	last, _ := utf8.DecodeLastRuneInString(text[a.start:a.end])
	switch last {
	case '.', '!', '?', ':', ';', '。', '！', '？':
		return 1
	}
	return 0
}

// pieces cuts text into runs of non-space characters, and runs longer than
// maxTokens into pieces of about maxTokens.
func pieces(text string, maxTokens int) []piece {
	var out []piece
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		start, tokens, letters := i, 0, 0
		for i < len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) {
				break
			}
			if r >= 0x2E80 && isCJKRune(r) {
				tokens++
			} else {
				letters++
			}
			i += size
			if tokens+(letters+3)/4 >= maxTokens {
				break
			}
		}
		tokens += (letters + 3) / 4
		out = append(out, piece{start: start, end: i, tokens: max(tokens, 1)})
	}
	return out
}

func isCJKRune(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
