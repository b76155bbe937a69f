package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
)

// What the lake knows of how its rows were scrubbed: pos-scrub marks every
// record it writes (schema.ScrubField), and pos-load keeps, per table, how
// many rows it loaded with each mark in <lake>/_state/scrub.json. A mark is
// recorded there before any file holding a row with it is put in place, so
// the file never claims less than the lake holds.

const scrubStateFile = "scrub.json"

// Marks of rows that carry none of pos-scrub's.
const (
	// ScrubNone: the record never passed pos-scrub.
	ScrubNone = "none"
	// ScrubUnknown: rows a build loaded before records were marked: the
	// lake cannot tell whether pos-scrub saw them.
	ScrubUnknown = "unknown"
	// ScrubDeclared: rows of ScrubUnknown that the user declared scrubbed
	// (pos-load --declare-scrubbed).
	ScrubDeclared = "declared"
)

// scrubTables are the tables records are loaded into (postings and
// summaries are derived from the chunks and exchanges).
var scrubTables = []string{layout.TableRaw, layout.TableMessages, layout.TableExchanges, layout.TableSessions, layout.TableDocuments, layout.TableDecisions, layout.TableFileRefs, layout.TableChunks, layout.TableOther}

// ScrubState is the content of <lake>/_state/scrub.json.
type ScrubState struct {
	Version int `json:"version"`
	// Tables counts, per table, the rows loaded with each mark: a
	// schema.Scrub* value, ScrubNone, ScrubUnknown (count 0: not known)
	// or ScrubDeclared.
	Tables map[string]map[string]int64 `json:"tables"`
}

// ErrNotScrubbed is wrapped by the error Add returns under
// Options.RequireScrubbed for a record that pos-scrub did not scrub.
var ErrNotScrubbed = errors.New("not scrubbed")

// ReadScrubState returns what the lake records of its rows' scrubbing. A
// lake that records nothing yet but holds data has its tables' rows
// ScrubUnknown; an empty lake, no table.
func ReadScrubState(lake string) (*ScrubState, error) {
	st := &ScrubState{Version: 1, Tables: map[string]map[string]int64{}}
	b, err := os.ReadFile(filepath.Join(lake, "_state", scrubStateFile))
	switch {
	case err == nil:
		if err := json.Unmarshal(b, st); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(lake, "_state", scrubStateFile), err)
		}
		if st.Tables == nil {
			st.Tables = map[string]map[string]int64{}
		}
		return st, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	for _, t := range scrubTables {
		if layout.HasParquet(layout.TableDir(lake, t)) {
			st.Tables[t] = map[string]int64{ScrubUnknown: 0}
		}
	}
	return st, nil
}

// WriteScrubState writes st as the lake's scrub record, for a program that
// puts a lake's rows in place other than through a Loader (a cache fetched
// from a shared lake).
func WriteScrubState(lake string, st *ScrubState) error { return writeScrubState(lake, st) }

func writeScrubState(lake string, st *ScrubState) error {
	b, _ := json.MarshalIndent(st, "", " ")
	return atomicfile.Write(filepath.Join(lake, "_state", scrubStateFile), b)
}

// Unscrubbed returns, per table, the rows whose secrets were not redacted
// (marks ScrubNone and schema.ScrubOff), and the tables whose rows may not
// have been (ScrubUnknown): what a reader of the lake must be warned of.
func (st *ScrubState) Unscrubbed() (rows map[string]int64, unknown []string) {
	rows = map[string]int64{}
	for _, t := range slices.Sorted(maps.Keys(st.Tables)) {
		m := st.Tables[t]
		if n := m[ScrubNone] + m[schema.ScrubOff]; n > 0 || hasKey(m, ScrubNone) || hasKey(m, schema.ScrubOff) {
			rows[t] = n
		}
		if hasKey(m, ScrubUnknown) {
			unknown = append(unknown, t)
		}
	}
	return rows, unknown
}

// Off reports whether the not scrubbed rows are all so by the user's choice
// (pos-scrub --off), none for want of pos-scrub.
func (st *ScrubState) Off() bool {
	for _, m := range st.Tables {
		if hasKey(m, ScrubNone) {
			return false
		}
	}
	return true
}

// Summary describes the marks of every table in one line: "raw: 98
// secrets, 3 none; messages: …".
func (st *ScrubState) Summary() string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(st.Tables)) {
		var ms []string
		for _, k := range slices.Sorted(maps.Keys(st.Tables[t])) {
			if k == ScrubUnknown {
				ms = append(ms, "rows of unknown scrubbing")
				continue
			}
			ms = append(ms, fmt.Sprintf("%d %s", st.Tables[t][k], k))
		}
		parts = append(parts, t+": "+strings.Join(ms, ", "))
	}
	return strings.Join(parts, "; ")
}

func hasKey(m map[string]int64, k string) bool {
	_, ok := m[k]
	return ok
}

// scrubMark is the mark a record is accounted under.
func scrubMark(rec *schema.Record) string {
	if m := rec.ScrubMark(); m != "" {
		return m
	}
	return ScrubNone
}

// checkScrubbed returns the error for a record --require-scrubbed refuses.
func (l *Loader) checkScrubbed(rec *schema.Record) error {
	if !l.opt.RequireScrubbed || rec.Kind == schema.KindCheckpoint {
		return nil
	}
	m := rec.ScrubMark()
	if schema.Scrubbed(m) {
		return nil
	}
	what := "no pos-scrub mark"
	if m != "" {
		what = fmt.Sprintf("pos-scrub mark %q", m)
	}
	name := l.input
	if name == "" {
		name = "-"
	}
	id := rec.ID
	if id == "" {
		id = "without id"
	}
	return &schema.BadInput{Path: name, Key: fmt.Sprintf("record %d (%s %s)", l.stats.In-l.inputStart, rec.Kind, id),
		Err: fmt.Errorf("%w (%s): --require-scrubbed refuses it; put pos-scrub before pos-load (pos-extract | pos-normalize | pos-scrub | pos-load)", ErrNotScrubbed, what)}
}

// noteScrub accounts a row of table loaded with mark, recording the mark
// in the lake's state before any file holding such a row is in place.
func (l *Loader) noteScrub(table, mark string) error {
	l.vmu.Lock()
	defer l.vmu.Unlock()
	m := l.scrub.Tables[table]
	if m == nil {
		m = map[string]int64{}
		l.scrub.Tables[table] = m
	}
	if l.scrubRun[table] == nil {
		l.scrubRun[table] = map[string]int64{}
	}
	l.scrubRun[table][mark]++
	if hasKey(m, mark) {
		m[mark]++
		return nil
	}
	m[mark] = 1
	return writeScrubState(l.opt.Lake, l.scrub)
}

// openScrubState reads the lake's scrub state for the run and, with
// Options.DeclareScrubbed, turns its rows of unknown scrubbing into
// declared ones.
func (l *Loader) openScrubState() error {
	st, err := ReadScrubState(l.opt.Lake)
	if err != nil {
		return err
	}
	l.scrub, l.scrubRun = st, map[string]map[string]int64{}
	if !l.opt.DeclareScrubbed {
		return nil
	}
	changed := false
	for _, m := range st.Tables {
		if hasKey(m, ScrubUnknown) {
			delete(m, ScrubUnknown)
			m[ScrubDeclared] = 0
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return writeScrubState(l.opt.Lake, st)
}
