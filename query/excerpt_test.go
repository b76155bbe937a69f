package query_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/query"
)

const marker = "[REDACTED:github-pat:5f0c9a1e]"

// markersWhole fails unless every "[REDACTED:" in s starts a whole marker
// of want.
func markersWhole(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for i := 0; ; {
		k := strings.Index(s[i:], excerpt.MarkerPrefix)
		if k < 0 {
			return
		}
		i += k
		n := excerpt.MarkerLen(s[i:])
		if n == 0 || !contains(want, s[i:i+n]) {
			t.Fatalf("%s splits a marker: %q", what, s)
		}
		i += n
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A snippet holds a redaction marker whole or not at all, wherever its
// window starts or ends, and bolds it whole.
func TestSnippetKeepsMarkersWhole(t *testing.T) {
	words := strings.Fields("one two three four five six seven eight nine ten eleven twelve")
	for before := 0; before <= len(words); before++ {
		for after := 0; after <= 3; after++ {
			text := strings.Join(words[:before], " ") + " " + marker + " " + strings.Join(words[:after], " ") + " deploy now please"
			for n := 1; n <= 14; n++ {
				for _, terms := range [][]string{{"deploy"}, {"github"}, {"pat"}, nil} {
					got := query.Snippet(text, terms, n)
					markersWhole(t, "snippet", strings.ReplaceAll(got, "**", ""), marker)
					if strings.Contains(got, "[REDACTED:**") || strings.Contains(got, "**-pat") {
						t.Fatalf("bold inside a marker: %q", got)
					}
				}
			}
		}
	}
	if got := query.Snippet("token "+marker+" leaked", []string{"github"}, 8); !strings.Contains(got, "**"+marker+"**") {
		t.Fatalf("a marker matching the query is bolded whole: %q", got)
	}
}

// A tool call's one-line summary cuts its argument beside a marker.
func TestToolCallSummaryKeepsMarkersWhole(t *testing.T) {
	for pad := 30; pad < 60; pad++ {
		in, _ := json.Marshal(map[string]string{"command": strings.Repeat("x", pad) + " " + marker + " && make"})
		s := query.ToolCall{Name: "Bash", Input: in}.String()
		markersWhole(t, "tool call summary", s, marker)
	}
}
