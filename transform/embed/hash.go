package embed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// HashModel is the model name of the hash provider's vectors. The version
// changes whenever the features do, so vectors of different feature sets
// never meet in one lake or one cache.
//
// pos-hash-v3 has pos-hash-v2's features made of the terms of version 2
// of the lexical tokenizer (names whole and by parts, Snowball stems in
// the text's language); v2's are version 1's.
const HashModel = "pos-hash-v3"

// HashModelV2 is pos-hash-v2: the features of HashModel, made of the
// terms of version 1 of the lexical tokenizer. Kept so that a lake
// embedded with it is still searched with query vectors of its own.
const HashModelV2 = "pos-hash-v2"

// HashModelV1 is the first feature set (words, adjacent word pairs and
// character 4-grams, one signed dimension a feature), kept so that a lake
// embedded with it can still be searched and extended: name it as the
// model (pos-embed --model pos-hash-v1).
const HashModelV1 = "pos-hash-v1"

// HashModels are the hash provider's models, the current one first.
var HashModels = []string{HashModel, HashModelV2, HashModelV1}

// IsHashModel reports whether model is one of the hash provider's.
func IsHashModel(model string) bool { return slices.Contains(HashModels, model) }

// DefaultDim is the hash provider's default dimension.
const DefaultDim = 384

// Hash embeds text locally and deterministically, with no model: each
// feature of the text (its words and the character 4-grams of its longer
// words) is weighted by its sublinear frequency (1 + ln tf) and added, with
// a hashed sign, to hashProbes hashed dimensions, and the vector is
// L2-normalised. Two texts are similar when they share words or word
// stems; the vector knows no synonyms.
//
// Why these features (pos-hash-v2; v1 is kept, see HashModelV1):
//   - No word pairs. A pair seldom recurs in a short query, but a chunk
//     has about as many pairs as words: a fifth of its norm and as many
//     colliding features, which diluted the words the query does share
//     (query/eval's queries, vector MRR averaged over six seeds of the
//     feature hash, measured once with a seeded copy of this code: 0.850
//     with pairs, 0.873 without).
//   - Each feature spread over hashProbes dimensions, each with 1/√probes
//     of its weight. A shared feature adds as much to the inner product as
//     before, a chance collision of two unrelated features only 1/probes
//     of it: the chance similarity keeps its spread (1/√dim) but loses its
//     long tail, which short texts made (TestHashChanceSimilarity: nonsense
//     queries against texts of 2-11 words, best score at most 0.59 with
//     v1, 0.25 with v2). So a minimum similarity (MinSimilarity) can tell
//     no match from a weak one.
type Hash struct {
	dim    int
	v1     bool
	probes int
	model  string
	tok    lexical.Tokenizer // the tokenizer whose terms are its word features
}

// hashProbes is how many dimensions a pos-hash-v2 feature is spread over.
const hashProbes = 8

// MinSimilarity is the least cosine similarity at which a vector of model
// (dim dimensions) counts as a match: below it, unrelated texts score as
// much by chance. For HashModel and HashModelV2 it is five times 1/√dim, the spread of the
// chance similarity of a query and an unrelated text whose vector fills
// every dimension (a chunk of more than a few words): 0.255 at 384-d. For
// a model pos-embed model train learned, the chance level it measured on
// the lake's texts and recorded in the model's pos_training.json. 0
// (every score counts) for the other models, whose chance level pos does
// not know.
func MinSimilarity(model string, dim int) float64 {
	if (model == HashModel || model == HashModelV2) && dim > 0 {
		return 5 / math.Sqrt(float64(dim))
	}
	return learnedMinSimilarity(model, dim)
}

// NewHash returns the hash provider of the current model (HashModel) with
// dim dimensions (DefaultDim if 0).
func NewHash(dim int) *Hash {
	if dim <= 0 {
		dim = DefaultDim
	}
	return &Hash{dim: dim, probes: hashProbes, model: HashModel, tok: lexical.Current}
}

// lexicalV1 is the tokenizer of pos-hash-v1 and pos-hash-v2.
var lexicalV1, _ = lexical.For(1)

// NewHashModel returns the hash provider of one of HashModels ("" is
// HashModel).
func NewHashModel(model string, dim int) (*Hash, error) {
	h := NewHash(dim)
	switch model {
	case "", HashModel:
	case HashModelV2:
		h.model, h.tok = HashModelV2, lexicalV1
	case HashModelV1:
		h.v1, h.probes, h.model, h.tok = true, 1, HashModelV1, lexicalV1
	default:
		return nil, fmt.Errorf("the hash provider's models are %s (got %q)", strings.Join(HashModels[:len(HashModels)-1], ", ")+" and "+HashModels[len(HashModels)-1], model)
	}
	return h, nil
}

// Feature weights: a word counts fully, an adjacent pair (v1 only) less, and a word's
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
func (h *Hash) Model() string { return h.model }

// Dim implements Provider.
func (h *Hash) Dim() int { return h.dim }

// MaxBatch implements Provider.
func (h *Hash) MaxBatch() int { return 256 }

// Embed implements Provider.
func (h *Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return embedEach(ctx, texts, h.Vector)
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
	h.tok.Scan(text, func(start, end int, terms []string) {
		if len(terms) == 0 {
			return // a stopword breaks no pair: "cache of queries" pairs cache and queries
		}
		for _, t := range terms {
			s.add('w', t, wordWeight)
		}
		if h.v1 && prev != "" {
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
	probeWeight := float32(1 / math.Sqrt(float64(h.probes)))
	for _, key := range s.keys {
		f := s.m[key]
		x := f.weight * (1 + float32(math.Log(float64(f.count))))
		if h.v1 {
			i := key % uint64(h.dim)
			if key>>63 == 1 {
				x = -x
			}
			v[i] += x
			continue
		}
		x *= probeWeight
		for p := range h.probes {
			// Each probe its own dimension and sign: the key, remixed.
			k := mix64(key + uint64(p)*0x9e3779b97f4a7c15)
			y := x
			if k>>63 == 1 {
				y = -y
			}
			v[k%uint64(h.dim)] += y
		}
	}
	normalize(v)
	return v
}

// mix64 is SplitMix64's finalizer: every bit of its output depends on
// every bit of its input.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
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
