package embed

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/vectest"
)

func TestHashVectors(t *testing.T) {
	h := NewHash(0)
	if h.Dim() != DefaultDim || h.Model() != HashModel {
		t.Fatalf("dim %d model %s", h.Dim(), h.Model())
	}
	a := h.Vector("The parquet writer flushes row groups to keep memory bounded")
	if len(a) != DefaultDim {
		t.Fatalf("len %d", len(a))
	}
	if n := math.Sqrt(vectest.Dot(a, a)); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm %v", n)
	}
	again := h.Vector("The parquet writer flushes row groups to keep memory bounded")
	if vectest.Dot(a, again) < 0.99999 {
		t.Error("not deterministic")
	}
	near := h.Vector("flushing parquet row groups bounds the writer's memory")
	far := h.Vector("xterm scrollback inside tmux swallows mouse wheel events")
	if dn, df := vectest.Dot(a, near), vectest.Dot(a, far); dn <= df+0.2 {
		t.Errorf("related %.3f vs unrelated %.3f", dn, df)
	}
	// Inflections meet through stems and character grams.
	if s := vectest.Dot(h.Vector("caching queries"), h.Vector("the query cache")); s < 0.3 {
		t.Errorf("caching/cache %.3f", s)
	}
	for _, empty := range []string{"", "the and of", "!!! ---"} {
		for _, x := range h.Vector(empty) {
			if x != 0 {
				t.Fatalf("%q: want a zero vector", empty)
			}
		}
	}
	vs, err := h.Embed(context.Background(), []string{"one", "two"})
	if err != nil || len(vs) != 2 {
		t.Fatal(vs, err)
	}
	if got := NewHash(64).Vector("sized"); len(got) != 64 {
		t.Errorf("dim 64: %d", len(got))
	}
}

// vectorSum is a checksum of a vector's bits.
func vectorSum(v []float32) uint64 {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return xxhash.Sum64(b)
}

// pos-hash-v1 stays selectable and gives the vectors it always gave, bit
// for bit (the sums are of the vectors v1 made before v2 existed), so a
// lake embedded with it is still searched with the vectors it was built
// with; v2 gives others. pos-hash-v2 likewise gives the vectors it gave
// before version 2 of the lexical tokenizer existed, and v3 (made of that
// version's terms) others.
func TestHashModels(t *testing.T) {
	texts := []string{"The parquet writer flushes row groups to keep memory bounded",
		"Пустой спрайт обычно означает, что команда svg-sprite не нашла ни одного SVG-файла; CLAUDE.md を最新の状態にアップデート hookSpecificOutput"}
	want := []uint64{0xafac4940f5ad19f2, 0xd1c5294bff39be16}
	v1, err := NewHashModel(HashModelV1, 0)
	if err != nil || v1.Model() != HashModelV1 {
		t.Fatal(v1, err)
	}
	for i, text := range texts {
		if got := vectorSum(v1.Vector(text)); got != want[i] {
			t.Errorf("v1 %q: sum %#x, want %#x", text, got, want[i])
		}
		if vectorSum(NewHash(0).Vector(text)) == want[i] {
			t.Errorf("v3 gives v1's vector for %q", text)
		}
	}
	wantV2 := []uint64{0x992262cdd62e757, 0x5f9af3683baed101}
	v2, err := NewHashModel(HashModelV2, 0)
	if err != nil || v2.Model() != HashModelV2 || MinSimilarity(HashModelV2, DefaultDim) != MinSimilarity(HashModel, DefaultDim) {
		t.Fatal(v2, err)
	}
	for i, text := range texts {
		if got := vectorSum(v2.Vector(text)); got != wantV2[i] {
			t.Errorf("v2 %q: sum %#x, want %#x", text, got, wantV2[i])
		}
		if i == 1 && vectorSum(NewHash(0).Vector(text)) == wantV2[i] {
			// (Plain English prose has the same terms in both.)
			t.Errorf("v3 gives v2's vector for %q", text)
		}
	}
	for _, m := range []string{"", HashModel} {
		if h, err := NewHashModel(m, 0); err != nil || h.Model() != HashModel {
			t.Errorf("%q: %v %v", m, h, err)
		}
	}
	if _, err := NewHashModel("pos-hash-v0", 0); err == nil || !strings.Contains(err.Error(), "pos-hash-v2 and pos-hash-v1") {
		t.Errorf("pos-hash-v0: %v", err)
	}
	for _, m := range HashModels {
		p, err := NewProvider(Config{Model: m})
		if err != nil || p.Model() != m {
			t.Errorf("NewProvider %s: %v %v", m, p, err)
		}
		if p, err := ProviderFor(m, 128, Config{}); err != nil || p.Model() != m || p.Dim() != 128 {
			t.Errorf("ProviderFor %s: %v %v", m, p, err)
		}
	}
}

