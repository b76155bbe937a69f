package query

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pos-lake/pos/load"
)

// ScrubStatus is what the lake records of how its rows were scrubbed.
type ScrubStatus struct {
	// Tables counts, per table, the rows loaded with each mark: "secrets",
	// "pii" (pos-scrub, pos-scrub --pii), "off" (pos-scrub --off), "none"
	// (never passed pos-scrub), "unknown" (loaded by a pos that did not
	// record it; count 0), "declared" (such rows the user declared
	// scrubbed).
	Tables map[string]map[string]int64 `json:"tables"`
	// Unscrubbed counts, per table, the rows whose secrets were not
	// redacted (none and off).
	Unscrubbed map[string]int64 `json:"unscrubbed,omitempty"`
	// Unknown lists the tables holding rows of unknown scrubbing.
	Unknown []string `json:"unknown,omitempty"`
	// Warning and Hint say what a reader of the lake should know and do
	// ("" when every row was scrubbed).
	Warning string `json:"warning,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// ScrubStatus reads what the lake records of its rows' scrubbing.
func (d *DB) ScrubStatus() (*ScrubStatus, error) { return LakeScrubStatus(d.lake) }

// LakeScrubStatus is ScrubStatus for the lake at lake.
func LakeScrubStatus(lake string) (*ScrubStatus, error) {
	st, err := load.ReadScrubState(lake)
	if err != nil {
		return nil, err
	}
	s := &ScrubStatus{Tables: st.Tables}
	s.Unscrubbed, s.Unknown = st.Unscrubbed()
	rebuild := fmt.Sprintf("rebuild it scrubbed: mv %[1]s %[2]s && %[3]s --require-scrubbed, then delete %[2]s, which holds the secrets (histories deleted since are only in it)",
		shellQuote(lake), shellQuote(strings.TrimSuffix(lake, "/")+".unscrubbed"), BuildHint(lake))
	switch {
	case len(s.Unscrubbed) > 0 && !st.Off():
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(s.Unscrubbed)) {
			parts = append(parts, fmt.Sprintf("%s %d", t, s.Unscrubbed[t]))
		}
		s.Warning = fmt.Sprintf("the lake at %s holds rows loaded without pos-scrub (%s): any secret in them is stored in clear", lake, strings.Join(parts, ", "))
		s.Hint = rebuild
	case len(s.Unknown) > 0:
		s.Warning = fmt.Sprintf("the lake at %s was loaded by an older pos that did not record whether pos-scrub ran (%s): if it did not, secrets are stored in clear", lake, strings.Join(s.Unknown, ", "))
		s.Hint = fmt.Sprintf("if every load went through pos-scrub, say so: pos-load --lake %s --declare-scrubbed < /dev/null; else %s", shellQuote(lake), rebuild)
	}
	return s, nil
}

// Scrubbed reports whether every row of the lake had its secrets redacted
// (declared so, for rows loaded before records said).
func (s *ScrubStatus) Scrubbed() bool { return len(s.Unscrubbed) == 0 && len(s.Unknown) == 0 }
