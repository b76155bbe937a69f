package query

import (
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/lexdb"
)

// BenchmarkOutwardTerms measures the translation out of English of a
// question over Debian's dictionaries (mueller7-dict,
// dict-freedict-eng-rus): the first question's (opening them, as a cold
// CLI does) and each one's after.
//
//	go test -run '^$' -bench BenchmarkOutwardTerms ./query
func BenchmarkOutwardTerms(b *testing.B) {
	if !lexdb.New(lexdb.Dir).Has("ru") {
		b.Skip("no dictionary from English into Russian in", lexdb.Dir)
	}
	qs := []string{
		"recolor the glyphs from the stylesheet instead of editing the graphics",
		"drop unneeded build-tool add-ons from the dependency manifest",
		"hold out a fifth of the rows for evaluation",
		"why does the login page refuse a valid password",
	}
	f := Feedback{}.withDefaults()
	xlMu.Lock()
	if xl != nil {
		xl.Close()
		xl = nil
	}
	xlMu.Unlock()
	start := time.Now()
	outwardTerms(qs[0], nil, f)
	first := time.Since(start)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		outwardTerms(qs[i%len(qs)], nil, f)
	}
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
}

// TestOutwardTermsBounded: each translation names the term of the word it
// translates, which bounds its IDF once the query has both.
func TestOutwardTermsBounded(t *testing.T) {
	idf := []float64{0.5, 3, 2.5}
	capIDF(idf, map[int]int{1: 0, 2: 1, 7: 0})
	if idf[0] != 0.5 || idf[1] != 0.5 || idf[2] != 2.5 {
		t.Errorf("bounded IDF: %v (the second by the first, the third by the second's own 3)", idf)
	}
	lq := newLexQuery("colour")
	lq = lq.with(map[string]float64{"цвет": 1})
	lq.capBy(map[string]string{"цвет": "colour", "окраск": "colour"}) // окраск is not a term of the query
	v := lq.versions[len(lq.versions)-1]
	var own, tr int = -1, -1
	for i, t := range v.terms {
		switch t.Text {
		case "colour":
			own = v.offset + i
		case "цвет":
			tr = v.offset + i
		}
	}
	if own < 0 || tr < 0 || lq.caps[tr] != own || len(lq.caps) != 1 {
		t.Errorf("caps %v: want цвет (%d) bounded by colour (%d) only", lq.caps, tr, own)
	}
	// The second pass's query keeps the bound.
	if lq2 := lq.with(map[string]float64{"theme": 0.5}); lq2.caps[tr] != own {
		t.Errorf("the feedback pass lost the bound: %v", lq2.caps)
	}
}
