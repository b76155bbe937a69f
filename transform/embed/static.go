package embed

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nlpodyssey/safetensors"
)

// Static embeds with a model2vec static model: a text's vector is the
// mean of its tokens' rows of an embedding matrix, as model2vec's
// StaticModel.encode computes it (tokens without special tokens, the
// unknown token dropped, at most 512 tokens, each row scaled by the
// model's per-token weight when it has one; unit length when its config
// says normalize). Pure Go, no network: the model is a directory with
// model.safetensors, tokenizer.json and config.json (see
// pos-embed model pull).
type Static struct {
	name   string // what the lake records: the hub name, or the directory
	dir    string
	tok    *tokenizer
	emb    []float32 // rows × dim, row-major
	rows   int
	dim    int
	weight []float32 // per token id, or nil
	remap  []int32   // token id -> row, or nil
	norm   bool
	median int // characters per token, for the cut before tokenizing
}

// StaticFiles are the files of a model2vec model.
var StaticFiles = []string{"config.json", "tokenizer.json", "model.safetensors"}

// staticMaxTokens is model2vec's default max_length: the tokens of a text
// beyond it are not embedded.
const staticMaxTokens = 512

// ErrModelMissing is wrapped by the error for a static model that is not
// on this machine.
var ErrModelMissing = errors.New("static model not found")

// StaticModelDir resolves a static model named by a directory (one that
// holds its files) or by its hub name (org/name, looked up under
// modelsDir). name is what the lake records: the hub name for a model
// in modelsDir, else the directory's absolute path.
func StaticModelDir(model, modelsDir string) (dir, name string, err error) {
	if model == "" {
		return "", "", errors.New("the static provider needs --model: a model directory or a name pulled with pos-embed model pull")
	}
	if st, err := os.Stat(model); err == nil && st.IsDir() {
		abs, err := filepath.Abs(model)
		if err != nil {
			return "", "", err
		}
		if modelsDir != "" {
			if root, err := filepath.Abs(modelsDir); err == nil {
				if rel, err := filepath.Rel(root, abs); err == nil && ValidModelName(filepath.ToSlash(rel)) == nil {
					return abs, filepath.ToSlash(rel), nil
				}
			}
		}
		return abs, abs, nil
	}
	if filepath.IsAbs(model) || ValidModelName(model) != nil || modelsDir == "" {
		return "", "", fmt.Errorf("%w: %s is not a model directory on this machine", ErrModelMissing, model)
	}
	dir = filepath.Join(modelsDir, filepath.FromSlash(model))
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
		return "", "", fmt.Errorf("%w: %s is not on this machine (pos-embed model pull %s)", ErrModelMissing, model, model)
	}
	return dir, model, nil
}

var staticCache sync.Map // dir -> *staticEntry

type staticEntry struct {
	once sync.Once
	m    *Static
	err  error
	key  string
}

// OpenStatic returns the static model a name or directory names (see
// StaticModelDir); a model already loaded by this process is shared.
func OpenStatic(model, modelsDir string) (*Static, error) {
	dir, name, err := StaticModelDir(model, modelsDir)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrModelMissing, err)
	}
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d", dir, name, st.Size(), st.ModTime().UnixNano())
	v, _ := staticCache.LoadOrStore(key, &staticEntry{key: key})
	e := v.(*staticEntry)
	e.once.Do(func() { e.m, e.err = LoadStatic(dir, name) })
	if e.err != nil {
		staticCache.Delete(key)
	}
	return e.m, e.err
}

