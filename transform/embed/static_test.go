package embed

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/transform/embed/statictest"
)

func writeModel(t *testing.T, opt statictest.Options) (*statictest.Model, string) {
	t.Helper()
	m := statictest.New(opt)
	dir := filepath.Join(t.TempDir(), "model")
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	return m, dir
}

// A text's vector is the mean of its tokens' rows, computed here by hand
// from the tokens BERT's tokenizer gives: lowercased, accents stripped
// (strip_accents null follows lowercase), punctuation split off, a word
// cut into WordPiece subwords, the unknown token and nothing else left
// out; unit length when the config says normalize; per-token weights
// applied when the model has them.
func TestStaticEmbedMean(t *testing.T) {
	text := "Rotate the LOGS nightly, workered café!"
	want := []string{"rotate", "the", "logs", "nightly", ",", "worker", "##ed", "!"} // café -> cafe: unknown
	for _, opt := range []statictest.Options{
		{Dim: 8},
		{Dim: 16, Float16: true, Seed: 3},
		{Dim: 8, Normalize: true, Weights: true, Seed: 5},
	} {
		m, dir := writeModel(t, opt)
		p, err := LoadStatic(dir, "tiny/model")
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, w := range want {
			ids = append(ids, m.ID(w))
		}
		if got := p.Tokens(text); !equalInts(got, ids) {
			t.Fatalf("%+v: tokens %v, want %v", opt, got, ids)
		}
		exp := m.Mean(ids)
		if opt.Normalize {
			var s float64
			for _, x := range exp {
				s += x * x
			}
			for i := range exp {
				exp[i] /= math.Sqrt(s)
			}
		}
		vs, err := p.Embed(context.Background(), []string{text, "zzz qqq", ""})
		if err != nil {
			t.Fatal(err)
		}
		if p.Dim() != opt.Dim || len(vs[0]) != opt.Dim || p.Name() != "static" || p.Model() != "tiny/model" {
			t.Fatalf("%+v: dim %d/%d, %s %s", opt, p.Dim(), len(vs[0]), p.Name(), p.Model())
		}
		for i := range exp {
			if math.Abs(float64(vs[0][i])-exp[i]) > 1e-5 {
				t.Fatalf("%+v: vector %v, want %v", opt, vs[0], exp)
			}
		}
		// Only unknown tokens, or none: the zero vector, as model2vec.
		for _, v := range vs[1:] {
			for _, x := range v {
				if x != 0 {
					t.Fatalf("%+v: unknown text's vector %v", opt, v)
				}
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Special tokens are not added, but one the text spells is its token; a
// word longer than max_input_chars_per_word is unknown; CJK ideographs
// are words of their own; at most 512 tokens count.
func TestStaticTokens(t *testing.T) {
	m, dir := writeModel(t, statictest.Options{})
	p, err := LoadStatic(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Model() != dir {
		t.Errorf("model name %q, want the directory", p.Model())
	}
	ids := func(ws ...string) []int {
		var out []int
		for _, w := range ws {
			out = append(out, m.ID(w))
		}
		return out
	}
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"the [MASK] log", ids("the", "[MASK]", "log")},
		{"the [mask] log", ids("the", "[", "]", "log")}, // "mask" is unknown
		{"日本語 test", ids("日", "本", "語", "test")},
		{"test" + strings.Repeat("s", 200), nil},
		{"tests\u00a0\tfix\x00ing", ids("tests", "fix", "##ing")},
		{strings.Repeat("log ", 600), ids(strings.Fields(strings.Repeat("log ", 512))...)},
	} {
		if got := p.Tokens(tc.text); !equalInts(got, tc.want) {
			t.Errorf("%.40q: %v, want %v", tc.text, got, tc.want)
		}
	}
}

// The Unigram tokenizers of newer model2vec models: punctuation padded
// by Replace, spaces squeezed by a Regex Replace, a Metaspace that does
// not split, so a multiword token wins where its score is best.
func TestStaticUnigram(t *testing.T) {
	tj := `{"added_tokens":[{"id":0,"content":"[UNK]","normalized":false,"special":true},{"id":1,"content":"[PAD]","normalized":false,"special":true}],
"normalizer":{"type":"Sequence","normalizers":[{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},
 {"type":"Replace","pattern":{"String":"!"},"content":" ! "},{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "},{"type":"Strip","strip_left":false,"strip_right":true}]},
"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":false},
"model":{"type":"Unigram","unk_id":0,"byte_fallback":false,"vocab":[["[UNK]",0],["[PAD]",0],["▁new",-3],["▁york",-3],["▁new▁york",-4],["▁!",-2],["▁",-5],["n",-6],["e",-6],["w",-6],["▁ne",-4]]}}`
	tok, err := parseTokenizer([]byte(tj))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"New  York!", []int{4, 5}},
		{"new", []int{2}},
		{"newq", []int{2, 0}},      // q: unknown
		{"new qq", []int{2, 6, 0}}, // a run of unknown characters is one unknown token
		{"[PAD] new", []int{1, 2}},
	} {
		if got := tok.encode(tc.text); !equalInts(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestStaticLoadErrors(t *testing.T) {
	_, dir := writeModel(t, statictest.Options{})
	st, _ := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	for _, tc := range []struct {
		file string
		data []byte
		want string
	}{
		{"model.safetensors", st[:len(st)-3], "model.safetensors: metadata incomplete buffer"},
		{"model.safetensors", st[:4], "model.safetensors: header too small"},
		{"tokenizer.json", []byte(`{"model":{"type":"BPE","vocab":{}}}`), `tokenizer.json: model: model "BPE" is not supported`},
		{"tokenizer.json", []byte(`{"normalizer":{"type":"Precompiled"},"model":{"type":"WordPiece","vocab":{"a":0}}}`), `normalizer "Precompiled" is not supported`},
		{"tokenizer.json", []byte(`{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"a":0,"[UNK]":1000}}}`), `token "[UNK]": bad id 1000`},
		{"tokenizer.json", []byte(`{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"a":0,"[UNK]":1000}},"x":"` + strings.Repeat(" ", 1000) + `"}`),
			"rows for a vocabulary of 1001 tokens"},
		{"config.json", []byte(`{`), "config.json: unexpected end of JSON input"},
	} {
		d := filepath.Join(t.TempDir(), "m")
		os.CopyFS(d, os.DirFS(dir))
		os.WriteFile(filepath.Join(d, tc.file), tc.data, 0o644)
		_, err := LoadStatic(d, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.file, err, tc.want)
		}
	}
}

// A model is named by its directory, or by its hub name in the models
// directory; one missing says how to get it.
func TestStaticModelDir(t *testing.T) {
	models := t.TempDir()
	m := statictest.New(statictest.Options{})
	if err := m.Write(filepath.Join(models, "org", "tiny")); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"org/tiny", filepath.Join(models, "org", "tiny")} {
		p, err := NewProvider(Config{Provider: "static", Model: in, ModelsDir: models})
		if err != nil || p.Model() != "org/tiny" || p.Dim() != 8 {
			t.Fatalf("%s: %v %v", in, p, err)
		}
	}
	_, err := NewProvider(Config{Provider: "static", Model: "org/other", ModelsDir: models})
	if !errors.Is(err, ErrModelMissing) || !strings.Contains(err.Error(), "org/other is not on this machine (pos-embed model pull org/other)") {
		t.Errorf("missing: %v", err)
	}
	if _, err := ProviderFor("org/tiny", 16, Config{Provider: "static", ModelsDir: models}); err == nil || !strings.Contains(err.Error(), "has 8 dimensions, the lake's vectors 16") {
		t.Errorf("dimension: %v", err)
	}
	if _, err := NewProvider(Config{Provider: "static", Model: "org/tiny", ModelsDir: models, Dimensions: 384}); err == nil || !strings.Contains(err.Error(), "static model org/tiny has 8 dimensions, not 384") {
		t.Errorf("--dimensions: %v", err)
	}
	if _, err := NewProvider(Config{Provider: "static"}); err == nil || !strings.Contains(err.Error(), "needs --model") {
		t.Errorf("no model: %v", err)
	}
}

func TestF16(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x3555: 0.33325195, 0x0001: 5.9604645e-08, 0x7bff: 65504, 0x8000: float32(math.Copysign(0, -1))} {
		if got := f16(h); got != want || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
			t.Errorf("f16(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsInf(float64(f16(0x7c00)), 1) || !math.IsNaN(float64(f16(0x7e00))) {
		t.Error("f16 of Inf and NaN")
	}
}

func BenchmarkStaticEmbed(b *testing.B) {
	m := statictest.New(statictest.Options{Dim: 256})
	dir := filepath.Join(b.TempDir(), "m")
	if err := m.Write(dir); err != nil {
		b.Fatal(err)
	}
	p, err := LoadStatic(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("Running the slow test suite in parallel workers made builds faster; the compiler error was fixed in config.go:42. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		p.Embed(context.Background(), []string{text})
	}
}

// The ids of testdata/static/reference.json were computed by Hugging
// Face's own tokenizers.js (@huggingface/tokenizers 0.2.0,
// encode(text, {add_special_tokens: false})) from the two tokenizer.json
// files beside it: a BERT-style WordPiece one, as the first potion models
// ship, and two Unigram ones as model2vec writes them (the normalizer pads
// punctuation and squeezes spaces; a Metaspace that does not split, or
// for byte-level teachers a ByteLevel without its pattern).
func TestStaticTokenizerReference(t *testing.T) {
	b, err := os.ReadFile("testdata/static/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string][]struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wordpiece", "unigram", "bytelevel"} {
		tj, err := os.ReadFile("testdata/static/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := parseTokenizer(tj)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ref[name]) < 10 {
			t.Fatalf("%s: %d reference texts", name, len(ref[name]))
		}
		for _, r := range ref[name] {
			if got := tok.encode(r.Text); !equalInts(got, r.IDs) {
				t.Errorf("%s: %q: %v, want %v", name, r.Text, got, r.IDs)
			}
		}
	}
}
