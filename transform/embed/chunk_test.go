package embed

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/excerpt"
)

func TestChunkerShortText(t *testing.T) {
	c := Chunker{MaxTokens: 100, Overlap: 10}
	if got := c.Split("  \n\t "); got != nil {
		t.Fatalf("blank text: %v", got)
	}
	text := "Fix the parser. Then run the tests."
	got := c.Split(text)
	if len(got) != 1 || text[got[0].Start:got[0].End] != text {
		t.Fatalf("short text: %+v", got)
	}
}

func TestChunkerBoundsAndOverlap(t *testing.T) {
	var b strings.Builder
	for p := 0; p < 12; p++ {
		for s := 0; s < 6; s++ {
			fmt.Fprintf(&b, "The loader writes partition file %d of run %d under a temporary name. ", s, p)
		}
		b.WriteString("\n\n")
	}
	text := b.String()
	c := Chunker{MaxTokens: 120, Overlap: 20}
	spans := c.Split(text)
	if len(spans) < 5 {
		t.Fatalf("want several chunks, got %d", len(spans))
	}
	for i, sp := range spans {
		if n := EstimateTokens(text[sp.Start:sp.End]); n > 120 || n != sp.Tokens {
			t.Errorf("chunk %d: %d tokens (span says %d)", i, n, sp.Tokens)
		}
		if i > 0 {
			prev := spans[i-1]
			if sp.Start >= prev.End {
				t.Errorf("chunk %d does not overlap the one before (%d >= %d)", i, sp.Start, prev.End)
			}
			if sp.Start <= prev.Start {
				t.Errorf("chunk %d does not advance", i)
			}
		}
	}
	if last := spans[len(spans)-1]; strings.TrimSpace(text[last.End:]) != "" {
		t.Errorf("text after the last chunk: %q", text[last.End:])
	}
	// Chunks end at sentence ends when they cannot end at a paragraph.
	for i, sp := range spans[:len(spans)-1] {
		if !strings.HasSuffix(text[sp.Start:sp.End], ".") {
			t.Errorf("chunk %d ends mid-sentence: …%q", i, text[max(sp.Start, sp.End-20):sp.End])
		}
	}
}

func TestChunkerPrefersParagraphs(t *testing.T) {
	para := strings.Repeat("alpha beta gamma delta. ", 20) // about 120 tokens
	text := para + "\n\n" + para + "\n\n" + para
	spans := Chunker{MaxTokens: 300, Overlap: 0}.Split(text)
	if len(spans) != 2 {
		t.Fatalf("want 2 chunks, got %d", len(spans))
	}
	if got := text[spans[0].Start:spans[0].End]; !strings.HasSuffix(got, "delta.") || strings.Count(got, "\n\n") != 1 {
		t.Errorf("first chunk should be the first two paragraphs: %d bytes", len(got))
	}
}

func TestChunkerLongRunsAndCJK(t *testing.T) {
	var hex strings.Builder // one "word" of ~1250 tokens, nowhere repeated
	for i := 0; hex.Len() < 5000; i++ {
		fmt.Fprintf(&hex, "%08x", uint32(i)*2654435761)
	}
	blob := hex.String()
	spans := Chunker{MaxTokens: 100, Overlap: 10}.Split(blob)
	if len(spans) < 10 {
		t.Fatalf("a long run must be cut: %d chunks", len(spans))
	}
	cjk := strings.Repeat("最新の状態にアップデートしてください", 40)
	for _, sp := range (Chunker{MaxTokens: 64, Overlap: 8}).Split(cjk) {
		if n := EstimateTokens(cjk[sp.Start:sp.End]); n > 64 {
			t.Errorf("CJK chunk of %d tokens", n)
		}
	}
}

// A chunk boundary never falls inside a redaction marker, even in a long
// run of non-space characters that has to be cut.
func TestChunkerKeepsMarkersWhole(t *testing.T) {
	const marker = "[REDACTED:aws-access-token:0123abcd]"
	for pad := 0; pad < 120; pad += 3 {
		var b strings.Builder
		for i := 0; b.Len() < 6000; i++ {
			fmt.Fprintf(&b, "%x", uint32(i+pad)*2654435761)
			if i%7 == 3 {
				b.WriteString(marker)
			}
		}
		text := strings.Repeat("y", pad) + b.String()
		spans := Chunker{MaxTokens: 64, Overlap: 8}.Split(text)
		if len(spans) < 4 {
			t.Fatalf("pad %d: %d chunks", pad, len(spans))
		}
		for _, sp := range spans {
			for _, at := range []int{sp.Start, sp.End} {
				if a, _, ok := excerpt.Around(text, at); ok {
					t.Fatalf("pad %d: a chunk boundary at %d is inside the marker at %d", pad, at, a)
				}
			}
		}
	}
}

// A huge text gives at most MaxChunks distinct chunks: its head, its tail
// and parts from between; repeated content is indexed once.
func TestChunkerHugeText(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 8<<20; i++ {
		fmt.Fprintf(&b, "line %d of the build log: compiled package p%d in %d ms.\n", i, i%97, i%1013)
	}
	text := "HEAD-MARK the log starts here.\n" + b.String() + "TAIL-MARK the log ends here."
	c := Chunker{MaxTokens: 400, Overlap: 50, MaxChunks: 32}
	spans := c.Split(text)
	if len(spans) != 32 {
		t.Fatalf("%d chunks, want 32", len(spans))
	}
	if !strings.Contains(text[spans[0].Start:spans[0].End], "HEAD-MARK") || !strings.Contains(text[spans[31].Start:spans[31].End], "TAIL-MARK") {
		t.Fatal("the head or the tail is not indexed")
	}
	seen := map[string]bool{}
	for i, sp := range spans {
		s := text[sp.Start:sp.End]
		if seen[s] {
			t.Fatalf("chunk %d repeats an earlier one", i)
		}
		seen[s] = true
		if i > 0 && sp.Start <= spans[i-1].Start {
			t.Fatalf("chunk %d is out of order", i)
		}
	}
	// The middle of the text is sampled: some chunks come from each tenth.
	var tenths [10]int
	for _, sp := range spans {
		tenths[sp.Start*10/len(text)]++
	}
	for i, n := range tenths {
		if n == 0 {
			t.Fatalf("no chunk from tenth %d of the text: %v", i, tenths)
		}
	}
	// The same paragraph a thousand times is a few chunks: the first, the
	// repeated middle and the last.
	para := "The deploy failed because the token expired; renew it and retry.\n\n"
	if n := len(c.Split(strings.Repeat(para, 1000))); n > 3 {
		t.Fatalf("repeated content: %d chunks", n)
	}
}
