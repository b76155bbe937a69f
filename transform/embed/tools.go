package embed

// Tool calls and their results as units of the index: what an agent did
// (the shell commands it ran) and what came back (a tool's output, or its
// failure: a compiler error, a failing test, a stack trace, a refusal).
// "Have I seen this error before, and what fixed it?" is answered from
// these units; the exchange they belong to holds the fix.
//
// The units are bounded whatever the output: a long output keeps its head,
// its tail and, when it failed, the lines that say so with the lines around
// them (selectOutput), so a 2 MB log is a few chunks, not the index's
// bulk. An output or a command repeated verbatim within a session (the
// same ls, the same failing build) is indexed once.
//
// The chunks of a tool unit belong to the exchange the tool ran in, like
// the exchange's own chunks: their parent is the exchange. pos-normalize
// writes an exchange's record after its messages, and Claude Code a tool's
// result before the assistant message that called it (the call names the
// tool), so the reader holds a thread's tool units until its exchange comes
// (see toolTracker) and they are embedded and written after it; a tool run
// outside any exchange keeps its message as parent.

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
)

// ToolTypes are the content types of the chunks made of tool calls and
// results.
var ToolTypes = []string{schema.ContentCommand, schema.ContentToolOutput, schema.ContentToolError}

// IsToolType reports whether a chunk's content type is one of ToolTypes.
func IsToolType(ctype string) bool {
	return ctype == schema.ContentCommand || ctype == schema.ContentToolOutput || ctype == schema.ContentToolError
}

// toolUnit is a tool call's command or a tool's result, to be indexed.
type toolUnit struct {
	msg      *schema.Record // the message's fields a chunk copies (its texts and tools left out)
	exchange string         // the exchange it belongs to ("": none)
	index    int            // the tool's place among its message's tools
	command  bool           // a command; else a result
	name     string         // the tool's name (a result's from its call when it has none)
	callID   string
	cmd      string // the command (of a result: its call's)
	text     string // the command, or the output (a long output reduced, see holdBytes)
	isError  bool   // the result was flagged as an error
}

// head is what a unit's chunks are embedded under: "Bash: go test ./...".
func (u *toolUnit) head() string {
	if u.cmd != "" && !u.command {
		return orStr(u.name, "shell") + ": " + excerpt.Line(u.cmd, 160)
	}
	return u.name
}

// Bounds of what the reader holds: an output longer than holdBytes is
// reduced to its head, tail and error lines (selectOutput) before it is
// held; past maxHeldBytes the thread holding the most is let go unlinked.
// Its memory of calls and of texts seen starts afresh past maxCalls and
// maxSeen (a later result may go unnamed, a later repeat be indexed again).
const (
	holdBytes    = 64 << 10
	maxHeldBytes = 64 << 20
	maxCalls     = 1 << 17
	maxSeen      = 1 << 20
)

// toolTracker reads the stream in order and hands each job the tool units
// to embed with it: a thread's units (platform, session, agent) are held
// until the thread's exchange record comes, and go with it, linked to it;
// a prompt of the thread (pos-normalize has written the exchange before
// it), a checkpoint (it has closed every exchange before one) or the end
// of the stream let the units still held go unlinked. Results are named
// after their calls, whichever comes first, and texts a session already
// had are dropped.
type toolTracker struct {
	threads map[string]*heldUnits
	order   []string               // threads in the order they began holding
	calls   map[string]callInfo    // a call seen, by platform, session and call id
	waiting map[string][]*toolUnit // results held whose call has not come yet
	seen    map[uint64]struct{}
	bytes   int
}

type heldUnits struct {
	units []*toolUnit
	bytes int
}

// callInfo is what a result needs of its call.
type callInfo struct{ name, command string }

func newToolTracker() *toolTracker {
	return &toolTracker{threads: map[string]*heldUnits{}, calls: map[string]callInfo{},
		waiting: map[string][]*toolUnit{}, seen: map[uint64]struct{}{}}
}

func threadOf(r *schema.Record) string {
	k := r.Platform + "\x00" + r.SessionID
	if r.Agent != nil && r.Agent.ID != "" {
		k += "\x00" + r.Agent.ID
	}
	return k
}

