package teamlake

import (
	"strings"
	"testing"

	"github.com/pos-lake/pos/load"
)

// A table is refused without PII when a row of it may hold a secret: never
// scrubbed, of unknown scrubbing, scrubbed with --off, or not in the
// state; declared and scrubbed rows pass, and the weakest mark is the one
// rows without their own are counted under.
func TestScrubCheck(t *testing.T) {
	st := &load.ScrubState{Tables: map[string]map[string]int64{
		"a": {"secrets": 4, "pii": 1}, "b": {"secrets": 4, "declared": 0}, "c": {"secrets": 4, "none": 2},
		"d": {"unknown": 0}, "e": {"off": 3, "pii": 1},
	}}
	for _, tc := range []struct{ table, weakest, err string }{
		{"a", "secrets", ""}, {"b", "declared", ""}, {"c", "", "2 rows never scrubbed"},
		{"d", "", "rows of unknown scrubbing"}, {"e", "", "3 rows not scrubbed (pos-scrub --off)"},
		{"f", "", "rows of unknown scrubbing"},
	} {
		w, err := checkScrubbed(st, tc.table, false)
		if w != tc.weakest || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %q, %v; want %q, %q", tc.table, w, err, tc.weakest, tc.err)
		}
		if _, err := checkScrubbed(st, tc.table, true); err != nil {
			t.Errorf("%s with PII: %v", tc.table, err)
		}
	}
}
