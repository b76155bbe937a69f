package embed

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nlpodyssey/safetensors"
	"github.com/pos-lake/pos/transform/embed/lexical"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// A learned model is a model2vec model that pos builds from the texts of
// a lake, so that the static provider embeds with word vectors that know
// which words a user's sessions use together ("suite" near "tests",
// "parallel" near "workers"), with no download.
//
// How it is built (Trainer):
//   - Each text is read with the lexical tokenizer (version
//     lexical.Version): the same terms the lexical index and pos-hash-v3
//     use, stems and names whole and by parts.
//   - Terms that occur at least MinCount times (the MaxTerms most
//     frequent) are counted together within Window words of each other,
//     nearer words counting more; the counts become positive pointwise
//     mutual information (PPMI, contexts smoothed by the power 0.75), and a
//     truncated SVD of that matrix (randomized, with a fixed seed) gives
//     each term Dim dimensions: terms used in the same company get near
//     vectors. The term vectors' mean (each term weighing as often as it
//     occurs) is removed, so that the direction every text shares does
//     not make any two texts alike.
//   - The model's vocabulary is the words of the texts as its own
//     tokenizer (tokenizer.json: BERT normalizer and pre-tokenizer, a
//     WordPiece model) splits them. A word's row is two parts: the mean of
//     its terms' learned vectors, and its pos-hash-v3 features (terms and
//     character 4-grams, HashDim dimensions), so that a text still meets
//     the texts that share its exact words and names. SemanticShare is the
//     learned part's share of a row's squared length. The row is then
//     scaled by the word's smooth inverse frequency, a/(a+p) (SIF, p the
//     word's share of the texts' words), as model2vec bakes its weights
//     into its rows: words every text has weigh little in a text's
//     vector.
//   - Its chance level, the similarity unrelated texts reach (see
//     chanceSpreads), is measured on a sample of the texts and recorded in
//     pos_training.json, where MinSimilarity finds it: search scales the
//     vector side from it in hybrid search, as it does pos-hash-v3's.
//   - A word the texts did not have is split by WordPiece into known words
//     and "##" continuations (every known word is also a continuation), and
//     failing those into characters: "parseconfigs" gets the rows of
//     "parse", "##config" and "##s" rather than nothing.
//   - Stopwords have no terms, so their row is zero: they do not move a
//     text's vector.
//
// The model's name ends in a hash of its training texts and parameters
// (NAME-0123abcd): training again on other texts makes another model,
// which pos-load refuses to mix with the lake's vectors of the old one,
// so the chunk vectors are always those of the model that embeds queries.

// TrainOptions are a learned model's parameters; zero values take the
// defaults (DefaultTrainOptions).
type TrainOptions struct {
	Dim           int     // learned dimensions (SVD rank)
	HashDim       int     // dimensions of the hashed word features (negative: none)
	SemanticShare float64 // the learned part's share of a row's squared length, in (0, 1]
	Window        int     // words on each side counted as context
	MinCount      int     // occurrences a term or word needs to be kept
	MaxTerms      int     // the most terms learned
	MaxWords      int     // the most words in the model's vocabulary
	Power         float64 // singular values are raised to it in the term vectors
	Seed          uint64  // of the randomized SVD
	// SIF is the smooth inverse frequency parameter a: a word's row is
	// scaled by a/(a+p), p its share of the texts' words, so that words
	// every text has weigh little in a text's vector (negative: no
	// weighting).
	SIF float64
	// NoCenter keeps the learned term vectors as the SVD gives them;
	// otherwise their mean (weighted by the terms' counts) is removed,
	// and then RemovePCs leading principal components (negative: none),
	// so that the direction all texts share does not make every two texts
	// alike.
	NoCenter  bool
	RemovePCs int
}

// DefaultTrainOptions are the parameters pos-embed model train uses.
var DefaultTrainOptions = TrainOptions{
	Dim: 128, HashDim: 256, SemanticShare: 0.5, Window: 5, MinCount: 3,
	MaxTerms: 40000, MaxWords: 60000, Power: 0.5, Seed: 1, SIF: 1e-3, RemovePCs: -1,
}