// LoadStatic reads the model in dir; name is the model name its vectors
// are stamped with ("" for the directory).
func LoadStatic(dir, name string) (*Static, error) {
	if name == "" {
		name = dir
	}
	m := &Static{name: name, dir: dir}
	path := func(f string) string { return filepath.Join(dir, f) }
	cfg, err := os.ReadFile(path("config.json"))
	if err != nil {
		return nil, err
	}
	var c struct {
		Normalize *bool `json:"normalize"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path("config.json"), err)
	}
	// model2vec's default when the config does not say.
	m.norm = c.Normalize != nil && *c.Normalize
	tj, err := os.ReadFile(path("tokenizer.json"))
	if err != nil {
		return nil, err
	}
	if m.tok, err = parseTokenizer(tj); err != nil {
		return nil, fmt.Errorf("%s: %w", path("tokenizer.json"), err)
	}
	m.median = m.tok.medianTokenLength()
	st, err := os.ReadFile(path("model.safetensors"))
	if err != nil {
		return nil, err
	}
	if err := m.readTensors(st); err != nil {
		return nil, fmt.Errorf("%s: %w", path("model.safetensors"), err)
	}
	return m, nil
}

// readTensors takes the embedding matrix (named "embeddings", or
// "embedding.weight" in the sentence-transformers layout, or "0") and
// the optional "weights" and "mapping" of model2vec's vocabulary
// quantization, and checks that every token id has a row.
func (m *Static) readTensors(b []byte) error {
	st, err := parseSafetensors(b)
	if err != nil {
		return err
	}
	var emb safetensors.TensorView
	found := false
	for _, n := range []string{"embeddings", "embedding.weight", "0"} {
		if emb, found = st.Tensor(n); found {
			break
		}
	}
	if !found {
		return fmt.Errorf("no embeddings tensor (has %s)", strings.Join(st.Names(), ", "))
	}
	shape := emb.Shape()
	if len(shape) != 2 || shape[0] == 0 || shape[1] == 0 || shape[1] > 1<<16 {
		return fmt.Errorf("embeddings: shape %v is not a matrix of rows and at most 65536 columns", shape)
	}
	m.rows, m.dim = int(shape[0]), int(shape[1])
	if m.emb, err = floats(emb); err != nil {
		return fmt.Errorf("embeddings: %w", err)
	}
	vocab := m.tok.vocabSize
	if w, ok := st.Tensor("weights"); ok {
		if m.weight, err = floats(w); err != nil {
			return fmt.Errorf("weights: %w", err)
		}
		if len(m.weight) < vocab {
			return fmt.Errorf("weights: %d for a vocabulary of %d", len(m.weight), vocab)
		}
	}
	if mp, ok := st.Tensor("mapping"); ok {
		if m.remap, err = ints(mp); err != nil {
			return fmt.Errorf("mapping: %w", err)
		}
		if len(m.remap) < vocab {
			return fmt.Errorf("mapping: %d ids for a vocabulary of %d", len(m.remap), vocab)
		}
		for i, r := range m.remap {
			if r < 0 || int(r) >= m.rows {
				return fmt.Errorf("mapping: token %d maps to row %d of %d", i, r, m.rows)
			}
		}
	} else if vocab > m.rows {
		return fmt.Errorf("embeddings: %d rows for a vocabulary of %d tokens", m.rows, vocab)
	}
	return nil
}

// parseSafetensors reads a safetensors file: an 8-byte little-endian
// header length, a JSON header of tensors (dtype, shape, data offsets)
// and their data.
func parseSafetensors(b []byte) (st safetensors.SafeTensors, err error) {
	if len(b) >= 8 && binary.LittleEndian.Uint64(b) > uint64(len(b)) {
		return st, fmt.Errorf("header of %d bytes in a file of %d: truncated", binary.LittleEndian.Uint64(b), len(b))
	}
	return safetensors.Deserialize(b)
}

func floats(t safetensors.TensorView) ([]float32, error) {
	d := t.Data()
	switch t.DType() {
	case safetensors.F32:
		return decode(d, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }), nil
	case safetensors.F16:
		return decode(d, 2, func(b []byte) float32 { return f16(binary.LittleEndian.Uint16(b)) }), nil
	case safetensors.BF16:
		return decode(d, 2, func(b []byte) float32 { return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16) }), nil
	case safetensors.F64:
		return decode(d, 8, func(b []byte) float32 { return float32(math.Float64frombits(binary.LittleEndian.Uint64(b))) }), nil
	case safetensors.I8:
		return decode(d, 1, func(b []byte) float32 { return float32(int8(b[0])) }), nil
	}
	return nil, fmt.Errorf("dtype %s is not supported (F32, F16, BF16, F64, I8)", t.DType())
}

func ints(t safetensors.TensorView) ([]int32, error) {
	d := t.Data()
	switch t.DType() {
	case safetensors.I32:
		return decode(d, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }), nil
	case safetensors.I64:
		out := make([]int32, len(d)/8)
		for i := range out {
			v := int64(binary.LittleEndian.Uint64(d[8*i:]))
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("index %d out of range", v)
			}
			out[i] = int32(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not an integer type (I32, I64)", t.DType())
}

// decode reads a tensor's data as values of size bytes each, converted
// with conv (a trailing part of a value is dropped).
func decode[T any](d []byte, size int, conv func(b []byte) T) []T {
	out := make([]T, len(d)/size)
	for i := range out {
		out[i] = conv(d[size*i:])
	}
	return out
}

// f16 converts an IEEE 754 half-precision float.
func f16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// Name implements Provider.
func (m *Static) Name() string { return "static" }

// Model implements Provider: the hub name of a pulled model, else its
// directory.
func (m *Static) Model() string { return m.name }

// Dir is the directory the model was read from.
func (m *Static) Dir() string { return m.dir }

// Dim implements Provider.
func (m *Static) Dim() int { return m.dim }

// MaxBatch implements Provider.
func (m *Static) MaxBatch() int { return 256 }

// Embed implements Provider.
func (m *Static) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return embedEach(ctx, texts, m.vector)
}

// Tokens returns the token ids model2vec embeds a text by.
func (m *Static) Tokens(text string) []int {
	// model2vec cuts the text to max_length × the median token length
	// in characters before tokenizing, then the tokens to max_length.
	if limit := staticMaxTokens * m.median; utf8.RuneCountInString(text) > limit {
		n := 0
		for i := range text {
			if n == limit {
				text = text[:i]
				break
			}
			n++
		}
	}
	ids := m.tok.encode(text)
	kept := ids[:0]
	for _, id := range ids {
		if id != m.tok.unk {
			kept = append(kept, id)
		}
	}
	if len(kept) > staticMaxTokens {
		kept = kept[:staticMaxTokens]
	}
	return kept
}

func (m *Static) vector(text string) []float32 {
	v := make([]float32, m.dim)
	ids := m.Tokens(text)
	if len(ids) == 0 {
		return v
	}
	for _, id := range ids {
		row, w := id, float32(1)
		if m.remap != nil {
			row = int(m.remap[id])
		}
		if m.weight != nil {
			w = m.weight[id]
		}
		r := m.emb[row*m.dim : (row+1)*m.dim]
		for j, x := range r {
			v[j] += w * x
		}
	}
	inv := 1 / float32(len(ids))
	for j := range v {
		v[j] *= inv
	}
	if m.norm {
		normalize(v)
	}
	return v
}

// parseHeaderInfo reads the embeddings' dtype and shape from a
// safetensors JSON header.
func parseHeaderInfo(hdr []byte) (headerInfo, error) {
	var h map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &h); err != nil {
		return headerInfo{}, fmt.Errorf("model.safetensors: header: %w", err)
	}
	for _, n := range []string{"embeddings", "embedding.weight", "0"} {
		raw, ok := h[n]
		if !ok {
			continue
		}
		var t struct {
			DType string `json:"dtype"`
			Shape []int  `json:"shape"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || len(t.Shape) != 2 {
			return headerInfo{}, fmt.Errorf("model.safetensors: %s is not a matrix", n)
		}
		return headerInfo{rows: t.Shape[0], dim: t.Shape[1], dtype: t.DType}, nil
	}
	return headerInfo{}, errors.New("model.safetensors: no embeddings tensor")
}
