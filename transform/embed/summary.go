package embed

import (
	"fmt"

	"github.com/pos-lake/pos/internal/english"
)

// Add adds the counts of s to t: the totals of a run over several inputs.
func (t *Stats) Add(s Stats) {
	t.add(s)
	t.BadLines += s.BadLines
}

// Summary says what a run wrote and how its vectors were made, on one line,
// for a person (pos-embed prints it on stderr); model names the provider's
// model.
func (t Stats) Summary(model string, dim int) string {
	if dim > 0 {
		model = fmt.Sprintf("%s (%d-d)", model, dim)
	}
	return fmt.Sprintf("%d records in, %d out: %s from %s; vectors: %d computed, %d reused, %d skipped (units with no text); model %s",
		t.In, t.Out, english.Plural(int(t.Chunks), "chunk"), english.Plural(int(t.Units), "unit"), t.Computed, t.Reused, t.Skipped, model)
}