func (o TrainOptions) withDefaults() TrainOptions {
	d := DefaultTrainOptions
	o.Dim = cmp.Or(o.Dim, d.Dim)
	o.HashDim = cmp.Or(o.HashDim, d.HashDim)
	if o.HashDim < 0 {
		o.HashDim = 0
	}
	o.SemanticShare = cmp.Or(o.SemanticShare, d.SemanticShare)
	o.Window = cmp.Or(o.Window, d.Window)
	o.MinCount = cmp.Or(o.MinCount, d.MinCount)
	o.MaxTerms = cmp.Or(o.MaxTerms, d.MaxTerms)
	o.MaxWords = cmp.Or(o.MaxWords, d.MaxWords)
	o.Power = cmp.Or(o.Power, d.Power)
	o.Seed = cmp.Or(o.Seed, d.Seed)
	o.SIF = cmp.Or(o.SIF, d.SIF)
	if o.SIF < 0 {
		o.SIF = -1
	}
	o.RemovePCs = cmp.Or(o.RemovePCs, d.RemovePCs)
	if o.RemovePCs < 0 {
		o.RemovePCs = -1
	}
	return o
}

func (o TrainOptions) check() error {
	switch {
	case o.Dim < 2 || o.Dim > 1024:
		return fmt.Errorf("dimensions %d: use 2 to 1024", o.Dim)
	case o.HashDim > 4096:
		return fmt.Errorf("hashed dimensions %d: use 0 to 4096", o.HashDim)
	case !(o.SemanticShare > 0 && o.SemanticShare <= 1):
		return fmt.Errorf("semantic share %v: use a value in (0, 1]", o.SemanticShare)
	case o.SemanticShare < 1 && o.HashDim == 0:
		return errors.New("a semantic share below 1 needs hashed dimensions")
	case o.Window < 1 || o.Window > 50:
		return fmt.Errorf("window %d: use 1 to 50", o.Window)
	case o.MinCount < 1:
		return fmt.Errorf("minimum count %d: use at least 1", o.MinCount)
	case o.MaxTerms < o.Dim || o.MaxWords < 1:
		return fmt.Errorf("the most terms (%d) must be at least the dimensions (%d), and the most words at least 1", o.MaxTerms, o.Dim)
	case o.Power < 0 || o.Power > 1:
		return fmt.Errorf("power %v: use 0 to 1", o.Power)
	case o.SIF > 1:
		return fmt.Errorf("SIF parameter %v: use a value in (0, 1], or a negative one for no weighting", o.SIF)
	case o.RemovePCs >= o.Dim:
		return fmt.Errorf("principal components removed %d: fewer than the dimensions (%d)", o.RemovePCs, o.Dim)
	}
	return nil
}

// learnedFormat is the version of how a learned model is built; it is
// part of the hash in the model's name, so that a model built another way
// from the same texts is another model.
const learnedFormat = 2

// ErrNoTrainingText is wrapped by the error Train returns when the texts
// give too few terms to learn from.
var ErrNoTrainingText = errors.New("not enough text to learn word vectors from")

// Trainer gathers the texts a learned model is built from.
type Trainer struct {
	opt     TrainOptions
	terms   map[string]int32 // term -> id, in order of first sight
	names   []string         // by id
	counts  []int64          // by id
	seqs    []int32          // per word: its term ids, then -1; a text ends with -2
	words   map[string]int64 // the model tokenizer's words, and how often
	pre     *tokenizer       // the model's normalizer and pre-tokenizer
	sum     hash.Hash        // of the texts, in order
	texts   int
	numbers []byte
	sample  []string   // a uniform sample of the texts (reservoir), for the chance level
	rng     *rand.Rand // of the sample, seeded: the same texts give the same sample
}

