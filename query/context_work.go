package query

import (
	"context"
	"database/sql"
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
