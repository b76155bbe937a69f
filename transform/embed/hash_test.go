package embed

import (
	"context"
	"math"
	"testing"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashVectors(t *testing.T) {
	h := NewHash(0)
	if h.Dim() != DefaultDim || h.Model() != HashModel {
		t.Fatalf("dim %d model %s", h.Dim(), h.Model())
	}
	a := h.Vector("The parquet writer flushes row groups to keep memory bounded")
	if len(a) != DefaultDim {
		t.Fatalf("len %d", len(a))
	}
	if n := math.Sqrt(dot(a, a)); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm %v", n)
	}
	again := h.Vector("The parquet writer flushes row groups to keep memory bounded")
	if dot(a, again) < 0.99999 {
		t.Error("not deterministic")
	}
	near := h.Vector("flushing parquet row groups bounds the writer's memory")
	far := h.Vector("xterm scrollback inside tmux swallows mouse wheel events")
	if dn, df := dot(a, near), dot(a, far); dn <= df+0.2 {
		t.Errorf("related %.3f vs unrelated %.3f", dn, df)
	}
	// Inflections meet through stems and character grams.
	if s := dot(h.Vector("caching queries"), h.Vector("the query cache")); s < 0.3 {
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