// add reads one record of the stream and returns the units to embed with
// it, written after it.
func (tt *toolTracker) add(rec *schema.Record) []*toolUnit {
	switch rec.Kind {
	case schema.KindExchange:
		return tt.release(threadOf(rec), rec.ID)
	case schema.KindCheckpoint:
		return tt.releaseAll()
	case schema.KindMessage:
	default:
		return nil
	}
	var out []*toolUnit
	if rec.Role == schema.RoleUser && (rec.ContentType == schema.ContentText || rec.ContentType == schema.ContentCommand) {
		out = tt.release(threadOf(rec), "")
	}
	if len(rec.Tools) == 0 {
		return out
	}
	var msg *schema.Record
	stub := func() *schema.Record {
		if msg == nil {
			msg = toolMessage(rec)
		}
		return msg
	}
	for k, t := range rec.Tools {
		key := ""
		if t.CallID != "" {
			key = rec.Platform + "\x00" + rec.SessionID + "\x00" + t.CallID
		}
		cmd := ""
		if len(t.Input) > 0 {
			cmd, _ = enrich.ShellCommand(t)
		}
		if key != "" && t.Name != "" && len(t.Input) > 0 {
			// A call: it names its results, held or to come.
			for _, u := range tt.waiting[key] {
				u.name, u.cmd = orStr(u.name, t.Name), cmd
			}
			delete(tt.waiting, key)
			if t.Output == "" {
				if len(tt.calls) >= maxCalls {
					clear(tt.calls)
				}
				tt.calls[key] = callInfo{name: t.Name, command: cmd}
			}
		}
		if cmd != "" && tt.first(rec, "command", cmd) {
			tt.hold(rec, &toolUnit{msg: stub(), index: k, command: true, name: orStr(t.Name, "shell"), callID: t.CallID, cmd: cmd, text: cmd})
		}
		if t.Output == "" || !tt.first(rec, "output", t.Output) {
			continue
		}
		u := &toolUnit{msg: stub(), index: k, name: t.Name, callID: t.CallID, cmd: cmd, isError: t.IsError}
		if len(t.Output) > holdBytes {
			// Held reduced: what selectOutput keeps of it later is
			// within what it keeps now.
			out := outputText(t.Output)
			u.text = strings.Clone(selectOutput(out, true, holdBytes))
			if out != t.Output && exitCode(strings.TrimSpace(t.Output)) {
				u.isError = true
			}
		} else {
			u.text = strings.Clone(t.Output)
		}
		if key != "" && len(t.Input) == 0 {
			if c, ok := tt.calls[key]; ok {
				u.name, u.cmd = orStr(u.name, c.name), c.command
				delete(tt.calls, key)
			} else if u.name == "" {
				tt.waiting[key] = append(tt.waiting[key], u)
			}
		}
		tt.hold(rec, u)
	}
	if tt.bytes > maxHeldBytes {
		out = append(out, tt.release(tt.largest(), "")...)
	}
	return out
}

// toolMessage is what a tool unit keeps of its message: the fields its
// chunks copy, without the texts and tools that may be large.
func toolMessage(rec *schema.Record) *schema.Record {
	m := *rec
	m.Line, m.Text, m.Thinking, m.Tools, m.Raw, m.Meta, m.Files, m.Tags = nil, "", "", nil, nil, nil, nil, nil
	m.Usage, m.Advisor, m.Source, m.Exchange, m.Session, m.Chunk = nil, nil, nil, nil, nil, nil
	m.Extra = slices.Clone(m.Extra)
	return &m
}

func (tt *toolTracker) hold(rec *schema.Record, u *toolUnit) {
	k := threadOf(rec)
	h := tt.threads[k]
	if h == nil {
		h = &heldUnits{}
		tt.threads[k] = h
		tt.order = append(tt.order, k)
	}
	n := len(u.text) + 256
	h.units = append(h.units, u)
	h.bytes += n
	tt.bytes += n
}

// release lets a thread's held units go, linked to exchange ("": none).
func (tt *toolTracker) release(thread, exchange string) []*toolUnit {
	h := tt.threads[thread]
	if h == nil {
		return nil
	}
	delete(tt.threads, thread)
	tt.bytes -= h.bytes
	if len(tt.order) > 2*len(tt.threads)+64 {
		tt.order = slices.DeleteFunc(tt.order, func(k string) bool { return tt.threads[k] == nil })
	}
	// The commands a tool ran in the exchange are one unit, a line or
	// more each, in order: a command is short, and a chunk of its own
	// each cost the index more than it told.
	byTool := map[string]*toolUnit{}
	out := h.units[:0]
	for _, u := range h.units {
		u.exchange = exchange
		if u.command {
			if first := byTool[u.name]; first != nil {
				first.text += "\n" + u.text
				continue
			}
			byTool[u.name] = u
		}
		out = append(out, u)
	}
	return out
}

