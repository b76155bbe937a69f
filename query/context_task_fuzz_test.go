package query

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/excerpt"
)

// FuzzCutTask checks the cut of a tracker's output on any text: the
// description within its bytes, at most trackerRelLines relation lines
// besides, each taken whole from the output, no redaction marker split,
// and valid UTF-8 when the output was.
func FuzzCutTask(f *testing.F) {
	f.Add("○ p-4 [EPIC] · Goal\nDESCRIPTION\n"+strings.Repeat("text of the goal\n", 80)+"CHILDREN\n  ↳ ○ p-4.1: one\n  ↳ ○ p-4.2: two [REDACTED:generic-api-key:0123abcd]\nBLOCKS\n  ← p-5\nOwner: x", 200)
	f.Add("children:\n- a\n- b\nparent\n↑ p-1", 10)
	f.Add(strings.Repeat("[REDACTED:aws-access-token:0123abcd] ", 40), 50)
	f.Fuzz(func(t *testing.T, output string, n int) {
		if n < 8 || n > 4096 {
			return
		}
		text := trackerText(output)
		got := cutTask(text, n)
		body, rel := got, ""
		lines := strings.Split(got, "\n")
		for i, l := range lines {
			if i > 0 && trackerRelRE().MatchString(strings.TrimSpace(l)) && len(got) > n {
				body, rel = strings.Join(lines[:i], "\n"), strings.Join(lines[i:], "\n")
				break
			}
		}
		if len(text) > n && len(body) > n {
			t.Fatalf("description of %d bytes over %d:\n%q", len(body), n, got)
		}
		if rel != "" {
			relLines := strings.Split(rel, "\n")
			if len(relLines) > trackerRelLines+1 {
				t.Fatalf("%d relation lines", len(relLines))
			}
			for _, l := range relLines {
				if l != "…" && !strings.Contains(text, strings.TrimSpace(l)) {
					t.Fatalf("relation line %q not in the output", l)
				}
			}
		}
		// When every "[REDACTED:" of the output starts a whole marker, so
		// does every one of the cut.
		if wholeMarkers(text) && !wholeMarkers(got) {
			t.Fatalf("a redaction marker split in %q", got)
		}
		if utf8.ValidString(output) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
	})
}

// wholeMarkers tells whether every "[REDACTED:" in s starts a whole
// redaction marker.
func wholeMarkers(s string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], excerpt.MarkerPrefix)
		if j < 0 {
			return true
		}
		if excerpt.MarkerLen(s[i+j:]) == 0 {
			return false
		}
		i += j + 1
	}
}