// Spreading each feature over several dimensions cuts what unrelated texts
// score by chance: the best score of nonsense queries against texts they
// share no word with is lower with v2 than with v1, and against texts of
// eight words or more, below MinSimilarity. (Against a text of two or three
// words a chance score can still pass it: their vectors fill few
// dimensions.)
func TestHashChanceSimilarity(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	word := func() string {
		var b strings.Builder
		for range 3 + r.IntN(8) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		return b.String()
	}
	phrase := func(n int) string {
		var ws []string
		for range n {
			ws = append(ws, word())
		}
		return strings.Join(ws, " ")
	}
	var queries []string
	for range 100 {
		queries = append(queries, phrase(1+r.IntN(5)))
	}
	texts := func(minWords, maxWords int) []string {
		var out []string
		for range 500 {
			out = append(out, phrase(minWords+r.IntN(maxWords-minWords+1)))
		}
		return out
	}
	best := func(h *Hash, docs []string) (mean, top float64) {
		dv := make([][]float32, len(docs))
		for i, d := range docs {
			dv[i] = h.Vector(d)
		}
		for _, q := range queries {
			qv := h.Vector(q)
			qw := strings.Fields(q)
			b := 0.0
			for i, d := range dv {
				if !slices.ContainsFunc(strings.Fields(docs[i]), func(w string) bool { return slices.Contains(qw, w) }) { // a shared word is no chance
					b = max(b, vectest.Dot(qv, d))
				}
			}
			mean += b / float64(len(queries))
			top = max(top, b)
		}
		return mean, top
	}
	v1, _ := NewHashModel(HashModelV1, 0)
	v2 := NewHash(0)
	short, long := texts(2, 11), texts(8, 60)
	m1, t1 := best(v1, short)
	m2, t2 := best(v2, short)
	t.Logf("best chance similarity of %d queries against %d texts of 2-11 words: v1 mean %.3f, max %.3f; v2 mean %.3f, max %.3f",
		len(queries), len(short), m1, t1, m2, t2)
	if m2 >= 0.8*m1 || t2 >= t1 {
		t.Errorf("v2 (mean %.3f, max %.3f) is not below v1 (mean %.3f, max %.3f)", m2, t2, m1, t1)
	}
	lm1, lt1 := best(v1, long)
	lm2, lt2 := best(v2, long)
	ms := MinSimilarity(HashModel, DefaultDim)
	t.Logf("against %d texts of 8-60 words: v1 mean %.3f, max %.3f; v2 mean %.3f, max %.3f; minimum %.3f", len(long), lm1, lt1, lm2, lt2, ms)
	if lt2 >= ms {
		t.Errorf("chance similarity %.3f reaches the minimum %.3f", lt2, ms)
	}
	if MinSimilarity(HashModelV1, DefaultDim) != 0 || MinSimilarity("text-embedding-3-small", 1536) != 0 {
		t.Error("a minimum for a model whose chance level is not known")
	}
}

func BenchmarkHashVector(b *testing.B) {
	h := NewHash(0)
	text := ""
	for i := 0; i < 40; i++ {
		text += "The loader writes every partition file under a temporary name and renames it when complete. "
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		h.Vector(text)
	}
}
