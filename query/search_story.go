package query

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchrows"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
)

// An exchange's story. "Have I seen this error before, and what fixed it?"
// is answered by a hit that holds the question, the failure and what came
// after it: the exchange's prompt, the first tool result that failed (the
// one the hit matched, when it is a tool's failure), and the edits and
// the command that made it pass. Everything shown is the lake's own text
// (scrubbed before it was loaded), cut only where a redaction marker is
// not split.

// ToolStep is a tool call of an exchange's story.
type ToolStep struct {
	Tool string    `json:"tool"`
	TS   time.Time `json:"ts"`
	// Command is the shell command the call ran (one line).
	Command string `json:"command,omitempty"`
	// Files are the files an edit wrote or changed.
	Files []string `json:"files,omitempty"`
	// Lines are a failure's lines that say what failed.
	Lines []string `json:"lines,omitempty"`
}

// Bounds of a story: the prompt's length, a failure's lines, the edits
// listed before the command that passed.
const (
	promptBytes     = 240
	storyErrorLines = 3
	maxFixSteps     = 6
)

// What is read of a tool's input and output (in characters): an input
// longer than storyInputMax is neither a command nor an edit's path worth
// showing; of a longer output, its first and last storyOutputEnd, joined by
// outputCut (the lines it cut are dropped: see wholeLines).
const (
	storyInputMax  = "16384"
	storyOutputEnd = "4096"
	// The same, as numbers.
	storyInputMaxChars  = 16384
	storyOutputEndChars = 4096
	outputCut           = "\n\x01\n"
)

// wholeLines drops the lines of an output that the cut of a long one
// split, so that what is shown of it are lines of the lake's text, whole
// (a redaction marker is never split: it is within a line).
func wholeLines(output string) string {
	head, tail, ok := strings.Cut(output, outputCut)
	if !ok {
		return output
	}
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	} else {
		head = ""
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	} else {
		tail = ""
	}
	return head + "\n…\n" + tail
}

// storyExchange is an exchange whose story is told.
type storyExchange struct {
	id, platform, session, thread string
	start, end                    time.Time // end: the thread's next exchange (zero: none)
	prompt                        string
}

// storyTool is a tool call or result of a message of the exchange.
type storyTool struct {
	Name    string `json:"name"`
	CallID  string `json:"call_id"`
	Input   string `json:"input"`
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
}

// storyMessage is a message of an exchange that called or answered tools.
type storyMessage struct {
	thread, cwd string
	ts          time.Time
	tools       []storyTool
}

