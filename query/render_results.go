package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Recent writes the turns of a session after a note naming it: blocks on
// a terminal's table, a table otherwise. summary, when not nil, makes the
// summary shown above the turns (see RecentSummary).
func (o *Output) Recent(r *RecentResult, tools bool, summary func() (*Summary, error)) error {
	s := r.Session
	about := fmt.Sprintf("session %s (%s)", s.SessionID, s.Platform)
	if s.Title != "" {
		about += fmt.Sprintf(" %q", s.Title)
	}
	if s.Project != "" {
		about += " in " + s.Project
	}
	o.Note("%s", about)
	cols := []string{"exchange_number:#", "ts:when", "prompt", "response", "tools", "output_tokens:out tokens"}
	if tools {
		cols[4] = "tool_calls:tools"
	}
	for _, t := range r.Turns {
		if t.AgentID != "" {
			cols = append([]string{"agent_id:agent"}, cols...)
			break
		}
	}
	printTurns := func() error {
		if o.Format == FormatTable {
			return o.Blocks(TurnBlocks(r.Turns, tools, o.Now))
		}
		return o.Table(r.Table(), cols, nil, "prompt", "response", "tools", "tool_calls")
	}
	if summary == nil {
		return printTurns()
	}
	sum, err := summary()
	if err != nil {
		return err
	}
	return o.recentSummary(sum, r.Table(), printTurns)
}

// recentSummary writes the summary above the turns: as a text block
// before a table, as {"summary": …, "turns": […]} in json, as a first
// {"summary": …} line in ndjson; a csv file stays one table, so the summary
// goes to Err.
func (o *Output) recentSummary(s *Summary, turns *Table, printTurns func() error) error {
	w := o.W
	head := "Summary (" + s.Strategy
	if s.Model != "" {
		head += ", " + s.Model
	}
	if s.Reused {
		head += ", stored"
	}
	head += "):\n" + strings.TrimSpace(s.Text) + "\n"
	switch o.Format {
	case FormatTable:
		if _, err := io.WriteString(w, head+"\n"); err != nil {
			return err
		}
	case FormatCSV:
		fmt.Fprintf(o.Err, "%s", head)
	case FormatNDJSON:
		b, err := json.Marshal(map[string]any{"summary": s})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	case FormatJSON:
		var buf bytes.Buffer
		if err := Write(&buf, FormatJSON, turns, WriterOptions{}); err != nil {
			return err
		}
		b, err := json.Marshal(struct {
			Summary *Summary        `json:"summary"`
			Turns   json.RawMessage `json:"turns"`
		}{s, bytes.TrimSpace(buf.Bytes())})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	return printTurns()
}

// SearchWarning says on Err, whatever the format, why a search answered
// with lexical results only.
func (o *Output) SearchWarning(res *SearchResult) {
	if res.Warning != "" {
		fmt.Fprintf(o.Err, "%s: warning: %s\n", o.Name, res.Warning)
	}
}

// Search writes a search's results (its sessions when grouped by
// session): blocks on a terminal's table, a table otherwise. A warning
// goes first; a note says when nothing matched text.
func (o *Output) Search(res *SearchResult, groupBy, text string) error {
	o.SearchWarning(res)
	if groupBy == "session" {
		if len(res.Sessions) == 0 {
			o.Note("no match for %q", text)
		}
		if o.Format == FormatTable {
			return o.Blocks(SessionHitBlocks(res.Sessions, o.Now))
		}
		return o.Table(TableOf(res.Sessions), nil, nil)
	}
	if len(res.Hits) == 0 {
		o.Note("no match for %q", text)
	}
	if o.Format == FormatTable {
		return o.Blocks(HitBlocks(res.Hits, o.Now))
	}
	return o.Table(TableOf(res.Hits), nil, nil)
}

// Context writes a context pack after its warnings: markdown, its JSON
// when asJSON, or with dryRun the table of what it holds.
func (o *Output) Context(pack *ContextPack, dryRun, asJSON bool) error {
	for _, w := range pack.Warnings {
		o.Note("%s", w)
	}
	switch {
	case dryRun:
		return o.Table(pack.DryRun(), nil, nil, "title")
	case asJSON:
		return o.jsonLine(pack.JSON())
	}
	_, err := io.WriteString(o.W, pack.Markdown())
	return err
}

// Summary writes a summary as markdown, or as indented JSON.
func (o *Output) Summary(s *Summary, asJSON bool) error {
	if asJSON {
		return o.jsonLine(json.MarshalIndent(s, "", "  "))
	}
	_, err := io.WriteString(o.W, s.Markdown())
	return err
}

// jsonLine writes b, a JSON document, and a newline; or returns err, the
// error of making b.
func (o *Output) jsonLine(b []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.W, "%s\n", b)
	return err
}
