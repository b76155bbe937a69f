package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/nlpodyssey/safetensors"
	"github.com/pos-lake/pos/transform/embed/internal/half"
)

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
			emb = binary.LittleEndian.AppendUint16(emb, half.FromFloat32(x))
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
