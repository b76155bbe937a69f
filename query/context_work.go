package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/lazyre"
)

// What the smart pack takes from a session's messages beyond its prompts:
// what the assistant said and did (its words, its thinking, its tool calls
// in a line each and the errors they met), the errors with what came after
// them, and where the work stopped (the last todo list, the last request,
// the last words, an error left standing). A compaction summary is made of
// these: the decisions, fixes and pending tasks it names were stated in the
// assistant's words, thinking and tool results far more often than in the
// prompts.

// A step is one thing that happened in a session's main thread.
type step struct {
	ts   time.Time
	kind string // said, thought, tool, error, record, tasks
	text string // record steps: the message the command carried
	// tool steps: the call's name and its short form; error steps: the
	// call that failed
	tool, call string
	shell      bool // a tool step: the call ran a command
	edit       bool // a tool step: the call changed a file
}

// workSizes bound what the work items hold, in bytes of text or tokens.
const (
	thoughtMax        = 1200 // a thinking block in a reply
	errorLineMax      = 200  // one line of an error
	errorLines        = 4    // lines of one error
	afterErrorMax     = 360  // what the assistant said after an error
	lastWordsMax      = 700  // each of the last things the assistant said
	replyPartMax      = 1200 // tokens of one part of a reply
	outputScanMax     = 64 << 10
	editScanMax       = 16 << 10
	diffLineMax       = 160 // a line an edit removed or added
	diffLines         = 2   // lines of each side of an edit
	writtenProseLines = 3   // comment and doc lines of a file written whole
	editNames         = 8   // names an edit took out, and brought in
	commandLineMax    = 160
	recordMax         = 900  // the message of one commit or closed task
	fixLines          = 6    // lines of the edit that followed an error
	afterErrorSteps   = 2    // things said or thought after an error, before its fix
	trackerMax        = 1500 // bytes of one task tracker output
	trackerLineMax    = 200  // one line of it
	trackerShowMax    = 800  // bytes of the output of a command that shows one task
	trackerTokens     = 1000 // tokens of the task tracker outputs a pack carries
	trackerRelLines   = 16   // lines of a shown task's relations (see cutTask)
)

// errorLineRE finds the lines of a tool's output that report a failure, in
// the words compilers, test runners, shells and tools use.
var errorLineRE = lazyre.New(`(?i)\b(error|errors|exception|fail|failed|failure|failures|fatal|panic|traceback|undefined|cannot|can't|couldn't|unable to|not found|no such|denied|refused|invalid|unexpected|missing|timed? ?out|violation|rejected)\b|\*\* \(|^E\s|✗|✘`)

// diagLineRE finds the lines of a successful command's output that report
// a failure: a command that exits 0 may still print a compiler's error,
// a failing test or a stack trace (piped through tail, run by a script
// that does not pass the status on), but its output also holds the
// project's own text — an issue tracker's task, a log, a file —, where a
// word such as "fail" or "invalid" is prose. So the line must have the
// shape diagnostics have: a failure word that opens it, a named error or
// exception, a count of failures, a place followed by "error", or one of
// a few messages no prose says.
var diagLineRE = lazyre.New(`^\s*(?:\*\* \(|(?i:error|errors|fatal|panic|fail|failed|failure|traceback)\b|E\s{2,}|[✗✘×]\s|\[(?i:error|fail|failed)\])` +
	`|\b[A-Z]\w*(?:Error|Exception)\b` +
	`|(?i:\b[1-9]\d* (?:failures?|failed|errors?|failing)\b)` +
	`|:\d+(?::\d+)?:?\s+(?i:error|fatal)\b` +
	`|(?i:\bis undefined\b|\bundefined (?:function|variable|method|reference|symbol|name)\b|\bno such file\b|\bcommand not found\b|\bpermission denied\b|\bsegmentation fault\b)`)

// okLineRE finds lines that name failures only to say there are none.
var okLineRE = lazyre.New(`(?i)\b(0|no) (errors?|failures?|failed|issues)\b|\bpassed\b.*\b0 failed\b`)

// placeRE finds a place in a file: a name with an extension and a line
// number.
var placeRE = lazyre.New(`[\w./-]+\.\w{1,8}:\d+`)

// exitLineRE is the first line Claude Code writes for a failed command.
var exitLineRE = lazyre.New(`^Exit code \d+$`)

// todoTools are the tools agents keep their task lists with, and the
// member of their input that holds the list.
var todoTools = map[string]string{"todowrite": "todos", "todo_write": "todos", "write_todos": "todos", "update_plan": "plan"}

