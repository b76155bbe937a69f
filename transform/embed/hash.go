package embed

import (
	"context"
	"math"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// HashModel is the model name of the hash provider's vectors. The version
// changes whenever the features do, so vectors of different feature sets
// never meet in one lake or one cache.
const HashModel = "pos-hash-v1"

// DefaultDim is the hash provider's default dimension.
const DefaultDim = 384

// Hash embeds text locally and deterministically, with no model: each
// feature of the text (its words, pairs of adjacent words and character
// 4-grams of its longer words) is hashed to a signed dimension, weighted by
// its sublinear frequency (1 + ln tf), and the vector is L2-normalised. Two
// texts are similar when they share words, word pairs or word stems; the
// vector knows no synonyms.
type Hash struct {
	dim int
}

// NewHash returns the hash provider with dim dimensions (DefaultDim if 0).
func NewHash(dim int) *Hash {
	if dim <= 0 {
		dim = DefaultDim
	}
	return &Hash{dim: dim}
}

// Feature weights: a word counts fully, an adjacent pair less, and a word's
// character grams together about as much as half a word, so a typo or
// another inflection still meets.
const (
	wordWeight  = 1.0
	pairWeight  = 0.6
	gramsWeight = 0.5
	gramSize    = 4
	minGramWord = 5 // letters: shorter words are matched whole
)

// Name implements Provider.
func (h *Hash) Name() string { return "hash" }

// Model implements Provider.
func (h *Hash) Model() string { return HashModel }

// Dim implements Provider.
func (h *Hash) Dim() int { return h.dim }

// MaxBatch implements Provider.
func (h *Hash) MaxBatch() int { return 256 }

// Embed implements Provider.
func (h *Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.Vector(t)
	}
	return out, nil
}

type feature struct {
	count  float32
	weight float32
}

var featurePool = sync.Pool{New: func() any { return &featureSet{m: map[uint64]*feature{}} }}

type featureSet struct {
	m    map[uint64]*feature
	keys []uint64
	buf  []byte
	pool []feature
}

func (s *featureSet) add(kind byte, key string, w float32) {
	s.buf = append(append(s.buf[:0], kind, 0), key...)
	s.addHash(xxhash.Sum64(s.buf), w)
}

func (s *featureSet) addHash(h uint64, w float32) {
	if f, ok := s.m[h]; ok {
		f.count++
		return
	}
	if len(s.pool) == cap(s.pool) {
		s.pool = make([]feature, 0, 256)
	}
	s.pool = append(s.pool, feature{count: 1, weight: w})
	s.m[h] = &s.pool[len(s.pool)-1]
}

// Vector returns the hash vector of one text; all zeros when the text has
// no word.
func (h *Hash) Vector(text string) []float32 {
	s := featurePool.Get().(*featureSet)
	defer func() {
		clear(s.m)
		s.pool = s.pool[:0]
		featurePool.Put(s)
	}()
	var prev string
	var word []byte // "<word>", lowercased
	var starts []int
	lexical.Scan(text, func(start, end int, terms []string) {
		if len(terms) == 0 {
			return // a stopword breaks no pair: "cache of queries" pairs cache and queries
		}
		for _, t := range terms {
			s.add('w', t, wordWeight)
		}
		if prev != "" {
			s.buf = append(append(append(append(s.buf[:0], 'p', 0), prev...), ' '), terms[0]...)
			s.addHash(xxhash.Sum64(s.buf), pairWeight)
		}
		prev = terms[0]
		// Character 4-grams of "<word>", hashed straight from its bytes.
		word, starts = append(word[:0], 'g', 0, '<'), append(starts[:0], 2)
		for _, r := range text[start:end] {
			starts = append(starts, len(word))
			word = utf8.AppendRune(word, unicode.ToLower(r))
		}
		if len(starts)-1 < minGramWord {
			return
		}
		starts = append(starts, len(word))
		word = append(word, '>')
		starts = append(starts, len(word))
		n := len(starts) - gramSize // grams: runes of "<word>" less gramSize-1
		gw := float32(gramsWeight / math.Sqrt(float64(n)))
		for i := 0; i < n; i++ {
			s.buf = append(append(s.buf[:0], 'g', 0), word[starts[i]:starts[i+gramSize]]...)
			s.addHash(xxhash.Sum64(s.buf), gw)
		}
	})
	// Summed in key order: floating-point addition is not associative, and
	// the same text must give the same bits every time.
	s.keys = s.keys[:0]
	for key := range s.m {
		s.keys = append(s.keys, key)
	}
	slices.Sort(s.keys)
	v := make([]float32, h.dim)
	for _, key := range s.keys {
		f := s.m[key]
		x := f.weight * (1 + float32(math.Log(float64(f.count))))
		i := key % uint64(h.dim)
		if key>>63 == 1 {
			x = -x
		}
		v[i] += x
	}
	normalize(v)
	return v
}

// normalize scales v to unit length. A zero vector stays zero, and a unit
// vector as it is, bit for bit.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.Abs(sum-1) < 1e-6 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}
