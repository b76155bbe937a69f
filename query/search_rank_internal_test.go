package query

import (
	"testing"

	"github.com/pos-lake/pos/schema"
)

// The fusion's weights decide which side's favourite comes first: a unit
// BM25 ranks first against one the vectors rank first.
func TestFuseWeights(t *testing.T) {
	lexFirst := candidate{id: "l", parent: "L", ctype: schema.ContentExchange, score: 10}
	vecFirst := candidate{id: "v", parent: "V", ctype: schema.ContentExchange, score: 0.9}
	vec := []candidate{vecFirst, {id: "l", parent: "L", ctype: schema.ContentExchange, score: 0.5}}
	lex := []candidate{lexFirst, {id: "v", parent: "V", ctype: schema.ContentExchange, score: 6}}
	for _, c := range []struct {
		name   string
		minSim float64
		f      Fusion
		first  string
	}{
		{"score, lexical-heavy", 0.25, Fusion{LexicalWeight: 0.9}, "L"},
		{"score, vector-heavy", 0.25, Fusion{LexicalWeight: 0.1}, "V"},
		{"rank, lexical-heavy", -1, Fusion{RankLexicalWeight: 0.9, RankK: 1}, "L"},
		{"rank, vector-heavy", -1, Fusion{RankLexicalWeight: 0.1, RankK: 1}, "V"},
	} {
		out := fuse(SearchHybrid, vec, lex, c.minSim, c.f)
		if len(out) != 2 || out[0].unit != c.first || out[0].Score > 1+1e-9 || out[1].Score > out[0].Score {
			t.Errorf("%s: %+v", c.name, out)
		}
	}
	// Zero fields are the defaults.
	if got := (Fusion{}).orDefault(); got != DefaultFusion {
		t.Errorf("defaults: %+v", got)
	}
}

// Near duplicates fold into the first of them, past the k kept too; what
// was said and what tools did are not compared with each other.
func TestCollapse(t *testing.T) {
	out1 := "FAIL github.com/x/app 0.412s\n--- FAIL: TestParse (0.01s)\n    parse_test.go:31: got 3 want 4\nexit status 1"
	out2 := "FAIL github.com/x/app 0.388s\n--- FAIL: TestParse (0.02s)\n    parse_test.go:31: got 3 want 4\nexit status 1"
	hit := func(ex, session, ctype, text string) SearchHit {
		return SearchHit{ExchangeID: ex, SessionID: session, Platform: "claude_code", ContentType: ctype, ChunkID: ex + "c", text: text}
	}
	hits := []SearchHit{
		hit("e1", "s1", schema.ContentToolError, out1),
		hit("e2", "s2", schema.ContentToolError, out2),                                   // the same failure, other timings
		hit("e3", "s2", schema.ContentExchange, out1),                                    // a reply quoting it
		hit("e1", "s1", schema.ContentExchange, "another chunk of e1"),                   // e1 again
		hit("e4", "s3", schema.ContentExchange, "how do I parse the config of the app?"), // different
		hit("e5", "s4", schema.ContentToolError, out1+"\n"),                              // past k, folded still
	}
	got := collapse(hits, 3)
	if len(got) != 3 || got[0].ExchangeID != "e1" || got[1].ExchangeID != "e3" || got[2].ExchangeID != "e4" {
		t.Fatalf("%+v", got)
	}
	if got[0].Duplicates != 2 || len(got[0].Similar) != 2 || got[0].Similar[0].ExchangeID != "e2" || got[0].Similar[1].ExchangeID != "e5" {
		t.Errorf("folded: %d %+v", got[0].Duplicates, got[0].Similar)
	}
	for i, h := range got {
		if h.Rank != i+1 || i > 0 && h.Duplicates != 0 {
			t.Errorf("hit %d: %+v", i, h)
		}
	}
	// Texts that share words but say other things stay apart.
	a := hit("a", "s", schema.ContentExchange, "run the tests of the parser package with the race detector on")
	b := hit("b", "s", schema.ContentExchange, "run the tests of the loader package without the race detector")
	if got := collapse([]SearchHit{a, b}, 10); len(got) != 2 {
		t.Errorf("different texts folded: %+v", got)
	}
}