// work reads the main thread of a session before until: its prompts,
// words, thinking and tool calls, in order, as steps; and the latest todo
// list its tools kept.
func (d *DB) work(ctx context.Context, messages string, ref SessionRef, until time.Time) (steps []step, todos string, err error) {
	rows, err := d.db.QueryContext(ctx, `SELECT ts, role, coalesce(text, ''), coalesce(thinking, ''), coalesce(cwd, '') FROM `+messages+`
WHERE platform = ? AND session_id = ? AND NOT coalesce(sidechain, false) AND ts < ?
  AND role = 'assistant' AND (coalesce(text, '') <> '' OR coalesce(thinking, '') <> '')
ORDER BY ts, id`, ref.Platform, ref.SessionID, until)
	if err != nil {
		return nil, "", sqlErr(err)
	}
	cwd := ""
	for rows.Next() {
		var ts sql.NullTime
		var role, text, thinking string
		if err := rows.Scan(&ts, &role, &text, &thinking, &cwd); err != nil {
			rows.Close()
			return nil, "", sqlErr(err)
		}
		if t := strings.TrimSpace(thinking); t != "" {
			steps = append(steps, step{ts: utc(ts), kind: "thought", text: t})
		}
		if t := strings.TrimSpace(text); t != "" {
			steps = append(steps, step{ts: utc(ts), kind: "said", text: t})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, "", sqlErr(err)
	}
	// Tool calls and results: the inputs' few members that say what a call
	// did, and the output only when it may report a failure.
	rows, err = d.db.QueryContext(ctx, `WITH t AS (
  SELECT ts, id, role, unnest(tools) AS t, generate_subscripts(tools, 1) AS k FROM `+messages+`
  WHERE platform = ? AND session_id = ? AND NOT coalesce(sidechain, false) AND ts < ? AND len(tools) > 0
), c AS (
  SELECT ts, id, k, role, coalesce(t.name, '') AS name, coalesce(t.call_id, '') AS call_id,
    CASE WHEN json_valid(t.input) THEN t.input END AS input, coalesce(t.is_error, false) AS is_error, t.output
  FROM t
), c2 AS (
  -- A result recorded apart from its call knows the call's command by
  -- the call's id.
  SELECT *, CASE WHEN call_id <> '' THEN max(coalesce(json_extract_string(input, '$.command'), json_extract_string(input, '$.cmd'))) OVER (PARTITION BY call_id) END AS call_command
  FROM c
)
SELECT ts, role, name, call_id,
  coalesce(json_extract_string(input, '$.description'), ''),
  coalesce(json_extract_string(input, '$.command'), json_extract_string(input, '$.cmd'), ''),
  coalesce(json_extract_string(input, '$.file_path'), json_extract_string(input, '$.path'), json_extract_string(input, '$.notebook_path'),
    json_extract_string(input, '$.target_file'), json_extract_string(input, '$.absolute_path'), json_extract_string(input, '$.pattern'),
    json_extract_string(input, '$.url'), json_extract_string(input, '$.query'), ''),
  CASE WHEN lower(name) IN ('todowrite', 'todo_write', 'write_todos', 'update_plan') THEN input END,
  coalesce(left(json_extract_string(input, '$.old_string'), `+fmt.Sprint(editScanMax)+`), ''),
  coalesce(left(json_extract_string(input, '$.new_string'), `+fmt.Sprint(editScanMax)+`),
    left(json_extract_string(input, '$.content'), `+fmt.Sprint(editScanMax)+`), ''),
  is_error,
  CASE WHEN is_error OR regexp_matches(left(output, `+fmt.Sprint(outputScanMax)+`), '(?i)error|fail|exception|panic|fatal|traceback|undefined|cannot|denied|invalid|not found')
      OR regexp_matches(coalesce(json_extract_string(input, '$.command'), json_extract_string(input, '$.cmd'), call_command, ''), '`+trackerCommandPattern+`')
    THEN left(output, `+fmt.Sprint(outputScanMax)+`) END
FROM c2 ORDER BY ts, id, k`, ref.Platform, ref.SessionID, until)
	if err != nil {
		return nil, "", sqlErr(err)
	}
	calls := map[string]step{}   // call id -> its tool step
	heads := map[string]string{} // call id -> the task tracker command it ran (trackerHead)
	var tools []step
	for rows.Next() {
		var ts sql.NullTime
		var role, name, callID, desc, command, target string
		var todo, output sql.NullString
		var oldText, newText string
		var isError bool
		if err := rows.Scan(&ts, &role, &name, &callID, &desc, &command, &target, &todo, &oldText, &newText, &isError, &output); err != nil {
			rows.Close()
			return nil, "", sqlErr(err)
		}
		at := utc(ts)
		if name != "" {
			if todo.Valid {
				if t := todoList(todo.String, todoTools[strings.ToLower(name)]); t != "" {
					todos = t
				}
				continue
			}
			s := step{ts: at, kind: "tool", tool: name, call: callLine(name, desc, command, stepPath(cwd, target)), shell: command != "", edit: isEdit(name)}
			if d := editDiff(oldText, newText); d != "" {
				s.call += "\n" + d
				s.edit = true
			}
			tools = append(tools, s)
			if msg := commandMessage(command); msg != "" {
				tools = append(tools, step{ts: at, kind: "record", text: msg, tool: name, call: commandHead(command)})
			}
			if callID != "" {
				calls[callID] = s
			}
		}
		if !output.Valid && !isError {
			continue
		}
		call, known := calls[callID]
		if name == "" && !known {
			call = step{tool: "tool"}
		} else if name != "" {
			call = step{tool: name, call: callLine(name, desc, command, stepPath(cwd, target)), shell: command != ""}
		}
		// A successful call's output is read for failures only when it is
		// a command's (a compiler's, a test runner's): a file's or a page's
		// text names errors as words like any other.
		if !isError && !call.shell {
			continue
		}
		call.call, _, _ = strings.Cut(call.call, "\n")
		head := trackerHead(command)
		if name != "" && callID != "" {
			heads[callID] = head
		} else if head == "" {
			head = heads[callID]
		}
		if head != "" && !isError && output.Valid {
			if text := trackerText(output.String); text != "" {
				tools = append(tools, step{ts: at, kind: "tasks", text: text, tool: name, call: head})
			}
		}
		if lines := errorText(output.String, isError); lines != "" {
			tools = append(tools, step{ts: at, kind: "error", text: lines, tool: call.tool, call: call.call})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, "", sqlErr(err)
	}
	steps = append(steps, tools...)
	slices.SortStableFunc(steps, func(a, b step) int { return a.ts.Compare(b.ts) })
	return steps, todos, nil
}

// trackerCommandPattern finds a command that prints an issue tracker's
// tasks: a list (ready, list, blocked) or one task (show, view) of beads
// (bd), GitHub's and GitLab's CLIs (gh, glab: issue or pr), Jira's,
// Linear's, Gitea's (tea) and Taskwarrior (task). Agents that keep their
// tasks there read what is left to do from its output, which no todo
// list of the agent's own repeats.
const trackerCommandPattern = `(?:^|[;&|(]\s*|\s)(?:bd|beads|gh|glab|jira|linear|tea|task)\s+(?:(?:issue|issues|pr|mr|task|tasks)\s+)?(?:ready|list|ls|blocked|show|view|next)\b`

var trackerCommandRE = lazyre.New(trackerCommandPattern)

// trackerHead is the first task tracker command a command runs (see
// trackerCommandPattern), up to its subcommand's argument: "bd ready",
// "gh issue view 12"; "" when it runs none.
func trackerHead(command string) string {
	loc := trackerCommandRE().FindStringIndex(command)
	if loc == nil {
		return ""
	}
	rest := strings.TrimLeft(command[loc[0]:], ";&|( \t\n")
	var words []string
	for _, w := range strings.Fields(rest) {
		if strings.ContainsAny(w, ";&|>") || len(words) >= 4 {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// trackerText is a tracker's output as the pack carries it: its lines
// with text, each cut to trackerLineMax bytes (its indentation, which
// says what a line belongs to, kept up to a few spaces), the whole to
// trackerMax (see cutTask).
func trackerText(output string) string {
	var lines []string
	for _, l := range strings.Split(output, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			indent := min(len(l)-len(strings.TrimLeft(l, " \t")), 4)
			lines = append(lines, strings.Repeat(" ", indent)+excerpt.Line(l, trackerLineMax))
		}
	}
	return cutTask(strings.Join(lines, "\n"), trackerMax)
}

// trackerRelRE finds the heading of a task's relations in the output of a
// tracker command that shows it: bd's CHILDREN, DEPENDS ON, BLOCKS, the
// sub-issues, parents and blockers other trackers list.
var trackerRelRE = lazyre.New(`(?i)^(?:children|child (?:issues|tasks)|sub-?issues|sub-?tasks|depends on|dependencies|dependents|blocks|blocked by|blocking|parent|linked (?:issues|tasks))\s*:?\s*(?:\(\d+\))?$`)

// cutTask is a tracker's output cut to n bytes, and the task's relations
// kept besides. A task's relations (its children, its parent, what it
// depends on and blocks, each under a heading of trackerRelRE and in the
// indented or arrowed lines after it) come last in what a tracker shows,
// after a description that may run long; they are the work still open
// around the task — what a summary names as pending —, so a cut leaves
// them out of the n bytes and keeps trackerRelLines of them (lines of
// trackerLineMax bytes at most) besides.
func cutTask(text string, n int) string {
	text = strings.TrimSpace(text)
	if len(text) <= n {
		return text
	}
	var body, rel []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case trackerRelRE().MatchString(t):
			in = true
			rel = append(rel, t)
		case in && t != "" && (t != l || strings.IndexAny(t, "-*•↳→←↑↓") == 0):
			rel = append(rel, l)
		default:
			in = false
			body = append(body, l)
		}
	}
	if len(rel) == 0 {
		return cut(text, n)
	}
	if len(rel) > trackerRelLines {
		rel = append(rel[:trackerRelLines], "…")
	}
	return cut(strings.Join(body, "\n"), n) + "\n" + strings.Join(rel, "\n")
}

// editTools are the tools that change a file, lower-cased, on the
// platforms pos reads (Claude Code, Codex, Gemini, Cline, Cursor).
var editTools = map[string]bool{"edit": true, "multiedit": true, "write": true, "notebookedit": true, "apply_patch": true,
	"replace": true, "write_file": true, "write_to_file": true, "replace_in_file": true, "edit_file": true, "create_file": true,
	"str_replace_editor": true, "str_replace_based_edit_tool": true, "search_replace": true}

func isEdit(tool string) bool { return editTools[strings.ToLower(tool)] }

// messageFlagRE finds the message a command carries in a flag: a commit's
// (git, hg, jj, svn: -m, --message), a closed or updated task's (--reason,
// --notes, --comment), a pull request's or an issue's (--body, --title,
// --description). Agents write there, in a few lines, what they did and
// why — the account a summary of the session gives.
var messageFlagRE = lazyre.New(`(?:^|\s)(?:-m|--message|--reason|--notes|--comment|--body|--description|--title)(?:=|\s+)("(?:[^"\\]|\\.)*"|'[^']*')`)

// heredocRE is the here-document a message is often given as:
// -m "$(cat <<'EOF' ... EOF)".
var heredocRE = lazyre.New(`(?s)^\$\(cat <<-?\s*['"]?(\w+)['"]?\s*\n(.*?)\n\s*(\w+)\s*\)$`)

// trailerRE finds a commit message's trailer lines (co-authors,
// sign-offs, the line a tool adds to say it wrote the commit): who, not
// what.
var trailerRE = lazyre.New(`(?im)^\s*(?:co-authored-by|signed-off-by|reviewed-by|acked-by):.*$|^.*generated with .*$`)

// commandMessage is the text of the messages a command carries (see
// messageFlagRE), each unquoted, joined by a line and cut to recordMax
// bytes; "" when it carries none of at least a few words.
func commandMessage(command string) string {
	var parts []string
	for _, m := range messageFlagRE().FindAllStringSubmatch(command, -1) {
		q := m[1]
		text := q[1 : len(q)-1]
		if q[0] == '"' {
			text = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\$`, `$`, "\\`", "`").Replace(text)
		}
		if h := heredocRE().FindStringSubmatch(text); h != nil && h[1] == h[3] {
			text = h[2]
		}
		text = strings.TrimSpace(trailerRE().ReplaceAllString(text, ""))
		if len(strings.Fields(text)) >= 3 && !slices.Contains(parts, text) {
			parts = append(parts, text)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return cut(strings.Join(parts, "\n"), recordMax)
}

// commandHead is the start of a command that says what it is: its first
// two words after the last "&&" or ";" before the message (git commit,
// bd close).
func commandHead(command string) string {
	if loc := messageFlagRE().FindStringIndex(command); loc != nil {
		command = command[:loc[0]]
	}
	for _, sep := range []string{"&&", ";", "|"} {
		if i := strings.LastIndex(command, sep); i >= 0 {
			command = command[i+len(sep):]
		}
	}
	f := strings.Fields(command)
	return strings.Join(f[:min(len(f), 3)], " ")
}

// callLine is a tool call in one line: its name, what it is for (the
// description the agent gave), its command or the file or pattern it works
// on.
func callLine(name, desc, command, target string) string {
	var b strings.Builder
	b.WriteString(name)
	if desc = strings.TrimSpace(desc); desc != "" {
		b.WriteString(": " + excerpt.Line(desc, commandLineMax))
	}
	if command = strings.TrimSpace(command); command != "" {
		b.WriteString(" `" + strings.ReplaceAll(excerpt.Line(command, commandLineMax), "`", "'") + "`")
	} else if target != "" {
		b.WriteString(" " + excerpt.Line(target, commandLineMax))
	}
	return b.String()
}

// stepPath is a path relative to the session's directory when it is
// inside (relPath), else as it is.
func stepPath(cwd, path string) string {
	if r := relPath(cwd, path); r != "" {
		return r
	}
	return path
}

// editDiff is what an edit (old and new text, as Claude Code's Edit and
// its kin take them) changed, in a few lines: the first lines it removed
// and added, each cut to diffLineMax bytes, and the names it took out and
// brought in anywhere in the edit (a function renamed, a helper extracted,
// a guard replaced), which lines past the first few would not show. The
// change is what a summary of the session names ("changed X to Y",
// "extracted Z"), which the file's name alone does not say.
func editDiff(oldText, newText string) string {
	if oldText == "" && newText == "" {
		return ""
	}
	oldLines, newLines := strings.Split(oldText, "\n"), strings.Split(newText, "\n")
	had := map[string]bool{}
	for _, l := range oldLines {
		had[strings.TrimSpace(l)] = true
	}
	has := map[string]bool{}
	for _, l := range newLines {
		has[strings.TrimSpace(l)] = true
	}
	// The lines of code an edit changed say more of it than the lines of
	// its comments and docs: those are shown only when no code line
	// changed.
	pick := func(lines []string, other map[string]bool, mark string) []string {
		var code, prose []string
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if t == "" || other[t] {
				continue
			}
			line := "    " + mark + " " + excerpt.Line(t, diffLineMax)
			if isProse(t) {
				prose = append(prose, line)
			} else {
				code = append(code, line)
			}
		}
		if len(code) == 0 {
			code = prose
		}
		return code[:min(len(code), diffLines)]
	}
	out := append(pick(oldLines, has, "-"), pick(newLines, had, "+")...)
	if strings.TrimSpace(oldText) == "" {
		// A file written whole: its comments and docs say what it is for
		// and why (a migration's reason, a module's doc), which its first
		// lines of code do not.
		n := 0
		for _, l := range newLines {
			t := strings.TrimSpace(l)
			line := "    + " + excerpt.Line(t, diffLineMax)
			if t != "" && isProse(t) && len(strings.Fields(t)) >= 3 && n < writtenProseLines && !slices.Contains(out, line) {
				out = append(out, line)
				n++
			}
		}
	}
	gone, came := changedNames(oldText, newText)
	if len(gone) > 0 {
		out = append(out, "    names out: "+strings.Join(gone, ", "))
	}
	if len(came) > 0 {
		out = append(out, "    names in: "+strings.Join(came, ", "))
	}
	return strings.Join(out, "\n")
}

// commentRE finds the start of a comment line in the usual languages.
var commentRE = lazyre.New(`^(?://|#|/\*|\*|--|;|<!--|"""|\'\'\')`)

// isProse tells a line of comment or documentation from a line of code: a
// comment's opening, or words with no code punctuation among them.
func isProse(line string) bool {
	if commentRE().MatchString(line) {
		return true
	}
	return len(strings.Fields(line)) >= 5 && !strings.ContainsAny(line, "(){}[]=<>;:|&$@\\")
}

// nameRE finds the names in code: identifiers, with the dots of a
// qualified name and an Elixir or Ruby name's closing ? or !.
var nameRE = lazyre.New(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[?!]?`)

// changedNames are the names an edit's old text has and its new text
// lacks, and the reverse, in the order they first appear, at most
// editNames of each: names of at least four bytes that look like code (a
// capital after the first letter, an underscore or a dot), since a word of
// prose is no name.
func changedNames(oldText, newText string) (gone, came []string) {
	names := func(s string) []string {
		// A redaction marker's words are no names of the code.
		if ms := excerpt.Markers(s); len(ms) > 0 {
			b := []byte(s)
			for _, m := range ms {
				for i := m[0]; i < m[1]; i++ {
					b[i] = ' '
				}
			}
			s = string(b)
		}
		var out []string
		seen := map[string]bool{}
		for _, m := range nameRE().FindAllString(s, -1) {
			if len(m) < 4 || len(m) > diffLineMax || seen[m] {
				continue
			}
			if strings.ContainsAny(m, "_.") || strings.ContainsFunc(m[1:], func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
				seen[m] = true
				out = append(out, m)
			}
		}
		return out
	}
	o, n := names(oldText), names(newText)
	diff := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if !slices.Contains(b, x) && len(out) < editNames {
				out = append(out, x)
			}
		}
		return out
	}
	return diff(o, n), diff(n, o)
}

// errorText is what an output says went wrong: its lines that report a
// failure (at most errorLines, each cut to errorLineMax bytes), or, for a
// call the platform marked failed whose output names no failure, its first
// lines. "" when the output reports none.
func errorText(output string, failed bool) string {
	if len(output) == outputScanMax {
		// The output was cut: its last line may be cut short.
		if i := strings.LastIndexByte(output, '\n'); i > 0 {
			output = output[:i]
		}
	}
	// A line that reports a failure is taken first; then, in a failed
	// call's output, a line that points at a place in a file (file.ext:12)
	// and the line before it: diagnostics are written so, whatever the
	// tool's words for the failure are.
	var lines []string
	for _, l := range strings.Split(output, "\n") {
		if l = strings.TrimSpace(l); l != "" && !exitLineRE().MatchString(l) {
			lines = append(lines, excerpt.Line(l, errorLineMax))
		}
	}
	if !failed && slices.ContainsFunc(lines, okLineRE().MatchString) {
		// A run that reports no failures in its own summary ("0
		// failures") failed nowhere, whatever its log lines name.
		return ""
	}
	// A diagnostic's place ranks first, with the message beside it (the
	// line before or else after, when it says something: a few words); then
	// the lines that report a failure; a bare word ("error") last.
	score := make([]int, len(lines))
	said := func(l string) bool { return len(strings.Fields(l)) >= 4 }
	for i, l := range lines {
		if (failed && errorLineRE().MatchString(l) || diagLineRE().MatchString(l)) && !okLineRE().MatchString(l) {
			score[i] = 2
			if len(strings.Fields(l)) < 2 {
				score[i] = 1
			}
		}
	}
	for i, l := range lines {
		if failed && placeRE().MatchString(l) {
			score[i] = 3
			// The message is the line before (a compiler's, a linter's
			// heading), else the one after (a type checker's).
			for _, j := range []int{i - 1, i + 1} {
				if j >= 0 && j < len(lines) && said(lines[j]) && !placeRE().MatchString(lines[j]) {
					score[j] = max(score[j], 2)
					break
				}
			}
		}
	}
	var found []string
	for want := 3; want >= 1 && len(found) < errorLines; want-- {
		for i, l := range lines {
			if score[i] == want && !slices.Contains(found, l) && len(found) < errorLines {
				found = append(found, l)
			}
		}
	}
	if len(found) == 0 && failed {
		found = lines[:min(2, len(lines))]
	}
	// In the order the output has them.
	slices.SortStableFunc(found, func(a, b string) int { return slices.Index(lines, a) - slices.Index(lines, b) })
	return strings.Join(found, "\n")
}

// todoList renders an agent's todo list (TodoWrite's todos, Codex's plan):
// the items not done, with their status, and how many are.
func todoList(input, member string) string {
	var in map[string]json.RawMessage
	if json.Unmarshal([]byte(input), &in) != nil {
		return ""
	}
	var items []struct {
		Content string `json:"content"`
		Step    string `json:"step"`
		Status  string `json:"status"`
	}
	if json.Unmarshal(in[member], &items) != nil || len(items) == 0 {
		return ""
	}
	var b strings.Builder
	done := 0
	for _, it := range items {
		text := strings.TrimSpace(it.Content + it.Step)
		if text == "" {
			continue
		}
		if it.Status == "completed" || it.Status == "done" {
			done++
			continue
		}
		fmt.Fprintf(&b, "- [%s] %s\n", cmpOr(it.Status, "pending"), excerpt.Line(text, 300))
	}
	if done > 0 {
		fmt.Fprintf(&b, "- (%d done)\n", done)
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// exchangeStart is the time an exchange of the main thread opened, and its
// prompt.
type exchangeStart struct {
	ts     time.Time
	prompt string
}

// replyItems are what the assistant said and did in each exchange, in
// order: its words, its thinking (cut to thoughtMax), a line per tool call
// (consecutive reads of files in one line) and the errors they met. A
// long exchange is cut into parts of about replyPartMax tokens at steps,
// each an item of its own, so that the budget keeps the latest part when
// it cannot keep all.
func replyItems(steps []step, exchanges []exchangeStart) []ContextItem {
	var items []ContextItem
	for i, ex := range exchanges {
		var end time.Time
		if i+1 < len(exchanges) {
			end = exchanges[i+1].ts
		}
		var lines []string
		var starts []time.Time
		for _, s := range steps {
			if s.ts.Before(ex.ts) && i > 0 || !end.IsZero() && !s.ts.Before(end) {
				continue
			}
			l := stepLine(s)
			if l == "" {
				continue
			}
			if n := len(lines); n > 0 && s.kind == "tool" && isRead(s.tool) && strings.HasPrefix(lines[n-1], "→ "+s.tool+" ") {
				lines[n-1] += ", " + strings.TrimPrefix(s.call, s.tool+" ")
				continue
			}
			lines = append(lines, l)
			starts = append(starts, s.ts)
		}
		if len(lines) == 0 {
			continue
		}
		var parts [][2]int
		from, size := 0, 0
		for j, l := range lines {
			t := EstimateTokens(l)
			if j > from && size+t > replyPartMax {
				parts = append(parts, [2]int{from, j})
				from, size = j, 0
			}
			size += t
		}
		parts = append(parts, [2]int{from, len(lines)})
		for k, p := range parts {
			title := replyTitle(ex.prompt)
			if len(parts) > 1 {
				title = strings.TrimSpace(fmt.Sprintf("%s, part %d of %d", title, k+1, len(parts)))
			}
			ts := starts[p[0]]
			if k == 0 {
				ts = ex.ts
			}
			items = append(items, ContextItem{Kind: "reply", Priority: 5, TS: ts, Title: title, Text: strings.Join(lines[p[0]:p[1]], "\n\n")})
		}
	}
	return items
}

func isRead(tool string) bool {
	return strings.EqualFold(tool, "Read") || strings.EqualFold(tool, "read_file")
}

// stepLine is a step as a reply prints it.
func stepLine(s step) string {
	switch s.kind {
	case "said":
		return s.text
	case "thought":
		return "(thinking) " + cut(s.text, thoughtMax)
	case "tool":
		return "→ " + s.call
	case "error":
		return "✗ " + strings.ReplaceAll(s.text, "\n", "\n  ")
	}
	return ""
}

// cut is text cut to at most n bytes (never inside a redaction marker),
// with an ellipsis when it was longer.
func cut(text string, n int) string {
	text = strings.TrimSpace(text)
	if len(text) <= n {
		return text
	}
	return strings.TrimRight(excerpt.Prefix(text, n-len(excerpt.Ellipsis)), " \t\n") + excerpt.Ellipsis
}

// firstSentences is the start of a text: its first sentences within n
// bytes (at least the first, cut to n), on one line.
func firstSentences(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= n {
		return text
	}
	end := 0
	for i := 0; i < len(text) && i < n; i++ {
		if k := excerpt.MarkerLen(text[i:]); k > 0 {
			i += k - 1
			continue
		}
		if c := text[i]; (c == '.' || c == '!' || c == '?') && i+1 < len(text) && text[i+1] == ' ' {
			end = i + 1
		}
	}
	if end == 0 {
		return cut(text, n)
	}
	return text[:end]
}

// errorsItems list the errors the session's tools met, each with the call
// that met it and what the assistant said or thought next (how it read the
// error, what it did about it): the newest first while they fit in max
// tokens (limit), printed oldest first, then the older ones at the lowest priority. An error met again with the same first line
// is listed once, where it was last met.
func errorsItems(steps []step, limit int) []ContextItem {
	type entry struct {
		ts   time.Time
		text string
	}
	var entries []entry
	seen := map[string]bool{}
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if s.kind != "error" {
			continue
		}
		key := strings.ToLower(strings.TrimRightFunc(strings.SplitN(s.text, "\n", 2)[0], func(r rune) bool { return r >= '0' && r <= '9' || r == ' ' }))
		if seen[key] {
			continue
		}
		seen[key] = true
		var b strings.Builder
		fmt.Fprintf(&b, "- %s\n  ✗ %s\n", cmpOr(s.call, s.tool), strings.ReplaceAll(s.text, "\n", "\n    "))
		// What followed: what the assistant said or thought of the error
		// (its first words, then up to afterErrorSteps more until it
		// acted), and the first edit it made before it ran a command again
		// or met another error — the fix, as a summary pairs them.
		// Past its first words, what it said counts only on the way to a
		// fix.
		var then []string
		fix := ""
		for _, next := range steps[i+1:] {
			if next.kind == "error" || next.kind == "tool" && next.shell {
				break
			}
			if len(then) < afterErrorSteps && (next.kind == "said" || next.kind == "thought") {
				then = append(then, firstSentences(next.text, afterErrorMax))
			}
			if next.kind == "tool" && next.edit {
				lines := strings.Split(next.call, "\n")
				fix = strings.Join(lines[:min(len(lines), fixLines)], "\n  ")
				break
			}
		}
		if fix == "" {
			then = then[:min(len(then), 1)]
		}
		for _, t := range then {
			fmt.Fprintf(&b, "  then: %s\n", t)
		}
		if fix != "" {
			fmt.Fprintf(&b, "  fix: %s\n", fix)
		}
		entries = append(entries, entry{s.ts, b.String()})
	}
	// The newest that fit in limit make the item; the older ones follow
	// in items of overflowMax tokens at overflowPriority, which a pack
	// takes only with the room everything else left.
	var items []ContextItem
	flush := func(g []entry, prio int) {
		if len(g) == 0 {
			return
		}
		slices.Reverse(g)
		var b strings.Builder
		for _, e := range g {
			b.WriteString(e.text)
		}
		it := ContextItem{Kind: "errors", Priority: prio, TS: g[0].ts, Text: b.String()}
		if prio == overflowPriority {
			it.Title = "earlier"
		}
		items = append(items, it)
	}
	var cur []entry
	used, room, prio := 0, limit, 4
	for _, e := range entries {
		t := EstimateTokens(e.text)
		if used+t > room {
			flush(cur, prio)
			cur, used, room, prio = nil, 0, overflowMax, overflowPriority
		}
		if t <= room {
			used += t
			cur = append(cur, e)
		}
	}
	flush(cur, prio)
	return items
}

// overflowMax bounds each item that carries the errors or decisions their
// share of the budget did not hold; overflowPriority is theirs, the
// lowest, after the files read.
const (
	overflowMax      = 800
	overflowPriority = maxPriority
)

// recordsItem lists the messages the session's commands carried — its
// commits, the tasks it closed, the pull requests it opened (see
// commandMessage) —, each with the command it went with: the newest first
// while they fit in limit tokens, printed oldest first. A message given
// again (a commit retried after a hook refused it) is listed once, where
// it was last given.
func recordsItem(steps []step, limit int) (ContextItem, bool) {
	var kept []step
	seen := map[string]bool{}
	used := 0
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if s.kind != "record" {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(strings.SplitN(s.text, "\n", 2)[0]))
		if seen[key] {
			continue
		}
		seen[key] = true
		t := EstimateTokens(recordLine(s))
		if used+t > limit {
			continue
		}
		used += t
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return ContextItem{}, false
	}
	slices.Reverse(kept)
	var b strings.Builder
	for _, s := range kept {
		b.WriteString(recordLine(s))
	}
	return ContextItem{Kind: "records", Priority: 4, TS: kept[len(kept)-1].ts, Text: b.String()}, true
}

func recordLine(s step) string {
	return fmt.Sprintf("- %s: %s\n", s.call, strings.ReplaceAll(s.text, "\n", "\n  "))
}

// tasksItems carry what the session's task tracker last printed (see
// trackerCommandPattern): the latest output of each command, the newest
// first while they fit in limit tokens, printed oldest first. The last
// lists are where the work stood by the tracker's account: the tasks
// open, in progress and blocked, which a summary names as pending. What
// does not fit follows at overflowPriority, which a pack takes only with the room everything
// else left: a task's description also holds the decisions its work
// followed. Each of those is an item of its own, so that what room is
// left takes what fits.
func tasksItems(steps []step, limit int) []ContextItem {
	type entry struct {
		i    int
		ts   time.Time
		text string
	}
	var kept, rest []entry
	seen := map[string]bool{}
	used := 0
	closed := map[string]time.Time{} // a task the session closed -> when
	for _, s := range steps {
		if s.kind == "tool" && s.shell {
			for _, id := range closedTasks(s.call) {
				closed[id] = s.ts
			}
		}
	}
	// Lists first (what is ready, open, blocked), then single tasks, and
	// last the tasks the session closed after it showed them: what they
	// said is done, while the others are the work still open.
	class := func(s step) int {
		if trackerListRE().MatchString(s.call) {
			return 0
		}
		f := strings.Fields(s.call)
		if at, ok := closed[f[len(f)-1]]; ok && !at.Before(s.ts) {
			return 2
		}
		return 1
	}
	for pass := range 3 {
		for i := len(steps) - 1; i >= 0; i-- {
			s := steps[i]
			if s.kind != "tasks" || seen[s.call] || class(s) != pass {
				continue
			}
			seen[s.call] = true
			text := s.text
			if pass > 0 {
				text = cutTask(text, trackerShowMax)
			}
			e := entry{i, s.ts, fmt.Sprintf("- `%s`:\n    %s\n", strings.ReplaceAll(s.call, "`", "'"), strings.ReplaceAll(text, "\n", "\n    "))}
			t := EstimateTokens(e.text)
			if used+t > limit {
				rest = append(rest, e)
				continue
			}
			used += t
			kept = append(kept, e)
		}
	}
	var items []ContextItem
	flush := func(g []entry, prio int) {
		if len(g) == 0 {
			return
		}
		slices.SortFunc(g, func(a, b entry) int { return a.i - b.i })
		var b strings.Builder
		ts := time.Time{}
		for _, e := range g {
			b.WriteString(e.text)
			if e.ts.After(ts) {
				ts = e.ts
			}
		}
		it := ContextItem{Kind: "tasks", Priority: prio, TS: ts, Text: b.String()}
		if prio == overflowPriority {
			it.Title = "more"
		}
		items = append(items, it)
	}
	flush(kept, 4)
	for _, e := range rest {
		flush([]entry{e}, overflowPriority)
	}
	return items
}

