// Package statictest writes tiny model2vec models and serves them as the
// Hugging Face hub does, for the tests of the static provider and of
// pos-embed model pull.
package statictest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nlpodyssey/safetensors"
	"github.com/pos-lake/pos/transform/embed/internal/half"
)

// Words are the whole words of the tiny WordPiece vocabulary, after the
// special tokens; Subwords are its continuation pieces (## prefixed).
var (
	Special  = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	Subwords = []string{"##s", "##ing", "##ed", "##er", "##ly", "##tion", "##a", "##e", "##i", "##o", "##u", "##n", "##t", "##r"}
	Words    = strings.Fields(`the a an and or of to in on for with by at from is are was were be been it this that
these those we you they he she i me my our your their not no yes do did done can could will would should
log logs rotate rotation nightly daily weekly test tests suite slow fast faster parallel worker workers run
running build builds compile compiler error errors fix fixed bug bugs crash panic stack trace file files
path directory cache model models vector vectors search query index lexical semantic embed embedding
token tokens chunk chunks session sessions agent agents tool tools output input command commands shell
git commit branch merge push pull diff patch review code go python rust java script config setting
settings flag flags option options server client request response http api key keys secret secrets
database table row rows column columns schema parquet duckdb lake load loader write read open close
time date day night week month year morning evening hour minute second clock timer timeout retry
memory disk cpu core cores thread threads lock mutex race deadlock channel queue job jobs task tasks
user users prompt prompts answer answers question questions summary summaries plan plans decision
decisions context pack packs window compaction continue resume remember forgot note notes
. , ! ? ; : - ( ) " ' / _ = + * # [ ]
café naïve über 日 本 語 ж`)
)

// Vocab returns the tiny vocabulary, by id.
func Vocab() []string {
	v := append(append(append([]string{}, Special...), Words...), Subwords...)
	seen := map[string]bool{}
	out := v[:0]
	for _, w := range v {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Options shape a tiny model.
type Options struct {
	Dim       int  // default 8
	Float16   bool // store the embeddings as F16 (else F32)
	Normalize bool // config.json's normalize
	Weights   bool // add a per-token "weights" tensor
	Seed      uint64
}

// Model is a tiny model's files and the numbers they hold.
type Model struct {
	Vocab  []string
	Rows   [][]float32 // by token id, as stored (F16 rounding applied)
	Weight []float32   // per token id, or nil
	Files  map[string][]byte
}

// ID returns a token's id (-1 when not in the vocabulary).
func (m *Model) ID(tok string) int {
	for i, v := range m.Vocab {
		if v == tok {
			return i
		}
	}
	return -1
}

// New makes a tiny WordPiece model2vec model.
func New(opt Options) *Model {
	if opt.Dim == 0 {
		opt.Dim = 8
	}
	vocab := Vocab()
	r := rand.New(rand.NewPCG(opt.Seed, 42))
	m := &Model{Vocab: vocab, Files: map[string][]byte{}}
	var data []byte
	for range vocab {
		row := make([]float32, opt.Dim)
		for j := range row {
			x := float32(r.NormFloat64())
			if opt.Float16 {
				h := half.FromFloat32(x)
				data = binary.LittleEndian.AppendUint16(data, h)
				x = fromF16(h)
			} else {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
			}
			row[j] = x
		}
		m.Rows = append(m.Rows, row)
	}
	dt := safetensors.F32
	if opt.Float16 {
		dt = safetensors.F16
	}
	tensors := map[string]safetensors.TensorView{}
	emb, err := safetensors.NewTensorView(dt, []uint64{uint64(len(vocab)), uint64(opt.Dim)}, data)
	if err != nil {
		panic(err)
	}
	tensors["embeddings"] = emb
	if opt.Weights {
		var wd []byte
		for i := range vocab {
			w := 0.5 + float32(i%7)/4
			m.Weight = append(m.Weight, w)
			wd = binary.LittleEndian.AppendUint32(wd, math.Float32bits(w))
		}
		wt, err := safetensors.NewTensorView(safetensors.F32, []uint64{uint64(len(vocab))}, wd)
		if err != nil {
			panic(err)
		}
		tensors["weights"] = wt
	}
	st, err := safetensors.Serialize(tensors, nil)
	if err != nil {
		panic(err)
	}
	m.Files["model.safetensors"] = st
	m.Files["tokenizer.json"] = WordPieceTokenizer(vocab)
	cfg, _ := json.Marshal(map[string]any{"model_type": "model2vec", "normalize": opt.Normalize, "hidden_dim": opt.Dim,
		"embedding_dtype": map[bool]string{false: "float32", true: "float16"}[opt.Float16]})
	m.Files["config.json"] = cfg
	return m
}

// WordPieceTokenizer is a tokenizer.json as the BERT-based potion models
// ship it: BertNormalizer, BertPreTokenizer, WordPiece.
func WordPieceTokenizer(vocab []string) []byte {
	v := map[string]int{}
	for i, w := range vocab {
		v[w] = i
	}
	var added []map[string]any
	for i, s := range Special {
		added = append(added, map[string]any{"id": i, "content": s, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	b, _ := json.Marshal(map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": added,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single": []any{special("[CLS]"), seq("A"), special("[SEP]")},
			"pair":   []any{special("[CLS]"), seq("A"), special("[SEP]"), seq("B"), special("[SEP]")},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{v["[CLS]"]}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{v["[SEP]"]}, "tokens": []string{"[SEP]"}},
			}},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model":   map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": v},
	})
	return b
}

