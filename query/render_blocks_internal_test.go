package query

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

func TestWriteBlocks(t *testing.T) {
	snippet := "…the **retry** loop now backs off with **exponential** delays between attempts, capped at thirty seconds, and the fetcher's tests cover the jitter…"
	blocks := []Block{
		{Head: []string{"0.57", "2 days ago", "exchange", "11111111-1111-4111-8111-111111111111"}, Title: "Add a retry to the fetcher", Texts: []Para{{S: snippet}}},
		{Head: []string{"0.31", "3 weeks ago", "plan", "22222222-2222-4222-8222-222222222222"}, Title: "", Texts: []Para{{S: "short"}}},
	}
	for _, tc := range []struct {
		width      int
		bold       bool
		titleAlone bool
	}{{120, false, false}, {80, false, true}, {80, true, true}, {40, false, true}} {
		var out bytes.Buffer
		if err := writeBlocks(&out, blocks, tc.width, tc.bold); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		// The head is never cut (a session id must stay whole); every other
		// line fits the width.
		for _, l := range lines {
			shown := strings.NewReplacer("\x1b[1m", "", "\x1b[22m", "").Replace(l)
			if w := runewidth.StringWidth(shown); w > tc.width && !strings.Contains(l, "-4111-") && !strings.Contains(l, "-4222-") {
				t.Errorf("width %d: line of %d columns: %q", tc.width, w, l)
			}
		}
		if !strings.HasPrefix(lines[0], "0.57  2 days ago   exchange  11111111-1111-4111-8111-111111111111") {
			t.Errorf("width %d: head %q", tc.width, lines[0])
		}
		if got := strings.Contains(lines[0], "Add a retry"); got == tc.titleAlone {
			t.Errorf("width %d: title on the first line = %v: %q", tc.width, got, lines[0])
		}
		if tc.titleAlone && !strings.HasPrefix(lines[1], hitIndent+"Add a retry") {
			t.Errorf("width %d: title line %q", tc.width, lines[1])
		}
		if tc.bold {
			if !strings.Contains(s, "\x1b[1mretry\x1b[22m") || strings.Contains(s, "**") {
				t.Errorf("bold: %q", s)
			}
		} else if !strings.Contains(s, "**retry**") || strings.Contains(s, "\x1b[") {
			t.Errorf("plain: %q", s)
		}
		// The snippet is all there, in order, whatever the width.
		var words []string
		for _, l := range lines {
			if strings.HasPrefix(l, hitIndent) && !strings.Contains(l, "Add a retry") {
				words = append(words, strings.Fields(l)...)
			}
		}
		want := strings.Fields(snippet + " short")
		got := strings.Join(words, " ")
		if tc.bold {
			got = strings.NewReplacer("\x1b[1m", "**", "\x1b[22m", "**").Replace(got)
		}
		if got != strings.Join(want, " ") {
			t.Errorf("width %d: snippet words\n got %q\nwant %q", tc.width, got, strings.Join(want, " "))
		}
		if !strings.Contains(s, "\n\n0.31  3 weeks ago  plan      22222222-2222-4222-8222-222222222222\n    short\n") {
			t.Errorf("width %d: second block: %q", tc.width, s)
		}
	}
}

func TestEmphasis(t *testing.T) {
	for in, want := range map[string]string{
		"a **b** c":          "a \x1b[1mb\x1b[22m c",
		"x.ex:25:**guard**`": "x.ex:25:\x1b[1mguard\x1b[22m`",
		"odd ** marker":      "odd ** marker",
		"none":               "none",
	} {
		if got := emphasis(in, true); got != want {
			t.Errorf("emphasis(%q) = %q, want %q", in, got, want)
		}
		if got := emphasis(in, false); got != in {
			t.Errorf("emphasis(%q, plain) = %q", in, got)
		}
	}
}

// A paragraph with a line limit is cut there, its last line ending in "…".
func TestWriteBlocksLineLimit(t *testing.T) {
	long := strings.Repeat("word ", 40)
	var out bytes.Buffer
	b := Block{Head: []string{"#1"}, Texts: []Para{{Prefix: "  > ", S: long, Max: 2}, {S: "after"}}}
	if err := writeBlocks(&out, []Block{b}, 40, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "#1" || !strings.HasPrefix(lines[1], "  > word") ||
		!strings.HasSuffix(lines[2], "word …") || lines[3] != hitIndent+"after" {
		t.Errorf("got:\n%s", out.String())
	}
}