// tellStories fills in the prompt, and the failure and fix when there was
// one, of the hits' exchanges: one query reads the sessions' exchanges,
// one the messages with tools of the hits' exchanges.
func (d *DB) tellStories(ctx context.Context, hits []SearchHit, terms []string) error {
	want := map[string]bool{}
	var args []any
	var refs []SessionRef
	seenSession := map[string]bool{}
	for _, h := range hits {
		if h.ExchangeID == "" || h.SessionID == "" {
			continue
		}
		want[h.ExchangeID] = true
		if k := h.Platform + "\x00" + h.SessionID; !seenSession[k] {
			seenSession[k] = true
			args = append(args, h.SessionID)
			refs = append(refs, SessionRef{Platform: h.Platform, SessionID: h.SessionID})
		}
	}
	if len(want) == 0 {
		return nil
	}
	// The partitions of the hits' days, and the days around (an exchange
	// that ran over midnight): an exchange's messages are in the
	// partitions of their own times. Named file by file, not through the
	// views, which list and prune every partition of the lake.
	var parts []layout.Partition
	for _, h := range hits {
		if h.ExchangeID == "" || h.TS.IsZero() {
			continue
		}
		for _, day := range []int{-1, 0, 1} {
			p := layout.Partition{Platform: h.Platform, Date: h.TS.AddDate(0, 0, day).Format(time.DateOnly)}
			if !slices.Contains(parts, p) {
				parts = append(parts, p)
			}
		}
	}
	sessions := map[string]bool{}
	for _, r := range refs {
		sessions[r.Platform+"\x00"+r.SessionID] = true
	}
	rows, ok, err := d.exchangesInGo(parts, sessions, func(id string) bool { return want[id] })
	if err != nil {
		return err
	}
	var all []storyExchange
	for _, r := range rows {
		all = append(all, storyExchange{id: r.ID, platform: r.Platform, session: r.SessionID, thread: r.AgentID, start: r.TS, prompt: r.Prompt})
	}
	if !ok {
		if all, err = d.storyExchangesSQL(ctx, parts, want, args); err != nil {
			return err
		}
	}
	// An exchange lasts until its thread's next one.
	byID := map[string]*storyExchange{}
	last := map[string]int{}
	for i := range all {
		e := &all[i]
		k := e.platform + "\x00" + e.session + "\x00" + e.thread
		if j, ok := last[k]; ok && all[j].end.IsZero() {
			all[j].end = e.start
		}
		last[k] = i
		if want[e.id] && refsHave(refs, e.platform, e.session) {
			byID[e.id] = e
		}
	}
	if len(byID) == 0 {
		return nil
	}
	failed, err := d.failedExchanges(ctx, hits, byID)
	if err != nil {
		return err
	}
	withFailure := map[string]*storyExchange{}
	for id, e := range byID {
		if failed[id] {
			withFailure[id] = e
		}
	}
	var msgs map[string][]storyMessage
	if len(withFailure) > 0 {
		if msgs, err = d.storyMessages(ctx, parts, withFailure); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	for i := range hits {
		h := &hits[i]
		e := byID[h.ExchangeID]
		if e == nil || e.platform != h.Platform {
			continue
		}
		h.Prompt = excerpt.Line(e.prompt, promptBytes)
		if failed[e.id] {
			h.Error, h.Fix = story(h, msgs[e.id], terms)
		}
	}
	return nil
}

// storyExchangesSQL reads the sessions' exchanges in the partitions with
// DuckDB, with the prompts of those in want.
func (d *DB) storyExchangesSQL(ctx context.Context, parts []layout.Partition, want map[string]bool, args []any) ([]storyExchange, error) {
	exSrc, err := catalog.PartitionSource(d.lake, "exchange_rows", parts)
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range want {
			if !yield(id) {
				return
			}
		}
	})
	rows, err := d.db.QueryContext(ctx, `SELECT id, platform, session_id, coalesce(agent_id, ''), ts,
  CASE WHEN id IN (`+placeholders(len(ids))+`) THEN coalesce(prompt, '') ELSE '' END
FROM `+exSrc+` WHERE session_id IN (`+placeholders(len(args))+`) ORDER BY ts, id`, append(anys(ids), args...)...)
	if err != nil {
		return nil, sqlErr(err)
	}
	var all []storyExchange
	err = eachRow(rows, func() error {
		var e storyExchange
		var ts sql.NullTime
		if err := rows.Scan(&e.id, &e.platform, &e.session, &e.thread, &ts, &e.prompt); err != nil {
			return err
		}
		e.start = utc(ts)
		all = append(all, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

func refsHave(refs []SessionRef, platform, session string) bool {
	return slices.ContainsFunc(refs, func(r SessionRef) bool { return r.Platform == platform && r.SessionID == session })
}

// failedExchanges tells which of the exchanges had a tool fail: those
// pos-embed gave a tool_error chunk. Only their messages are read.
func (d *DB) failedExchanges(ctx context.Context, hits []SearchHit, byID map[string]*storyExchange) (map[string]bool, error) {
	var files []string
	for _, h := range hits {
		if byID[h.ExchangeID] == nil || h.TS.IsZero() {
			continue
		}
		day := h.TS.UTC().Truncate(24 * time.Hour)
		fs, err := d.listing.PartitionFiles(d.lake, layout.TableChunks, h.Platform, day.AddDate(0, 0, -1), day.AddDate(0, 0, 2))
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	out := map[string]bool{}
	if len(files) == 0 {
		return out, nil
	}
	ids := map[string]bool{}
	for id := range byID {
		ids[id] = true
	}
	if failed, ok, err := d.failedInGo(ctx, files, ids); ok || err != nil {
		return failed, err
	}
	src, list, err := catalog.FilesSource(d.lake, layout.TableChunks, files)
	if err != nil {
		return nil, err
	}
	rows, err := d.db.QueryContext(ctx, `SELECT DISTINCT parent_id FROM `+src+`
WHERE content_type = ? AND parent_id IN (`+placeholders(len(ids))+`)`, append([]any{list, schema.ContentToolError}, anys(slices.Sorted(maps.Keys(ids)))...)...)
	if err != nil {
		return nil, sqlErr(err)
	}
	if err := scanSet(rows, out); err != nil {
		return nil, err
	}
	return out, nil
}

// storyMessages reads the messages with tools of each exchange, in order:
// in Go from the messages files of the partitions, or with DuckDB when
// the table has versions of its rows.
func (d *DB) storyMessages(ctx context.Context, parts []layout.Partition, byID map[string]*storyExchange) (map[string][]storyMessage, error) {
	if d.describeSQL || layout.Versioned(d.lake)[layout.TableMessages] {
		src, err := catalog.PartitionSource(d.lake, "messages", parts)
		if err != nil {
			return nil, err
		}
		return d.storyMessagesSQL(ctx, src, byID)
	}
	in := func(e *storyExchange, platform, session, thread string, ts time.Time) bool {
		ms := ts.UnixMilli()
		return e.platform == platform && e.session == session && e.thread == thread && ms >= e.start.UnixMilli() && (e.end.IsZero() || ms < e.end.UnixMilli())
	}
	rows, err := searchrows.ReadStoryMessages(d.lake, parts, func(platform, session, agent string, ts time.Time) bool {
		for _, e := range byID {
			if in(e, platform, session, agent, ts) {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rows, func(a, b searchrows.StoryMessage) int {
		return cmp.Or(a.TS.Compare(b.TS), cmp.Compare(a.SourceLine, b.SourceLine), cmp.Compare(a.ID, b.ID))
	})
	out := map[string][]storyMessage{}
	for _, r := range rows {
		m := storyMessage{thread: r.AgentID, cwd: r.Cwd, ts: r.TS}
		for _, t := range r.Tools {
			m.tools = append(m.tools, storyTool{Name: t.Name, CallID: t.CallID, Input: storyInput(t.Input), Output: storyOutput(t.Output), IsError: t.IsError})
		}
		for _, e := range byID {
			if in(e, r.Platform, r.SessionID, r.AgentID, r.TS) {
				out[e.id] = append(out[e.id], m)
			}
		}
	}
	return out, nil
}

// storyInput and storyOutput cut a tool's input and output as
// storyMessagesSQL does (lengths in characters).
func storyInput(s string) string {
	if utf8.RuneCountInString(s) > storyInputMaxChars {
		return ""
	}
	return s
}

func storyOutput(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= 2*storyOutputEndChars {
		return s
	}
	r := []rune(s)
	return string(r[:storyOutputEndChars]) + outputCut + string(r[n-storyOutputEndChars:])
}

// storyMessagesSQL is storyMessages with DuckDB over src.
func (d *DB) storyMessagesSQL(ctx context.Context, src string, byID map[string]*storyExchange) (map[string][]storyMessage, error) {
	var conds []string
	var args []any
	for _, e := range byID {
		c := "(platform = ? AND session_id = ? AND coalesce(agent_id, '') = ? AND epoch_ms(ts) >= ?"
		args = append(args, e.platform, e.session, e.thread, e.start.UnixMilli())
		if !e.end.IsZero() {
			c += " AND epoch_ms(ts) < ?"
			args = append(args, e.end.UnixMilli())
		}
		conds = append(conds, c+")")
	}
	// A long output is read by its head and tail (where a failure shows),
	// joined by outputCut; an input too long to be a command or to name
	// the file an edit changed is left out.
	rows, err := d.db.QueryContext(ctx, `SELECT platform, session_id, coalesce(agent_id, ''), ts, coalesce(cwd, ''),
  CAST(to_json(list_transform(tools, t -> struct_pack(name := t.name, call_id := t.call_id,
    input := CASE WHEN length(t.input) > `+storyInputMax+` THEN '' ELSE t.input END,
    output := CASE WHEN length(t.output) > 2 * `+storyOutputEnd+` THEN left(t.output, `+storyOutputEnd+`) || chr(10) || chr(1) || chr(10) || right(t.output, `+storyOutputEnd+`) ELSE t.output END,
    is_error := t.is_error))) AS VARCHAR)
FROM `+src+` WHERE tool_count > 0 AND (`+strings.Join(conds, " OR ")+`)
ORDER BY ts, coalesce(source_line, 0), id`, args...)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	out := map[string][]storyMessage{}
	for rows.Next() {
		var platform, session string
		var m storyMessage
		var ts sql.NullTime
		var tools sql.NullString
		if err := rows.Scan(&platform, &session, &m.thread, &ts, &m.cwd, &tools); err != nil {
			return nil, sqlErr(err)
		}
		m.ts = utc(ts)
		if !tools.Valid || json.Unmarshal([]byte(tools.String), &m.tools) != nil {
			continue
		}
		for _, e := range byID {
			if e.platform == platform && e.session == session && e.thread == m.thread && !m.ts.Before(e.start) && (e.end.IsZero() || m.ts.Before(e.end)) {
				out[e.id] = append(out[e.id], m)
			}
		}
	}
	return out, sqlErr(rows.Err())
}

// storyCall is a tool call as the story reads it.
type storyCall struct {
	name, command string
	files         []string // written or edited
	ts            time.Time
}

// story finds the failure of an exchange's tools and what fixed it: the
// failure is the hit's own (a tool_error hit whose lines it holds) or the
// first; the fix is the edits after it up to the first command that then
// succeeded — the failed command run again (the same program and first
// argument) when a command failed, any successful edit when an edit did.
// Without a failure there is no story; a failure nothing followed has no
// fix.
func story(h *SearchHit, msgs []storyMessage, terms []string) (*ToolStep, []ToolStep) {
	calls := map[string]*storyCall{}
	type result struct {
		call   *storyCall
		output string
		failed bool
		ts     time.Time
	}
	type event struct {
		call   *storyCall // a call; else a result
		result *result
	}
	var events []event
	for _, m := range msgs {
		for _, t := range m.tools {
			if t.Input != "" {
				c := &storyCall{name: t.Name, ts: m.ts}
				st := schema.Tool{Name: t.Name, CallID: t.CallID, Input: json.RawMessage(t.Input)}
				c.command, _ = enrich.ShellCommand(nil, st)
				rec := &schema.Record{Cwd: m.cwd, Tools: []schema.Tool{st}}
				if json.Valid(st.Input) {
					for _, f := range enrich.FileRefs(nil, rec) {
						if (f.Action == "edit" || f.Action == "write") && !slices.Contains(c.files, f.Path) {
							c.files = append(c.files, f.Path)
						}
					}
				}
				if t.CallID != "" {
					calls[t.CallID] = c
				}
				events = append(events, event{call: c})
				continue
			}
			c := calls[t.CallID]
			if c == nil {
				c = &storyCall{name: t.Name, ts: m.ts}
			}
			out := wholeLines(t.Output)
			failed := t.IsError || embed.Failed(cmp.Or(t.Name, c.name), out)
			events = append(events, event{result: &result{call: c, output: out, failed: failed, ts: m.ts}})
		}
	}
	// The failure: the hit's own, else the first.
	at := -1
	for i, ev := range events {
		if ev.result == nil || !ev.result.failed {
			continue
		}
		if at < 0 {
			at = i
		}
		if h.ContentType == schema.ContentToolError && holdsLines(ev.result.output, h.Lines) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, nil
	}
	fail := events[at].result
	errStep := &ToolStep{Tool: fail.call.name, TS: fail.ts, Command: excerpt.Line(fail.call.command, matchingLineBytes),
		Lines: failureLines(fail.output, terms)}
	program := rerunHead(fail.call.command)
	var fix []ToolStep
	edits := map[*storyCall]int{} // an edit's place in fix
	for _, ev := range events[at+1:] {
		if c := ev.call; c != nil {
			if len(c.files) > 0 && len(fix) < maxFixSteps-1 {
				edits[c] = len(fix)
				fix = append(fix, ToolStep{Tool: c.name, TS: c.ts, Files: c.files})
			}
			continue
		}
		r := ev.result
		if i, ok := edits[r.call]; ok {
			if r.failed { // the edit did not take
				fix = slices.Delete(fix, i, i+1)
				delete(edits, r.call)
				for c, j := range edits {
					if j > i {
						edits[c] = j - 1
					}
				}
			} else if program == "" {
				return errStep, fix // a failed edit, done again
			}
			continue
		}
		if r.failed || r.call.command == "" || program == "" || rerunHead(r.call.command) != program {
			continue
		}
		return errStep, append(fix, ToolStep{Tool: r.call.name, TS: r.ts, Command: excerpt.Line(r.call.command, matchingLineBytes)})
	}
	return errStep, fix
}

// holdsLines reports whether an output holds the first of a hit's lines
// (without the "…" of a cut).
func holdsLines(output string, lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	l := strings.TrimSpace(strings.Trim(lines[0], "…"))
	return l != "" && strings.Contains(output, l)
}

// rerunHead is what tells a command run again: its program and first
// argument ("go test", "npm run"), after any cd … && .
func rerunHead(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if i := strings.LastIndex(cmd, "&&"); i >= 0 && strings.HasPrefix(cmd, "cd ") {
		cmd = strings.TrimSpace(cmd[i+2:])
	}
	f := strings.Fields(cmd)
	return strings.Join(f[:min(2, len(f))], " ")
}

// failureWords mark the lines of a failed output that say what failed.
var failureWords = []string{"error", "fail", "panic", "exception", "traceback", "fatal", "denied", "not found",
	"undefined", "cannot", "unable", "refused", "invalid", "no such", "exit code", "exit status"}

// failureLines are the lines of a failed output to show: those that hold
// the query's words, else those that say what failed, else its first
// lines; at most storyErrorLines, long ones cut.
func failureLines(output string, terms []string) []string {
	if ls := MatchingLines(output, terms, storyErrorLines); len(ls) > 0 {
		return ls
	}
	var first, errs []string
	for line := range strings.SplitSeq(output, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(first) < storyErrorLines {
			first = append(first, cutLine(line, 0))
		}
		low := strings.ToLower(line)
		if slices.ContainsFunc(failureWords, func(w string) bool { return strings.Contains(low, w) }) {
			errs = append(errs, cutLine(line, 0))
			if len(errs) == storyErrorLines {
				break
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return first
}