// chanceSample is how many texts the chance level is measured on: their
// pairs (about 130,000) are mostly of unrelated texts.
const chanceSample = 512

// A learned model's chance level (MinSimilarity) is the median similarity
// of two of its lake's texts plus chanceSpreads times the spread of the
// similarities (their median absolute deviation, scaled by madScale to a
// standard deviation's size), as pos-hash-v3's is a multiple of its
// chance similarity's spread. The median and the deviation are robust to
// the pairs of texts that are related (of one session, of one subject),
// which fill the upper tail: a high quantile would be a related pair's
// similarity, not chance's (the 99th percentile is 0.57 on the eval
// corpus). Three spreads, not pos-hash-v3's five: on the eval's
// odd-numbered queries, hybrid search scored the same with three (0.834
// recall@10, 0.738 MRR) as with five (0.834, 0.735), and vector search
// kept more of what the learned vectors find (0.740 recall against 0.673).
const (
	chanceSpreads = 3
	madScale      = 1.4826
)

// NewTrainer returns a Trainer with opt's parameters.
func NewTrainer(opt TrainOptions) (*Trainer, error) {
	opt = opt.withDefaults()
	if err := opt.check(); err != nil {
		return nil, err
	}
	pre, err := parseTokenizer(learnedTokenizerJSON(map[string]int{"[UNK]": 0}))
	if err != nil {
		return nil, err
	}
	return &Trainer{opt: opt, terms: map[string]int32{}, words: map[string]int64{}, pre: pre, sum: sha256.New(),
		rng: rand.New(rand.NewPCG(opt.Seed, 0x5851f42d4c957f2d))}, nil
}

// Texts is how many texts were added.
func (t *Trainer) Texts() int { return t.texts }

// Add reads one text.
func (t *Trainer) Add(text string) {
	t.texts++
	if len(t.sample) < chanceSample {
		t.sample = append(t.sample, text)
	} else if i := t.rng.IntN(t.texts); i < chanceSample {
		t.sample[i] = text
	}
	t.numbers = binary.LittleEndian.AppendUint64(t.numbers[:0], uint64(len(text)))
	t.sum.Write(t.numbers)
	t.sum.Write([]byte(text))
	lexical.Scan(text, func(start, end int, terms []string) {
		if len(terms) == 0 {
			return
		}
		for _, term := range terms {
			id, ok := t.terms[term]
			if !ok {
				id = int32(len(t.names))
				t.terms[term] = id
				t.names = append(t.names, term)
				t.counts = append(t.counts, 0)
			}
			t.counts[id]++
			t.seqs = append(t.seqs, id)
		}
		t.seqs = append(t.seqs, -1)
	})
	t.seqs = append(t.seqs, -2)
	for _, w := range t.pre.words(text) {
		if len(w) <= lexical.MaxWord {
			t.words[w]++
		}
	}
}

