package query

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/pricing"
)

// The columns a terminal's table shows of each result, as "name" or
// "name:header" (see Output.Table); json, ndjson and csv have them all.

// Sessions writes sessions, the most recently active first.
func (o *Output) Sessions(ss []Session) error {
	return o.Table(TableOf(ss),
		[]string{"last_ts:last active|last", "session_id:session", "platform", "exchange_count:turns", "output_tokens:out tokens|out", "project", "title"},
		[]string{"platform", "exchange_count", "output_tokens"},
		"title", "project")
}

// Files writes the sessions that touched a file.
func (o *Output) Files(fs []FileSession) error {
	return o.Table(TableOf(fs), []string{"last_ts:last touched|last", "session_id:session", "platform", "actions", "paths", "title"},
		[]string{"platform", "actions"}, "title", "paths")
}

// Decisions writes decisions with the prompts they answered.
func (o *Output) Decisions(ds []Decision) error {
	return o.Table(TableOf(ds), []string{"ts:when", "confidence", "text:decision", "context:asked", "title"}, nil,
		"text", "context", "title")
}

// Timeline writes a timeline's entries.
func (o *Output) Timeline(tl []TimelineEntry) error {
	return o.Table(TableOf(tl),
		[]string{"ts:when", "kind", "session_id:session", "exchange_number:#", "title", "prompt", "input_tokens:in tokens|in", "output_tokens:out tokens|out", "project"},
		[]string{"project", "input_tokens", "output_tokens"},
		"title", "prompt", "project", "session_id")
}

// Capabilities writes what each platform supports beside what the lake
// holds for it.
func (o *Output) Capabilities(caps []PlatformCapabilities) error {
	flags := []string{"exchanges", "timestamps", "tokens", "cost", "models", "tool_calls", "file_context", "subagents", "incremental"}
	t := TableOf(caps)
	if o.Format == FormatTable {
		// "part" keeps the nine yes/part/no columns within 80 columns.
		for _, row := range t.Rows {
			for i, col := range t.Columns {
				if v, ok := row[i].(string); ok && v == "partial" && slices.Contains(flags, col.Name) {
					row[i] = "part"
				}
			}
		}
	}
	return o.Table(t, []string{"platform", "exchanges:exchanges|exch", "timestamps:timestamps|ts", "tokens:tokens|tok", "cost", "models:models|model",
		"tool_calls:tools", "file_context:files", "subagents:subagents|sub", "incremental:incremental|incr", "messages:messages|msgs", "sessions:sessions|sess",
		"exact_ts_pct:exact ts %|ts %", "with_tokens_pct:tokens %|tok %", "with_model_pct:model %|mod %", "full_sessions_pct:full sessions %|full %"},
		[]string{"full_sessions_pct", "with_model_pct", "with_tokens_pct", "exact_ts_pct", "sessions", "messages"},
		flags...)
}

// NoModel names, in tables and notes, the model of messages that name
// none.
const NoModel = "(no model)"

// Stats writes token statistics grouped by the keys by, after their
// notes. A note of models without a price goes to Err whatever the
// format: a cost left out must not go unnoticed.
func (o *Output) Stats(st *StatsResult, by []string) error {
	for _, n := range st.Notes {
		if len(st.Unpriced) > 0 && strings.HasPrefix(n, "unknown model") {
			o.Notef("%s", n)
			continue
		}
		o.Note("%s", n)
	}
	// Headers as "long|short": a narrow terminal gets the short ones.
	cols := append(slices.Clip(by), "messages:messages|msgs", "sessions:sessions|sess", "input_tokens:in tokens|in", "output_tokens:out tokens|out",
		"cache_creation_tokens:cache write|cache w", "cache_read_tokens:cache read|cache r", "cost:cost $|$")
	if len(st.Unpriced) > 0 {
		cols = append(cols, "unpriced_messages:unpriced")
	}
	t := st.Table()
	if o.Format == FormatTable {
		// A row without a model (a platform that records none, such as
		// Cursor) is named, never blank: a blank cell reads as a missing
		// value. Machine formats keep "".
		if i := slices.Index(by, "model"); i >= 0 {
			for _, row := range t.Rows {
				if row[i] == "" {
					row[i] = NoModel
				}
			}
		}
	}
	if o.Format == FormatTable && len(by) > 0 && len(st.Rows) > 1 {
		// A table ends with the total of its rows, whose other keys are
		// blank; json, ndjson and csv keep one row per group.
		t.Rows = append(t.Rows, st.TotalRow())
	}
	if o.Format == FormatTable {
		// Tables round numbers to cents; a day of a cheap model costs less.
		for i, c := range t.Columns {
			if strings.HasSuffix(c.Name, "cost") {
				t.Columns[i].Type = "DECIMAL(18,4)" // right-aligned, never cut
				for _, row := range t.Rows {
					if v, ok := row[i].(float64); ok {
						row[i] = strconv.FormatFloat(v, 'f', 4, 64)
					}
				}
			}
		}
	}
	// Narrow, the model or project keeps its width before these do.
	optional := []string{"unpriced_messages", "sessions", "messages", "cache_creation_tokens", "cache_read_tokens"}
	return o.Table(t, cols, optional, "project", "model", "session")
}

