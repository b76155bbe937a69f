package embed

import (
	"strings"
	"testing"
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
			b.WriteString("The loader writes every partition file under a temporary name. ")
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
	blob := strings.Repeat("x", 5000) // one "word" of ~1250 tokens
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