// releaseAll lets every held unit go unlinked, oldest thread first.
func (tt *toolTracker) releaseAll() []*toolUnit {
	var out []*toolUnit
	for _, k := range tt.order {
		out = append(out, tt.release(k, "")...)
	}
	tt.order = tt.order[:0]
	clear(tt.waiting)
	return out
}

func (tt *toolTracker) largest() string {
	best := ""
	for _, k := range tt.order {
		if h := tt.threads[k]; h != nil && (best == "" || h.bytes > tt.threads[best].bytes) {
			best = k
		}
	}
	return best
}

// first reports whether the session had no such text before.
func (tt *toolTracker) first(rec *schema.Record, what, text string) bool {
	d := xxhash.New()
	for _, s := range []string{rec.Platform, rec.SessionID, what, text} {
		d.WriteString(s)
		d.Write([]byte{0})
	}
	h := d.Sum64()
	if _, ok := tt.seen[h]; ok {
		return false
	}
	if len(tt.seen) >= maxSeen {
		clear(tt.seen)
	}
	tt.seen[h] = struct{}{}
	return true
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// toolChunks makes the chunk records of tool units whose content types
// are wanted: their parent is their exchange, else their message.
func (e *embedder) toolChunks(units []*toolUnit, emit func(c *schema.Record, head string)) (indexed, skipped int64) {
	for _, u := range units {
		var ctype, text string
		if u.command {
			ctype, text = schema.ContentCommand, selectOutput(u.text, false, commandBudget)
		} else {
			out := outputText(u.text)
			ctype = schema.ContentToolOutput
			// A JSON output's exit code may be in a member left out of
			// its text (Codex's metadata.exit_code).
			failed := u.isError || Failed(u.name, out) || out != u.text && exitCode(strings.TrimSpace(u.text))
			budget := outputBudget
			if failed {
				ctype, budget = schema.ContentToolError, errorBudget
			} else if fileTool(u.name) {
				continue
			}
			if !wants(e.types, ctype) {
				continue
			}
			text = selectOutput(out, failed, budget)
		}
		if !wants(e.types, ctype) {
			continue
		}
		indexed++
		if !hasWord(text) {
			skipped++
			continue
		}
		m := u.msg
		for i, sp := range e.chunker.Split(text) {
			c := chunkRecord(m, ctype, i, strings.TrimSpace(text[sp.Start:sp.End]))
			c.ID = schema.ID(m.Platform, "chunk", m.ID, ctype, strconv.Itoa(u.index), strconv.Itoa(i))
			if u.exchange != "" {
				c.ParentID = u.exchange
			}
			c.Tools = []schema.Tool{{Name: u.name, CallID: u.callID}}
			emit(c, u.head())
		}
	}
	return indexed, skipped
}

func wants(types []string, ctype string) bool {
	for _, t := range types {
		if t == ctype {
			return true
		}
	}
	return false
}

// outputMembers are the members of a JSON object output that hold what a
// tool printed or said (Cursor records {"output": …}, {"contents": …},
// {"modelVisibleErrorMessage": …}): indexed instead of the JSON text.
var outputMembers = []string{"output", "stdout", "stderr", "error", "modelVisibleErrorMessage", "message", "contents", "content", "result"}

// outputText is what a tool output says: the text members of a JSON object
// output, else the output as it is.
func outputText(s string) string {
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &obj) != nil {
		return s
	}
	var parts []string
	for _, k := range outputMembers {
		v, ok := obj[k]
		if !ok || len(v) == 0 || v[0] != '"' {
			continue
		}
		var str string
		if json.Unmarshal(v, &str) == nil && strings.TrimSpace(str) != "" {
			parts = append(parts, str)
		}
	}
	if len(parts) == 0 {
		return s
	}
	return strings.Join(parts, "\n")
}

// Budgets of a unit's text, in bytes: the commands a tool ran in an
// exchange (a heredoc can be long), a successful output (one chunk: its
// head and tail say what it was), a failed output (its error lines and
// their surroundings, besides the head and the tail). The successful
// output of a tool that reads or writes a file is not indexed: its text is
// the file's, which the repository holds, not something that happened (the
// exchange names the file); its failure is.
const (
	commandBudget = 2 << 10
	outputBudget  = 1536
	errorBudget   = 6 << 10
	// maxLine cuts a long line (minified JSON, a base64 blob) to its start.
	maxLine = 400
	// errorContext is how many lines before and after an error line are
	// kept with it.
	errorContext = 2
)

// gap stands where lines were left out.
const gap = "…"