// Prices writes a price table (USD per million tokens); a table is
// preceded on Err by the prices' date, override files and sources. Only
// Width of the table options applies.
func (o *Output) Prices(prices *pricing.Table) error {
	t := &Table{}
	for _, n := range []string{"model", "provider", "aliases"} {
		t.Columns = append(t.Columns, Column{Name: n, Type: "VARCHAR"})
	}
	for _, n := range []string{"input", "output", "cache_write_5m", "cache_write_1h", "cache_read"} {
		t.Columns = append(t.Columns, Column{Name: n, Type: "DOUBLE"})
	}
	t.Columns = append(t.Columns, Column{Name: "long_context", Type: "VARCHAR"})
	for _, m := range prices.Models() {
		lc := ""
		if l := m.LongContext; l != nil {
			lc = fmt.Sprintf("above %d: %g/%g/%g/%g/%g", l.Above, l.Input, l.Output, l.CacheWrite5m, l.CacheWrite1h, l.CacheRead)
			if !l.Until.IsZero() {
				lc += " until " + l.Until.Format(time.DateOnly)
			}
		}
		row := []any{m.Name, m.Provider, strings.Join(m.Aliases, " ")}
		for _, v := range []float64{m.Input, m.Output, m.CacheWrite5m, m.CacheWrite1h, m.CacheRead} {
			if o.Format == FormatTable {
				row = append(row, strconv.FormatFloat(v, 'g', -1, 64)) // tables round numbers to cents
			} else {
				row = append(row, v)
			}
		}
		t.Rows = append(t.Rows, append(row, lc))
	}
	if o.Format == FormatTable {
		fmt.Fprintf(o.Err, "%s: prices of %s (USD per million tokens), overrides %v; sources:\n", o.Name, prices.Updated, prices.Files)
		for _, s := range prices.Sources {
			fmt.Fprintf(o.Err, "  - %s\n", s)
		}
	}
	return Write(o.W, o.Format, t, WriterOptions{Width: o.Width})
}

// scrubRow is a row of a scrub status: how many rows of a table carry a
// scrub mark.
type scrubRow struct {
	Table string `json:"table"`
	Scrub string `json:"scrub"`
	Rows  *int64 `json:"rows"` // nil: not known
}

// Status writes, table by table, how many of the lake's rows were loaded
// with each scrub mark, and notes a lake scrubbed whole.
func (o *Output) Status(st *ScrubStatus) error {
	var rows []scrubRow
	for _, t := range slices.Sorted(maps.Keys(st.Tables)) {
		for _, m := range slices.Sorted(maps.Keys(st.Tables[t])) {
			r := scrubRow{Table: t, Scrub: m}
			if m != load.ScrubUnknown && m != load.ScrubDeclared {
				n := st.Tables[t][m]
				r.Rows = &n
			}
			rows = append(rows, r)
		}
	}
	if err := o.Table(TableOf(rows), nil, nil); err != nil {
		return err
	}
	if st.Scrubbed() {
		o.Note("every row was scrubbed of secrets")
	}
	return nil
}

// ScrubWarning tells on Err, whatever the format, of a lake holding rows
// whose secrets may be in clear, and what to do.
func (o *Output) ScrubWarning(st *ScrubStatus, err error) {
	if err != nil {
		fmt.Fprintf(o.Err, "%s: warning: %v\n", o.Name, err)
		return
	}
	if st.Warning != "" {
		fmt.Fprintf(o.Err, "%s: warning: %s\n%s: hint: %s\n", o.Name, st.Warning, o.Name, st.Hint)
	}
}
