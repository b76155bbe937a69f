package embed

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/excerpt"
)

// Chunker splits long texts into token-bounded chunks that overlap, so a
// passage cut at a boundary is still whole in one of the two chunks.
//
// Tokens are estimated, not counted with a model's tokenizer: a word of n
// letters is about n/4 tokens (at least one), a CJK character one. The
// estimate errs on the high side for English prose, so a chunk stays under
// the limit of the models it is sized for.
//
// A text is indexed by at most MaxChunks chunks, each distinct: a chunk
// whose text repeats an earlier chunk's (white space aside) is left out, and
// of a text that has more, the head (the first quarter of the chunks), the
// tail (the last quarter) and parts sampled at even steps in between are
// kept. A huge text is not split whole: the head, the tail and windows at
// even steps through the middle are, so memory and time stay bounded by
// MaxChunks, not by the text (a 50 MB tool dump is 128 chunks, not 65,000).
//
// A chunk never splits a redaction marker ([REDACTED:rule:hash]): a long
// run of non-space characters is cut beside a marker, not inside it.
type Chunker struct {
	// MaxTokens bounds a chunk (default 400).
	MaxTokens int
	// Overlap is how many tokens a chunk repeats from the end of the one
	// before it (default 50; less than MaxTokens/2).
	Overlap int
	// MaxChunks bounds the chunks of one text (default 128).
	MaxChunks int
}

// Span is a chunk: text[Start:End] of the text split.
type Span struct {
	Start, End int
	Tokens     int // estimated
}

// DefaultChunker is the chunking pos-embed uses unless told otherwise.
var DefaultChunker = Chunker{MaxTokens: 400, Overlap: 50, MaxChunks: 128}

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

func (c Chunker) maxChunks() int {
	if c.MaxChunks <= 0 {
		return DefaultChunker.MaxChunks
	}
	return c.MaxChunks
}

// Split returns the chunks of text, in order: at most MaxChunks, each
// distinct (see Chunker). A text within MaxTokens is one chunk; a text
// without a word is none. Chunks end at the best boundary in their second
// half: a blank line, else a line end, else a sentence end, else a word.
func (c Chunker) Split(text string) []Span {
	max, _ := c.limits()
	n := c.maxChunks()
	// About the bytes of a chunk: a token is four letters or more, and
	// space between words is not counted.
	chunkBytes := max * 6
	var spans []Span
	if len(text) <= 4*n*chunkBytes {
		spans = c.split(text, 0)
	} else {
		spans = c.sample(text, n, chunkBytes)
	}
	return pick(text, spans, n)
}

// sample splits parts of a text too long to split whole: the head and the
// tail, each room for a quarter of the chunks and some, and 2n windows of
// about two chunks at even steps between them, of which the first chunk is
// kept.
func (c Chunker) sample(text string, n, chunkBytes int) []Span {
	part := (n/4 + 2) * chunkBytes
	headEnd := cutAt(text, part)
	tailStart := cutAt(text, len(text)-part)
	spans := c.split(text[:headEnd], 0)
	windows := 2 * n
	step := (tailStart - headEnd) / (windows + 1)
	for k := 1; k <= windows && step > 0; k++ {
		at := cutAt(text, headEnd+k*step)
		end := cutAt(text, min(at+2*chunkBytes, tailStart))
		if end <= at {
			continue
		}
		if w := c.split(text[at:end], at); len(w) > 0 {
			spans = append(spans, w[0])
		}
	}
	return append(spans, c.split(text[tailStart:], tailStart)...)
}

// cutAt is the place at or after i where a part of text may start or end:
// after the next line end or space within a few hundred bytes (so the part
// starts at a word), never inside a redaction marker.
func cutAt(text string, i int) int {
	i = excerpt.Forward(text, min(max(i, 0), len(text)))
	near := text[i:min(len(text), i+512)]
	if j := strings.IndexByte(near, '\n'); j >= 0 {
		return excerpt.Forward(text, i+j+1)
	}
	if j := strings.IndexAny(near, " \t"); j >= 0 {
		return excerpt.Forward(text, i+j+1)
	}
	return i
}

// pick keeps the distinct spans (their texts compared with white space
// folded) and, of more than n, the first and last quarter and, for the
// rest, the spans nearest to even steps through the text between them.
func pick(text string, spans []Span, n int) []Span {
	seen := make(map[uint64]bool, len(spans))
	out := spans[:0]
	for _, sp := range spans {
		h := foldedHash(text[sp.Start:sp.End])
		if seen[h] {
			continue
		}
		seen[h] = true
		out = append(out, sp)
	}
	if len(out) <= n {
		return out
	}
	head, tail := n/4, n/4
	mid := out[head : len(out)-tail]
	want := n - head - tail
	picked := make([]Span, 0, n)
	picked = append(picked, out[:head]...)
	lo, hi := int64(mid[0].Start), int64(mid[len(mid)-1].Start)
	j := 0
	for k := range want {
		at := int(lo + (hi-lo)*int64(2*k+1)/int64(2*want))
		// Leave a span for each pick still to come.
		for j < len(mid)-(want-k) && mid[j].Start < at {
			j++
		}
		picked = append(picked, mid[j])
		j++
	}
	return append(picked, out[len(out)-tail:]...)
}

// foldedHash hashes a text's words, so texts that differ only in white
// space hash alike.
func foldedHash(s string) uint64 {
	d := xxhash.New()
	for _, w := range strings.Fields(s) {
		d.WriteString(w)
		d.Write([]byte{0})
	}
	return d.Sum64()
}

// split chunks text whole; spans are offset by base.
func (c Chunker) split(text string, base int) []Span {
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
		out = append(out, Span{Start: base + ps[i].start, End: base + ps[end-1].end, Tokens: cum[end] - cum[i]})
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
				// A long run is cut, but beside a redaction marker,
				// never inside one.
				if j := excerpt.Forward(text, i); j > i {
					letters += j - i
					i = j
				}
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