// trackerCloseRE finds a tracker command that closes tasks (bd close A B,
// gh issue close 12, bd update A --status closed) in a call's line; its
// group is what follows the subcommand.
var trackerCloseRE = lazyre.New(`(?:^|[;&|(` + "`" + `]\s*|\s)(?:(?:bd|beads|gh issue|glab issue|tea issues?|jira issue)\s+close\s+([^;&|` + "`" + `]*)|(?:bd|beads)\s+update\s+([^;&|` + "`" + `]*?--status[= ]+["']?(?:closed|done)\b))`)

// closedTasks are the ids of the tasks a call's line closes.
func closedTasks(call string) []string {
	var ids []string
	for _, m := range trackerCloseRE().FindAllStringSubmatch(call, -1) {
		for _, f := range strings.Fields(m[1] + " " + m[2]) {
			if strings.HasPrefix(f, "-") {
				break
			}
			ids = append(ids, strings.Trim(f, `"'`))
		}
	}
	return ids
}

// trackerListRE tells a tracker command that lists tasks from one that
// shows a task.
var trackerListRE = lazyre.New(`\b(?:ready|list|ls|blocked|next)\b`)

// stoppedItem says where the session's work stood at its end: the agent's
// last todo list, the last request when it is not the first, the
// assistant's last words, and the last error when nothing was said after
// it.
func stoppedItem(steps []step, todos string, exchanges []exchangeStart) (ContextItem, bool) {
	var b strings.Builder
	if todos != "" {
		b.WriteString("Todo list:\n" + todos + "\n")
	}
	if n := len(exchanges); n > 1 {
		b.WriteString("Last request: " + cut(exchanges[n-1].prompt, lastWordsMax) + "\n\n")
	}
	var last []string
	for i := len(steps) - 1; i >= 0 && len(last) < 2; i-- {
		if steps[i].kind == "said" {
			last = append(last, cut(steps[i].text, lastWordsMax))
		}
	}
	if len(last) > 0 {
		slices.Reverse(last)
		b.WriteString("Last words:\n\n" + strings.Join(last, "\n\n") + "\n\n")
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].kind == "said" {
			break
		}
		if steps[i].kind == "error" {
			fmt.Fprintf(&b, "Last error (nothing said after it): %s\n  ✗ %s\n", steps[i].call, strings.ReplaceAll(steps[i].text, "\n", "\n    "))
			break
		}
	}
	if b.Len() == 0 {
		return ContextItem{}, false
	}
	ts := time.Time{}
	if len(steps) > 0 {
		ts = steps[len(steps)-1].ts
	}
	return ContextItem{Kind: "stopped", Priority: 3, TS: ts, Text: b.String()}, true
}