// selectOutput returns the part of an output that is indexed, at most
// about budget bytes: all of it when it fits; else its first lines (a
// third of the budget), its last lines (a sixth) and, when it failed, the
// lines that read as errors, each with errorContext lines around it, in
// output order (the rest of the budget, the earliest errors first; of a
// failure, the first error is usually the cause). Lines left out are
// marked by "…". Long lines are cut; no cut splits a redaction marker.
func selectOutput(out string, failed bool, budget int) string {
	out = strings.TrimSpace(out)
	if len(out) <= budget && !strings.Contains(out, "\r") && !hasLongLine(out) {
		return out
	}
	lines := splitLines(out)
	size := func(i int) int { return len(lines[i]) + 1 }
	keep := make([]bool, len(lines))
	used := 0
	take := func(i int) bool {
		if keep[i] {
			return true
		}
		if used+size(i) > budget {
			return false
		}
		keep[i] = true
		used += size(i)
		return true
	}
	headBudget, tailBudget := budget/3, budget/6
	if !failed {
		headBudget, tailBudget = budget*2/3, budget/3
	}
	for i := 0; i < len(lines) && used+size(i) <= headBudget; i++ {
		take(i)
	}
	tailUsed := 0
	for i := len(lines) - 1; i >= 0 && tailUsed+size(i) <= tailBudget; i-- {
		if !keep[i] {
			tailUsed += size(i)
			take(i)
		}
	}
	if failed {
	scan:
		for i, l := range lines {
			if keep[i] || !errorLine(l) {
				continue
			}
			for j := max(0, i-errorContext); j <= min(len(lines)-1, i+errorContext); j++ {
				if !take(j) {
					break scan
				}
			}
		}
	}
	var b strings.Builder
	b.Grow(used + 64)
	prev := -1
	for i, l := range lines {
		if !keep[i] {
			continue
		}
		if i != prev+1 {
			b.WriteString(gap + "\n")
		}
		b.WriteString(l)
		b.WriteByte('\n')
		prev = i
	}
	if prev != len(lines)-1 {
		b.WriteString(gap)
	}
	return strings.TrimSpace(b.String())
}

func hasLongLine(s string) bool {
	for len(s) > maxLine {
		i := strings.IndexByte(s, '\n')
		if i < 0 || i > maxLine {
			return true
		}
		s = s[i+1:]
	}
	return false
}

// splitLines splits an output into lines without their line ends (a
// carriage return that redraws a progress bar ends a line too), blank
// lines dropped and long lines cut to their start.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		line := s
		if i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		line = strings.TrimRight(line, " \t")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(line) > maxLine {
			line = excerpt.Prefix(line, maxLine) + gap
		}
		out = append(out, line)
	}
	return out
}

// shellWords name the tools that run something (a shell, a terminal, a
// script): the output of any other tool (a file it read, a page it
// fetched, a subagent's report) often holds "error" or "failed" without
// the tool failing, so it counts as failed only by the tool's own words.
var shellWords = []string{"bash", "shell", "exec", "command", "terminal", "cmd", "run_", "script"}

// fileWords name the tools that read or write a file.
var fileWords = []string{"read", "write", "edit", "patch", "view", "file", "notebook"}

// fileTool reports whether a tool reads or writes files (and runs nothing).
func fileTool(name string) bool {
	n := strings.ToLower(name)
	has := func(w string) bool { return strings.Contains(n, w) }
	return slices.ContainsFunc(fileWords, has) && !slices.ContainsFunc(shellWords, has)
}

// Failed reports whether a tool's output reads as a failure: the tool's
// own words ("<tool_use_error>", "Error:" first) for any tool, and for a
// tool that runs something (or an unnamed one) a non-zero exit, a stack
// trace, a compiler error, a failing test or a shell's refusal.
func Failed(tool, out string) bool {
	t := strings.TrimSpace(out)
	if strings.HasPrefix(t, "<tool_use_error>") || hasPrefixFold(t, "error:") || hasPrefixFold(t, "error ") {
		return true
	}
	if name := strings.ToLower(tool); name != "" && !slices.ContainsFunc(shellWords, func(w string) bool { return strings.Contains(name, w) }) {
		return false
	}
	if exitCode(t) {
		return true
	}
	// Look at the lines of the output's first and last 64 KB: a failure
	// shows there (a build stops at its first errors, a test run sums up
	// at its end).
	const span = 64 << 10
	if len(t) > 2*span {
		return failureText(t[:excerpt.Back(t, span)]) || failureText(t[excerpt.Forward(t, len(t)-span):])
	}
	return failureText(t)
}

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// exitCode reports whether an output starts by, or ends with, saying its
// command exited with a non-zero code: Claude Code's "Exit code 2", Codex's
// "Process exited with code 1" or "exit_code": 1, "exit status 1".
func exitCode(s string) bool {
	const near = 256 // only a report near the start or the end counts
	ends := []string{s}
	if len(s) > 2*near {
		ends = []string{s[:excerpt.Back(s, near)], s[excerpt.Forward(s, len(s)-near):]}
	}
	for _, end := range ends {
		for _, p := range []string{"Exit code ", "exit code ", "Exit code: ", "Process exited with code ", "exited with code ", "exit status ", "\"exit_code\":"} {
			for rest := end; ; {
				i := strings.Index(rest, p)
				if i < 0 {
					break
				}
				rest = rest[i+len(p):]
				if d := strings.TrimLeft(rest, " "); d != "" && d[0] >= '1' && d[0] <= '9' {
					return true
				}
			}
		}
	}
	return false
}

