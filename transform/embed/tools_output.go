package embed

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/pos-lake/pos/internal/excerpt"
)

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
