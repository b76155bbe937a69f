package schema

import (
	"slices"
	"strconv"
	"strings"
)

// MaxNesting is the deepest nesting of arrays and objects a native value
// may have to be kept as JSON in a record. A record nests it one level
// further, and the record's line then stays within what every reader of
// the stream and the lake takes: jq 1.6 stops at 256 levels, sonic at
// 4,095, encoding/json at 10,000; DuckDB has no limit. pos-extract keeps
// a deeper native line as a JSON string (Source.Altered "text").
const MaxNesting = 255

// Repairs are what pos changed in a native record to keep it as strict
// JSON that every reader of the lake takes. Source.Altered names them.
type Repairs uint8

const (
	RepairUTF8      Repairs = 1 << iota // invalid UTF-8 became U+FFFD
	RepairControl                       // a control character inside a string became a \u00XX escape
	RepairEscape                        // a backslash that starts no escape became an escaped backslash
	RepairSurrogate                     // a lone surrogate escape became \ufffd
	RepairText                          // nested more than MaxNesting levels: kept as one JSON string
)

var repairNames = []struct {
	r          Repairs
	word, what string
}{
	{RepairUTF8, "utf8", "invalid UTF-8 became U+FFFD"},
	{RepairControl, "control", `control characters became \u00XX escapes`},
	{RepairEscape, "escape", `backslashes that start no escape became \\`},
	{RepairSurrogate, "surrogate", `lone surrogate escapes became \ufffd`},
	{RepairText, "text", "nested deeper than " + strconv.Itoa(MaxNesting) + " levels: kept as one JSON string"},
}

// String is the value of Source.Altered: the repairs' names, in a fixed
// order, separated by commas ("utf8,surrogate"); "" for none.
func (r Repairs) String() string {
	var b []byte
	for _, n := range repairNames {
		if r&n.r != 0 {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = append(b, n.word...)
		}
	}
	return string(b)
}

// Describe says in words what was changed, for a diagnostic.
func (r Repairs) Describe() string {
	var b []byte
	for _, n := range repairNames {
		if r&n.r != 0 {
			if len(b) > 0 {
				b = append(b, "; "...)
			}
			b = append(b, n.what...)
		}
	}
	return string(b)
}

// AddRepairs adds r to what s.Altered names, keeping the names already
// there (a newer build's too).
func (s *Source) AddRepairs(r Repairs) {
	if r == 0 {
		return
	}
	if s.Altered == "" {
		s.Altered = r.String()
		return
	}
	have := strings.Split(s.Altered, ",")
	for w := range strings.SplitSeq(r.String(), ",") {
		if !slices.Contains(have, w) {
			have = append(have, w)
		}
	}
	s.Altered = strings.Join(have, ",")
}