// failurePhrases say that a command failed wherever they are in its
// output; the line-start ones (failureStarts) only at a line's start.
var failurePhrases = []string{
	"Traceback (most recent call last)", "command not found", "No such file or directory", "Permission denied",
	"Segmentation fault", "panic: ", "goroutine 1 [", "--- FAIL", "npm ERR!", "Exception in thread", "AssertionError",
	"assertion failed", "BUILD FAILED", "Build failed", "build failed", "Compilation failed", "compilation failed",
	": error:", "): error ", "error[E", "error TS", "ModuleNotFoundError", "SyntaxError", "TypeError:", "ReferenceError",
	"NameError", "ImportError", "KeyError", "ValueError", "FAILED", "undefined reference", "cannot find symbol",
	"is not recognized as an internal or external command", "fatal error", "Fatal error", "Unhandled exception",
	"tests failed", "test failed", "failed to compile", "Failed to compile",
}

var failureStarts = []string{"error:", "Error:", "ERROR", "fatal:", "FAIL\t", "FAIL ", "E   ", "FAILURES", "Error ", "ERR!", "** ("}

func failureText(s string) bool {
	for _, p := range failurePhrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		line = strings.TrimLeft(line, " \t")
		for _, p := range failureStarts {
			if strings.HasPrefix(line, p) {
				return true
			}
		}
		if failedCount(line) {
			return true
		}
	}
	return false
}

// failedCount reports a summary that counts failures: "3 failed", "11
// failures.", "Tests: 2 failed, 5 passed", "Found 1 error.", "2 errors
// generated" (not "0 failed", nor "returns 404 errors when …").
func failedCount(line string) bool {
	for _, w := range []string{" failed", " failures", " failure", " errors", " error"} {
		for at := 0; ; {
			i := strings.Index(line[at:], w)
			if i < 0 {
				break
			}
			i += at
			at = i + len(w)
			j := i
			for j > 0 && line[j-1] >= '0' && line[j-1] <= '9' {
				j--
			}
			if j == i || j > 0 && line[j-1] != ' ' && line[j-1] != ',' && line[j-1] != '(' && line[j-1] != '\t' ||
				strings.Trim(line[j:i], "0") == "" {
				continue
			}
			rest := line[at:]
			if rest == "" || strings.ContainsRune(".,;:)!", rune(rest[0])) ||
				strings.HasPrefix(rest, " generated") || strings.HasPrefix(rest, " found") || strings.HasPrefix(rest, " occurred") ||
				strings.HasPrefix(rest, " in ") || strings.HasPrefix(rest, " and ") {
				return true
			}
		}
	}
	return false
}

// errorWords mark a line of a failed output as one to keep with its
// surroundings (compared case-insensitively, ASCII).
var errorWords = [][]byte{[]byte("error"), []byte("fail"), []byte("panic"), []byte("exception"), []byte("traceback"),
	[]byte("fatal"), []byte("denied"), []byte("not found"), []byte("undefined"), []byte("cannot"), []byte("can't"),
	[]byte("unable"), []byte("expected"), []byte("assert"), []byte("refused"), []byte("invalid"), []byte("abort"),
	[]byte("killed"), []byte("timed out"), []byte("no such"), []byte("missing"), []byte("exit code"), []byte("exit status")}

// errorLine reports whether a line of a failed output says what failed.
func errorLine(l string) bool {
	if len(l) > maxLine+len(gap) {
		l = l[:maxLine]
	}
	var buf [maxLine + 8]byte
	b := buf[:0]
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	for _, w := range errorWords {
		if bytes.Contains(b, w) {
			return true
		}
	}
	return strings.Contains(l, "✗") || strings.Contains(l, "✘") || strings.Contains(l, "❌")
}
