package embed

import (
	"bytes"
	"slices"
	"strings"

	"github.com/pos-lake/pos/internal/excerpt"
)

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
	for line := range strings.SplitSeq(s, "\n") {
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
