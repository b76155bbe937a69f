package mcpserver

import (
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/excerpt"
)

// recent_turns' max_chars cuts beside a redaction marker, never inside.
func TestCutKeepsMarkersWhole(t *testing.T) {
	const m = "[REDACTED:aws-access-token:0123abcd]"
	text := "deploy with " + m + " then check the logs"
	for n := 1; n < len(text); n++ {
		got := cut(text, n)
		body, _, _ := strings.Cut(got, " … [")
		if a, _, ok := excerpt.Around(text, len(body)); ok && strings.HasPrefix(text, body) {
			t.Fatalf("cut(%d) = %q splits the marker at %d", n, got, a)
		}
		if strings.Contains(body, "[REDACTED") && !strings.Contains(body, m) {
			t.Fatalf("cut(%d) = %q", n, got)
		}
	}
}
