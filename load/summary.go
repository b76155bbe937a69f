package load

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
)

// Summary says what a load did, on one line, for a person (pos-load prints
// it on stderr): rows per table, duplicates, files and watermarks.
func (st Stats) Summary() string {
	var parts []string
	for _, t := range layout.Tables {
		if n := st.Rows[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, n))
		}
	}
	slices.Sort(parts)
	rows := "no new rows"
	if len(parts) > 0 {
		rows = strings.Join(parts, ", ")
	}
	compacted := ""
	if st.Compacted > 0 {
		compacted = fmt.Sprintf(" (%s compacted: %d small files merged)", english.Plural(st.Compacted, "partition"), st.Merged)
	}
	return fmt.Sprintf("%d records in: %s; %d unchanged, %d new versions; %s%s, %d watermarks committed",
		st.In, rows, st.Duplicates, st.Versions, english.Plural(st.Files, "file"), compacted, st.Checkpoints)
}

// Warnings are the lines that say what a load that succeeded left undone
// (each "warning: …" or "hint: …"): its files are complete either way.
func (st Stats) Warnings() []string {
	var w []string
	if st.CompactErr != nil {
		w = append(w, fmt.Sprintf("warning: partition not compacted (its files are complete; a later load tries again): %v", st.CompactErr))
	}
	if st.SearchIndexErr != nil {
		w = append(w, fmt.Sprintf("warning: search index not updated (search reads the chunks files' sidecars one by one until a later load updates it): %v", st.SearchIndexErr))
	}
	if st.RollupErr != nil {
		w = append(w, fmt.Sprintf("warning: usage rollup not updated (pos-query stats reads the messages instead until the next load updates it): %v", st.RollupErr))
	}
	if st.CatalogErr != nil {
		w = append(w, fmt.Sprintf("warning: %s not refreshed: %v", catalog.CatalogFile, st.CatalogErr),
			"hint: close other programs using it; the Parquet files are complete and pos-query does not need it")
	}
	return w
}

// plural formats a count with its noun (a noun whose plural takes an s).