// words splits a text as the tokenizer does before its model: the words
// the vocabulary is looked up by.
func (t *tokenizer) words(text string) []string {
	var out []string
	for _, part := range t.splitAdded(text, false) {
		if part.id >= 0 {
			continue
		}
		s := part.text
		for _, n := range t.normalizers {
			s = n(s)
		}
		ws := []string{s}
		for _, pre := range t.pre {
			ws = pre(ws)
		}
		for _, w := range ws {
			if w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// LearnedModel describes a model Train wrote.
type LearnedModel struct {
	Name  string // ORG/NAME-HASH, as pos-embed --model takes it
	Dir   string
	Texts int
	Terms int // terms learned
	Words int // words in the vocabulary (and as many continuations)
	Dim   int
	Hash  string // of the texts and parameters
}

// trainInfo is what a learned model's pos_training.json records.
type trainInfo struct {
	Format  int          `json:"format"`
	Lexical int          `json:"lexical_version"`
	Texts   int          `json:"texts"`
	Hash    string       `json:"training_hash"`
	Terms   int          `json:"terms"`
	Words   int          `json:"words"`
	Options TrainOptions `json:"options"`
	// Dim is the vectors' dimension, MinSimilarity the model's chance
	// level (see chanceSpreads), which search uses as a vector
	// similarity's zero (MinSimilarity).
	Dim           int     `json:"dim"`
	MinSimilarity float64 `json:"min_similarity"`
}

// Write learns the model from the texts added and writes it to
// modelsDir/name-HASH (name is ORG/NAME), replacing a model of the same
// name: the same texts and parameters give the same files, byte for byte.
func (t *Trainer) Write(modelsDir, name string) (*LearnedModel, error) {
	if err := ValidModelName(name); err != nil {
		return nil, err
	}
	if modelsDir == "" {
		return nil, errors.New("no models directory")
	}
	o := t.opt
	params, _ := json.Marshal(o)
	fmt.Fprintf(t.sum, "\x00format %d lexical %d %s", learnedFormat, lexical.Version, params)
	sum := hex.EncodeToString(t.sum.Sum(nil))
	full := name + "-" + sum[:8]

	vocab := t.vocabulary()
	if len(vocab) < o.Dim+1 {
		return nil, fmt.Errorf("%w: %d texts give %d terms seen %d times or more; %d are needed (more sessions, or a lower minimum count)",
			ErrNoTrainingText, t.texts, len(vocab), o.MinCount, o.Dim+1)
	}
	vecs, err := t.termVectors(vocab)
	if err != nil {
		return nil, err
	}
	termVec := make(map[string][]float64, len(vocab))
	for i, id := range vocab {
		termVec[t.names[id]] = vecs[i*o.Dim : (i+1)*o.Dim]
	}
	words := t.vocabWords()
	tokens, mapping, rows := t.rows(words, termVec)

	dir := filepath.Join(modelsDir, filepath.FromSlash(full))
	info := trainInfo{Format: learnedFormat, Lexical: lexical.Version, Texts: t.texts, Hash: sum, Terms: len(vocab), Words: len(words), Options: o,
		Dim: o.Dim + o.HashDim}
	if err := writeLearned(dir, tokens, mapping, rows, info, t.sample); err != nil {
		return nil, err
	}
	return &LearnedModel{Name: full, Dir: dir, Texts: t.texts, Terms: len(vocab), Words: len(words), Dim: o.Dim + o.HashDim, Hash: sum}, nil
}

// vocabulary returns the ids of the terms learned: those seen MinCount
// times or more, the MaxTerms most frequent, by count then term.
func (t *Trainer) vocabulary() []int32 {
	var ids []int32
	for id, c := range t.counts {
		if c >= int64(t.opt.MinCount) {
			ids = append(ids, int32(id))
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return cmp.Or(cmp.Compare(t.counts[b], t.counts[a]), strings.Compare(t.names[a], t.names[b]))
	})
	return ids[:min(len(ids), t.opt.MaxTerms)]
}

// vocabWords returns the model's words: those seen MinCount times or
// more (the MaxWords most frequent, by count then word), and every
// character of them, which WordPiece falls back to.
func (t *Trainer) vocabWords() []string {
	var ws []string
	for w, c := range t.words {
		if c >= int64(t.opt.MinCount) {
			ws = append(ws, w)
		}
	}
	slices.SortFunc(ws, func(a, b string) int {
		return cmp.Or(cmp.Compare(t.words[b], t.words[a]), strings.Compare(a, b))
	})
	ws = ws[:min(len(ws), t.opt.MaxWords)]
	seen := make(map[string]bool, len(ws))
	for _, w := range ws {
		seen[w] = true
	}
	var chars []string
	for _, w := range ws {
		for _, r := range w {
			if c := string(r); !seen[c] {
				seen[c] = true
				chars = append(chars, c)
			}
		}
	}
	slices.Sort(chars)
	return append(ws, chars...)
}

// termVectors counts the vocabulary's co-occurrences, weighs them by PPMI
// and returns the terms' vectors (row-major, Dim a term), each of unit
// length.
func (t *Trainer) termVectors(vocab []int32) ([]float64, error) {
	o := t.opt
	n := len(vocab)
	index := make([]int32, len(t.names))
	for i := range index {
		index[i] = -1
	}
	for i, id := range vocab {
		index[id] = int32(i)
	}
	// Co-occurrence counts, by the integer weight Window+1-distance (the
	// terms of one word count Window+1 together), so that the sums do
	// not depend on the order they are made in.
	co := make([]map[int32]int64, n)
	for i := range co {
		co[i] = map[int32]int64{}
	}
	var window [][]int32 // the last Window words' vocabulary terms
	var cur []int32
	add := func(a, b int32, w int64) {
		co[a][b] += w
		co[b][a] += w
	}
	for _, x := range t.seqs {
		switch {
		case x >= 0:
			if j := index[x]; j >= 0 {
				cur = append(cur, j)
			}
		case x == -1:
			if len(cur) == 0 {
				continue
			}
			for a := range cur {
				for b := a + 1; b < len(cur); b++ {
					add(cur[a], cur[b], int64(o.Window+1))
				}
			}
			for d, prev := range window {
				w := int64(o.Window + 1 - (len(window) - d))
				for _, a := range prev {
					for _, b := range cur {
						add(a, b, w)
					}
				}
			}
			if len(window) == o.Window {
				window = append(window[:0], window[1:]...)
			}
			window = append(window, cur)
			cur = nil
		case x == -2:
			window, cur = window[:0], nil
		}
	}
	// PPMI: log(P(a,b) / (P(a) P₀.₇₅(b))), kept where positive.
	rowSum := make([]float64, n)
	ctx := make([]float64, n)
	var total, ctxTotal float64
	for a, m := range co {
		for _, c := range m {
			rowSum[a] += float64(c)
		}
		total += rowSum[a]
	}
	for a := range ctx {
		ctx[a] = math.Pow(rowSum[a], 0.75)
		ctxTotal += ctx[a]
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: no two terms occur together", ErrNoTrainingText)
	}
	m := &csr{n: n, start: make([]int, n+1)}
	for a := range co {
		cols := make([]int32, 0, len(co[a]))
		for b := range co[a] {
			cols = append(cols, b)
		}
		slices.Sort(cols)
		for _, b := range cols {
			pmi := math.Log(float64(co[a][b]) * ctxTotal / (rowSum[a] * ctx[b]))
			if pmi > 0 {
				m.col = append(m.col, b)
				m.val = append(m.val, pmi)
			}
		}
		m.start[a+1] = len(m.col)
		co[a] = nil
	}
	u, s := randomizedSVD(m, o.Dim, rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)))
	out := make([]float64, n*o.Dim)
	for i := range n {
		v := out[i*o.Dim : (i+1)*o.Dim]
		for j := range o.Dim {
			v[j] = u.At(i, j) * math.Pow(s[j], o.Power)
		}
		unitRow(v)
	}
	if !o.NoCenter {
		weights := make([]float64, n)
		for i, id := range vocab {
			weights[i] = float64(t.counts[id])
		}
		center(out, o.Dim, weights, max(o.RemovePCs, 0))
	}
	return out, nil
}

// unitRow scales v to length 1 (a zero vector stays zero).
func unitRow(v []float64) {
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	if norm > 0 {
		inv := 1 / math.Sqrt(norm)
		for j := range v {
			v[j] *= inv
		}
	}
}

// center removes from the rows of vecs (row-major, dim a row) their mean,
// each row weighing as much as weights says (a term as often as it
// occurs), then the pcs leading principal components of the rows so
// weighed, and scales each row back to length 1. What every text shares
// — the mean, and the few directions common words all lean to — otherwise
// makes any two texts' vectors alike, and buries what tells them apart.
func center(vecs []float64, dim int, weights []float64, pcs int) {
	n := len(weights)
	mean := make([]float64, dim)
	var total float64
	for i, w := range weights {
		for j, x := range vecs[i*dim : (i+1)*dim] {
			mean[j] += w * x
		}
		total += w
	}
	if total == 0 {
		return
	}
	for j := range mean {
		mean[j] /= total
	}
	for i := range n {
		v := vecs[i*dim : (i+1)*dim]
		for j := range v {
			v[j] -= mean[j]
		}
	}
	if pcs > 0 {
		a := mat.NewDense(n, dim, nil)
		for i, w := range weights {
			sw := math.Sqrt(w / total)
			row := a.RawRowView(i)
			for j, x := range vecs[i*dim : (i+1)*dim] {
				row[j] = sw * x
			}
		}
		var svd mat.SVD
		if svd.Factorize(a, mat.SVDThinV) {
			var v mat.Dense
			svd.VTo(&v)
			for i := range n {
				row := vecs[i*dim : (i+1)*dim]
				for c := range pcs {
					var dot float64
					for j := range row {
						dot += row[j] * v.At(j, c)
					}
					for j := range row {
						row[j] -= dot * v.At(j, c)
					}
				}
			}
		}
	}
	for i := range n {
		unitRow(vecs[i*dim : (i+1)*dim])
	}
}

// csr is a square sparse matrix in compressed rows.
type csr struct {
	n     int
	start []int
	col   []int32
	val   []float64
}

// mul returns M·X.
func (m *csr) mul(x *mat.Dense) *mat.Dense {
	_, k := x.Dims()
	y := mat.NewDense(m.n, k, nil)
	for i := range m.n {
		row := y.RawRowView(i)
		for p := m.start[i]; p < m.start[i+1]; p++ {
			v, xr := m.val[p], x.RawRowView(int(m.col[p]))
			for j := range row {
				row[j] += v * xr[j]
			}
		}
	}
	return y
}

// mulT returns Mᵀ·X.
func (m *csr) mulT(x *mat.Dense) *mat.Dense {
	_, k := x.Dims()
	y := mat.NewDense(m.n, k, nil)
	for i := range m.n {
		xr := x.RawRowView(i)
		for p := m.start[i]; p < m.start[i+1]; p++ {
			v, row := m.val[p], y.RawRowView(int(m.col[p]))
			for j := range row {
				row[j] += v * xr[j]
			}
		}
	}
	return y
}

// randomizedSVD returns the k leading left singular vectors of m (as
// columns) and their singular values, by Halko, Martinsson and Tropp's
// randomized range finder with power iterations.
func randomizedSVD(m *csr, k int, rng *rand.Rand) (*mat.Dense, []float64) {
	l := min(k+10, m.n)
	omega := mat.NewDense(m.n, l, nil)
	for i := range m.n {
		row := omega.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	q := orthonormal(m.mul(omega))
	for range 4 {
		q = orthonormal(m.mul(orthonormal(m.mulT(q))))
	}
	// B = Qᵀ M, l × n; its SVD, through Bᵀ = M ᵀQ (n × l).
	bt := m.mulT(q)
	var svd mat.SVD
	if !svd.Factorize(bt, mat.SVDThin) {
		return mat.NewDense(m.n, k, nil), make([]float64, k)
	}
	var v mat.Dense // Bᵀ = V Σ Wᵀ, so B = W Σ Vᵀ and M ≈ (Q W) Σ Vᵀ
	svd.VTo(&v)
	var u mat.Dense
	u.Mul(q, &v)
	s := svd.Values(nil)
	return mat.DenseCopyOf(u.Slice(0, m.n, 0, k)), s[:k]
}

// orthonormal returns an orthonormal basis of a's columns: the thin Q of
// its QR factorization (LAPACK's geqrf and orgqr), made in place.
func orthonormal(a *mat.Dense) *mat.Dense {
	g := a.RawMatrix()
	tau := make([]float64, min(g.Rows, g.Cols))
	work := make([]float64, 1)
	lapack64.Geqrf(g, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(g, tau, work, len(work))
	lapack64.Orgqr(g, tau, work[:1], -1)
	work = make([]float64, int(work[0]))
	lapack64.Orgqr(g, tau, work, len(work))
	return a
}

// rows builds the model's tokens (the unknown token, the words, then
// each word as a continuation), each token's row (mapping) and the rows.
func (t *Trainer) rows(words []string, termVec map[string][]float64) (tokens []string, mapping []int32, rows [][]float32) {
	o := t.opt
	sem, hsh := float32(math.Sqrt(o.SemanticShare)), float32(math.Sqrt(1-o.SemanticShare))
	var h *Hash
	if o.HashDim > 0 {
		h = NewHash(o.HashDim)
	}
	rows = append(rows, make([]float32, o.Dim+o.HashDim)) // unknown and stopwords
	tokens, mapping = append(tokens, learnedUnk), append(mapping, 0)
	var total float64
	for _, c := range t.words {
		total += float64(c)
	}
	for _, w := range words {
		row := make([]float32, o.Dim+o.HashDim)
		// The word's weight: a/(a+p) under SIF, 1 without.
		weight := float32(1)
		if o.SIF > 0 && total > 0 {
			weight = float32(o.SIF / (o.SIF + float64(t.words[w])/total))
		}
		var n int
		acc := make([]float64, o.Dim)
		for _, term := range lexical.Terms(w) {
			if v, ok := termVec[term]; ok {
				for j, x := range v {
					acc[j] += x
				}
				n++
			}
		}
		if n > 0 {
			var norm float64
			for _, x := range acc {
				norm += x * x
			}
			if norm > 0 {
				inv := 1 / math.Sqrt(norm)
				for j, x := range acc {
					row[j] = weight * sem * float32(x*inv)
				}
			}
		}
		if h != nil {
			for j, x := range h.Vector(w) {
				row[o.Dim+j] = weight * hsh * x
			}
		}
		r := int32(0)
		if !allZero(row) {
			r = int32(len(rows))
			rows = append(rows, row)
		}
		tokens, mapping = append(tokens, w), append(mapping, r)
	}
	for i, w := range words {
		tokens, mapping = append(tokens, learnedPrefix+w), append(mapping, mapping[1+i])
	}
	return tokens, mapping, rows
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

const (
	learnedUnk    = "[UNK]"
	learnedPrefix = "##"
)

// learnedTokenizerJSON is a learned model's tokenizer.json: BERT's
// normalizer (lowercase, accents kept, CJK characters apart) and
// pre-tokenizer (white space and punctuation), and a WordPiece model over
// the vocabulary.
func learnedTokenizerJSON(vocab map[string]int) []byte {
	tj := map[string]any{
		"version":        "1.0",
		"truncation":     nil,
		"padding":        nil,
		"added_tokens":   []any{map[string]any{"id": 0, "content": learnedUnk, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}},
		"normalizer":     map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": false, "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": nil,
		"decoder":        map[string]any{"type": "WordPiece", "prefix": learnedPrefix, "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": learnedUnk, "continuing_subword_prefix": learnedPrefix,
			"max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, _ := json.MarshalIndent(tj, "", " ") // map keys sorted: the same bytes each time
	return b
}

// writeLearned writes a learned model's files to dir through a temporary
// directory beside it, so that a model is either whole or absent.
func writeLearned(dir string, tokens []string, mapping []int32, rows [][]float32, info trainInfo, sample []string) error {
	dim := info.Dim
	vocab := make(map[string]int, len(tokens))
	for i, tok := range tokens {
		vocab[tok] = i
	}
	emb := make([]byte, 0, len(rows)*dim*2)
	for _, r := range rows {
		for _, x := range r {
			emb = binary.LittleEndian.AppendUint16(emb, toF16(x))
		}
	}
	mp := make([]byte, 0, len(mapping)*4)
	for _, r := range mapping {
		mp = binary.LittleEndian.AppendUint32(mp, uint32(r))
	}
	embT, err := safetensors.NewTensorView(safetensors.F16, []uint64{uint64(len(rows)), uint64(dim)}, emb)
	if err != nil {
		return err
	}
	mapT, err := safetensors.NewTensorView(safetensors.I32, []uint64{uint64(len(mapping))}, mp)
	if err != nil {
		return err
	}
	st, err := safetensors.Serialize(map[string]safetensors.TensorView{"embeddings": embT, "mapping": mapT}, nil)
	if err != nil {
		return err
	}
	cfg, _ := json.MarshalIndent(map[string]any{
		"model_type": "model2vec", "architectures": []string{"StaticModel"}, "hidden_dim": dim,
		"normalize": true, "tokenizer_name": "pos-learned", "apply_pca": nil, "apply_zipf": nil,
	}, "", " ")
	files := map[string][]byte{
		"config.json": cfg, "tokenizer.json": learnedTokenizerJSON(vocab), "model.safetensors": st,
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	m, err := LoadStatic(tmp, "")
	if err != nil {
		return fmt.Errorf("the model written does not load: %w", err)
	}
	info.MinSimilarity = chanceLevel(m, sample)
	meta, _ := json.MarshalIndent(info, "", " ")
	if err := os.WriteFile(filepath.Join(tmp, "pos_training.json"), meta, 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// toF16 converts a float32 to IEEE 754 half precision, rounding to
// nearest even (the values of a row are at most 1 in magnitude).
func toF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	frac := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		frac |= 0x800000
		shift := uint(14 - exp)
		half := uint32(1) << (shift - 1)
		m := frac >> shift
		if r := frac & (1<<shift - 1); r > half || r == half && m&1 == 1 {
			m++
		}
		return sign | uint16(m)
	}
	m := frac >> 13
	if r := frac & 0x1fff; r > 0x1000 || r == 0x1000 && m&1 == 1 {
		m++
		if m == 0x400 {
			m = 0
			exp++
			if exp >= 0x1f {
				return sign | 0x7c00
			}
		}
	}
	return sign | uint16(exp)<<10 | uint16(m)
}

// chanceLevel returns the chance level of the cosine similarities of
// every two of the sampled texts' vectors under m (0 when there are too
// few), rounded to 1/1000 so that it reads the same in
// pos_training.json on every machine.
func chanceLevel(m *Static, sample []string) float64 {
	var vecs [][]float32
	for _, text := range sample {
		if v := m.vector(text); !allZero(v) {
			normalize(v)
			vecs = append(vecs, v)
		}
	}
	var sims []float64
	for i, a := range vecs {
		for _, b := range vecs[i+1:] {
			var d float64
			for j, x := range a {
				d += float64(x) * float64(b[j])
			}
			sims = append(sims, d)
		}
	}
	if len(sims) < 10 {
		return 0
	}
	slices.Sort(sims)
	med := sims[len(sims)/2]
	dev := make([]float64, len(sims))
	for i, x := range sims {
		dev[i] = math.Abs(x - med)
	}
	slices.Sort(dev)
	level := med + chanceSpreads*madScale*dev[len(dev)/2]
	return math.Round(min(max(level, 0), 0.999)*1000) / 1000
}

// learnedMinSimilarity returns the chance level pos_training.json records
// for a learned model named model (as a lake records it: a name in
// ModelsDir, or an absolute directory) with dim dimensions, or 0 when
// model is no learned model on this machine.
func learnedMinSimilarity(model string, dim int) float64 {
	var dir string
	switch {
	case filepath.IsAbs(model):
		dir = model
	case ValidModelName(model) == nil && ModelsDir() != "":
		dir = filepath.Join(ModelsDir(), filepath.FromSlash(model))
	default:
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "pos_training.json"))
	if err != nil {
		return 0
	}
	var info trainInfo
	if json.Unmarshal(b, &info) != nil || info.Dim != dim || !(info.MinSimilarity > 0 && info.MinSimilarity < 1) {
		return 0
	}
	return info.MinSimilarity
}
