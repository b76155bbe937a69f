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
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pos-lake/pos/transform/embed/lexical"
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
