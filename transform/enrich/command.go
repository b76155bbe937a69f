package enrich

import (
	"strings"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

// ShellCommand returns the script a tool call ran in a shell, and whether
// the call is one: a shell tool of any platform (Claude Code Bash, Codex
// exec_command / shell / local_shell, Gemini run_shell_command, Cline
// execute_command, Cursor run_terminal_cmd, Aider shell) whose input names
// a command, as a string or an argv list. pos-embed indexes these scripts
// as what the agent did. fast reads the input (nil: in
// Go).
func ShellCommand(fast *jsontext.Fast, t schema.Tool) (string, bool) {
	if !shellTools[strings.ToLower(t.Name)] || len(t.Input) == 0 || t.Input[0] != '{' {
		return "", false
	}
	in, ok := inputMembers(fast, t.Input)
	if !ok {
		return "", false
	}
	script, _ := shellCommand(in)
	script = strings.TrimSpace(script)
	return script, script != ""
}