// foundDecision is a decision enrichment found.
type foundDecision struct {
	ts          time.Time
	text, after string // the sentence, and the one after it in its message
	conf        float64
}

// decisionsText lists decisions a line each, "- (confidence) text": each
// once (a sentence stated again, in other case or spacing, is the same
// decision, kept at its highest confidence and latest time); when they
// do not all fit in limit tokens, the most certain are kept, and of equally
// certain ones the newest, since a later decision revises an earlier one.
// The lines are in time order.
func decisionsText(found []foundDecision, limit int) string {
	text, _ := decisionsTexts(found, limit)
	return text
}

// decisionsTexts is decisionsText and, in texts of at most overflowMax
// tokens, the decisions it had no room for: the most certain first, each
// text in time order.
func decisionsTexts(found []foundDecision, limit int) (string, []string) {
	byKey := map[string]int{}
	var list []foundDecision
	for _, f := range found {
		f.text = strings.Join(strings.Fields(f.text), " ")
		if f.text == "" {
			continue
		}
		key := strings.ToLower(f.text)
		if i, ok := byKey[key]; ok {
			list[i].conf = max(list[i].conf, f.conf)
			list[i].ts = f.ts
			list[i].after = cmpOr(f.after, list[i].after)
			continue
		}
		byKey[key] = len(list)
		list = append(list, f)
	}
	rank := slices.Clone(list)
	slices.SortStableFunc(rank, func(a, b foundDecision) int {
		if a.conf != b.conf {
			if a.conf > b.conf {
				return -1
			}
			return 1
		}
		return b.ts.Compare(a.ts)
	})
	var main, rest []foundDecision
	used := 0
	for _, f := range rank {
		t := EstimateTokens(decisionLine(f))
		if used+t > limit {
			rest = append(rest, f)
			continue
		}
		used += t
		main = append(main, f)
	}
	// The rest, the most certain first, in groups of overflowMax tokens.
	var more []string
	var cur []foundDecision
	used = 0
	for _, f := range rest {
		t := EstimateTokens(decisionLine(f))
		if t > overflowMax {
			continue
		}
		if used+t > overflowMax {
			more = append(more, decisionLines(cur))
			cur, used = nil, 0
		}
		cur = append(cur, f)
		used += t
	}
	if len(cur) > 0 {
		more = append(more, decisionLines(cur))
	}
	return decisionLines(main), more
}

// decisionLines are the decisions' lines in time order.
func decisionLines(fs []foundDecision) string {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b foundDecision) int { return a.ts.Compare(b.ts) })
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(decisionLine(f))
	}
	return b.String()
}

func decisionLine(f foundDecision) string {
	if f.after = strings.Join(strings.Fields(f.after), " "); f.after != "" {
		return fmt.Sprintf("- (%.2f) %s\n  then: %s\n", f.conf, f.text, f.after)
	}
	return fmt.Sprintf("- (%.2f) %s\n", f.conf, f.text)
}
