package embed

import (
	"slices"
	"testing"

	"github.com/pos-lake/pos/transform/embed/statictest"
)

// Any bytes as model.safetensors: an error or a model whose every token
// has a row, never a panic.
func FuzzStaticSafetensors(f *testing.F) {
	for _, opt := range []statictest.Options{{Dim: 2}, {Dim: 3, Float16: true, Weights: true}} {
		f.Add(statictest.New(opt).Files["model.safetensors"])
	}
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"embeddings\":1}"))
	f.Add([]byte("\x40\x00\x00\x00\x00\x00\x00\x00{\"embeddings\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[0,0]}}   "))
	tok, err := parseTokenizer(statictest.WordPieceTokenizer(statictest.Vocab()))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := &Static{tok: tok, median: tok.medianTokenLength()}
		if err := m.readTensors(data); err != nil {
			return
		}
		v := m.vector("the logs rotate nightly [MASK] 日本")
		if len(v) != m.dim {
			t.Fatalf("vector of %d, dim %d", len(v), m.dim)
		}
		if _, err := parseHeaderInfo(data[8:]); err != nil && len(data) > 8 {
			t.Logf("header: %v", err)
		}
	})
}

// Any bytes as tokenizer.json: an error, or a tokenizer that gives every
// text the same ids each time, all within its vocabulary.
func FuzzStaticTokenizer(f *testing.F) {
	f.Add(statictest.WordPieceTokenizer(statictest.Vocab()[:40]), "Rotate the LOGS, café 日本")
	f.Add([]byte(`{"normalizer":{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "},{"type":"Strip","strip_left":true,"strip_right":true},{"type":"Prepend","prepend":"▁"}]},
"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true},{"type":"Digits","individual_digits":true},{"type":"Punctuation"}]},
"model":{"type":"Unigram","unk_id":0,"byte_fallback":true,"vocab":[["<unk>",0],["▁new",-3],["<0x41>",-9],["▁",-5],["n",-6]]}}`), "new York 12 A!")
	f.Add([]byte(`{"pre_tokenizer":{"type":"Whitespace"},"model":{"type":"WordLevel","unk_token":"?","vocab":{"?":0,"a":1,"b":2}}}`), "a b, c")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := parseTokenizer(data)
		if err != nil {
			return
		}
		ids := tok.encode(text)
		for _, id := range ids {
			if id < 0 || id >= tok.vocabSize {
				t.Fatalf("id %d outside a vocabulary of %d", id, tok.vocabSize)
			}
		}
		if again := tok.encode(text); !slices.Equal(ids, again) {
			t.Fatalf("%v then %v", ids, again)
		}
	})
}
