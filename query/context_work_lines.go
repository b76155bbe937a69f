package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/lazyre"
)

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