func special(id string) map[string]any {
	return map[string]any{"SpecialToken": map[string]any{"id": id, "type_id": 0}}
}

func seq(id string) map[string]any {
	return map[string]any{"Sequence": map[string]any{"id": id, "type_id": 0}}
}

// Write puts the model's files in dir.
func (m *Model) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range m.Files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Mean is model2vec's vector of token ids: the mean of their rows
// (weighted when the model has weights), in float64.
func (m *Model) Mean(ids []int) []float64 {
	out := make([]float64, len(m.Rows[0]))
	for _, id := range ids {
		w := 1.0
		if m.Weight != nil {
			w = float64(m.Weight[id])
		}
		for j, x := range m.Rows[id] {
			out[j] += w * float64(x)
		}
	}
	for j := range out {
		out[j] /= float64(len(ids))
	}
	return out
}

// Hub serves models as the Hugging Face hub does: /ORG/NAME/resolve/main/FILE
// answers a large (LFS) file with a redirect carrying X-Linked-Size and
// X-Linked-Etag (its SHA-256) to a download on another host that honours
// ranges and refuses a token; config.json with a redirect on its own host
// (where the token is still needed), tokenizer.json directly, each with
// its git ETag.
type Hub struct {
	*httptest.Server
	cdn    *httptest.Server // the downloads' host
	mu     sync.Mutex
	models map[string]*Model
	// Token, when set, is required as a bearer token.
	Token string
	// Cut, when set, ends the download of that file after so many bytes
	// (a dropped connection) the next time it is fetched.
	Cut map[string]int
	// Corrupt, when set, serves that file with a byte changed.
	Corrupt map[string]bool
	// Requests counts the requests, by method and path.
	Requests []string
}

// NewHub starts a hub serving models by name.
func NewHub(models map[string]*Model) *Hub {
	h := &Hub{models: models, Cut: map[string]int{}, Corrupt: map[string]bool{}}
	// The download host starts first: the hub's redirects read its URL.
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serve))
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

// Close stops the hub and its download host.
func (h *Hub) Close() {
	h.Server.Close()
	h.cdn.Close()
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.Requests = append(h.Requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Range"))
	h.mu.Unlock()
	if rest, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		h.serveBlob(w, r, rest)
		return
	}
	if h.Token != "" && r.Header.Get("Authorization") != "Bearer "+h.Token {
		w.Header().Set("X-Error-Code", "GatedRepo")
		http.Error(w, "Access to model is restricted", http.StatusUnauthorized)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/resolve-cache/models/"); ok {
		// Where the hub's own host serves a small file from (a token
		// is still needed here).
		parts := strings.SplitN(rest, "/", 4)
		if m := h.models[parts[0]+"/"+parts[1]]; m != nil && len(parts) == 4 && m.Files[parts[3]] != nil {
			sum := sha1.Sum(m.Files[parts[3]])
			w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
			h.write(w, r, parts[0]+"/"+parts[1], parts[3], m.Files[parts[3]])
			return
		}
		http.NotFound(w, r)
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" || parts[3] != "main" {
		http.NotFound(w, r)
		return
	}
	m := h.models[parts[0]+"/"+parts[1]]
	if m == nil {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, "Repository not found", http.StatusNotFound)
		return
	}
	b, ok := m.Files[parts[4]]
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	if parts[4] == "model.safetensors" {
		sum := sha256.Sum256(b)
		w.Header().Set("X-Linked-Size", fmt.Sprint(len(b)))
		w.Header().Set("X-Linked-Etag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		http.Redirect(w, r, h.cdn.URL+"/cdn/"+parts[0]+"/"+parts[1]+"/"+parts[4], http.StatusFound)
		return
	}
	if parts[4] == "config.json" {
		// A small file: redirected on the hub's own host.
		http.Redirect(w, r, "/api/resolve-cache/models/"+parts[0]+"/"+parts[1]+"/0123abcd/"+parts[4], http.StatusTemporaryRedirect)
		return
	}
	sum := sha1.Sum(b)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
	h.write(w, r, parts[0]+"/"+parts[1], parts[4], b)
}

func (h *Hub) serveBlob(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 || h.models[parts[0]+"/"+parts[1]] == nil {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "" {
		// The hub's downloads are signed URLs: a token has no business here.
		http.Error(w, "unexpected Authorization", http.StatusBadRequest)
		return
	}
	h.write(w, r, parts[0]+"/"+parts[1], parts[2], h.models[parts[0]+"/"+parts[1]].Files[parts[2]])
}

func (h *Hub) write(w http.ResponseWriter, r *http.Request, model, file string, b []byte) {
	h.mu.Lock()
	cut, cutting := h.Cut[file]
	delete(h.Cut, file)
	corrupt := h.Corrupt[file]
	h.mu.Unlock()
	if corrupt {
		b = bytes.Clone(b)
		b[len(b)-1] ^= 0xff
	}
	if cutting && r.Method == http.MethodGet {
		// Announce the whole file, send part of it, drop the connection.
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b[:cut])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
		return
	}
	http.ServeContent(w, r, file, time.Time{}, bytes.NewReader(b))
}

// fromF16 is the float32 of a half-precision float (normal numbers and
// zeros, which is all half.FromFloat32 makes of normally distributed values).
func fromF16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}
