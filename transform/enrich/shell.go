package enrich

import (
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// shellTools are the tools, across platforms, that run a shell command:
// Claude Code Bash, Codex shell / exec_command / local_shell, Gemini
// run_shell_command, Cline execute_command, Cursor run_terminal_cmd, Aider
// shell.
var shellTools = map[string]bool{
	"bash": true, "shell": true, "exec_command": true, "local_shell": true, "local_shell_call": true, "shell_command": true,
	"run_shell_command": true, "execute_command": true, "run_terminal_cmd": true, "container.exec": true,
}

// maxScript bounds the command text parsed for file names.
const maxScript = 64 << 10

// shellCommand returns the script a shell tool ran and the directory it ran
// in, from its input: "command" or "cmd" as a string or an argv list
// (["bash", "-lc", "script"] is the script), and "workdir", "cwd" or "dir".
func shellCommand(in map[string][]byte) (script, dir string) {
	for _, k := range []string{"workdir", "cwd", "dir", "working_directory"} {
		if v, ok := in[k]; ok {
			if s, ok := jsonString(v); ok && s != "" {
				dir = s
				break
			}
		}
	}
	for _, k := range []string{"command", "cmd"} {
		v, ok := in[k]
		if !ok || len(v) == 0 {
			continue
		}
		switch v[0] {
		case '"':
			script, _ = jsonString(v)
		case '[':
			argv, ok := jsonStrings(v)
			if !ok || len(argv) == 0 {
				continue
			}
			if len(argv) >= 3 && isShell(argv[0]) && (argv[1] == "-c" || argv[1] == "-lc" || argv[1] == "-ic") {
				script = argv[2]
				break
			}
			quoted := make([]string, 0, len(argv))
			for _, a := range argv {
				q, err := syntax.Quote(a, syntax.LangBash)
				if err != nil {
					return "", dir
				}
				quoted = append(quoted, q)
			}
			script = strings.Join(quoted, " ")
		}
		if script != "" {
			break
		}
	}
	return script, dir
}

func isShell(p string) bool {
	switch path.Base(p) {
	case "bash", "sh", "zsh", "dash", "ksh":
		return true
	}
	return false
}

// parsers keeps Bash parsers for reuse: a new one allocates its buffers
// again, a sixth of the time of parsing a typical command.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// shellFiles returns the files a shell script names, with what the command
// does to them: reads (cat, head, tail, sed -n, wc …), edits (sed -i),
// writes (touch, tee, cp's target, > and >> redirections), deletions (rm,
// mv's sources) and searches (grep, rg, find, ls). Only plain words count:
// a name built from variables or globs is not a file name this can know.
// A script that does not parse names nothing.
func shellFiles(script string) []patchFile {
	if len(script) > maxScript {
		return nil
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(script), "")
	parsers.Put(p)
	if err != nil {
		return nil
	}
	var out []patchFile
	add := func(p, action string) {
		if !plausiblePath(p) || len(out) >= 100 {
			return
		}
		out = append(out, patchFile{path: p, action: action})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			for _, r := range x.Redirs {
				if r.N != nil || r.Word == nil {
					continue // 2>&1, 2>/dev/null: not the command's files
				}
				p, ok := wordString(r.Word)
				if !ok {
					continue
				}
				switch r.Op {
				case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut:
					add(p, ActionWrite)
				case syntax.RdrIn:
					add(p, ActionRead)
				}
			}
		case *syntax.CallExpr:
			args := make([]string, 0, len(x.Args))
			for _, w := range x.Args {
				s, _ := wordString(w) // "" for a word that is not plain
				args = append(args, s)
			}
			callFiles(args, add)
		}
		return true
	})
	return out
}

// wordString is the value of a word made of plain and quoted text only.
func wordString(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// plausiblePath rejects what is surely not a file name: options, devices,
// URLs, globs, variables, the working directory itself.
func plausiblePath(p string) bool {
	switch p {
	case "", ".", "..", "./", "/", "~", "-", "--":
		return false
	}
	if strings.Trim(p, "0123456789") == "" {
		return false // a count that an option took, not a file
	}
	return p[0] != '-' && p[0] != '~' && !strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/proc/") &&
		!strings.Contains(p, "://") && !strings.ContainsAny(p, "*?[{$`\n") && len(p) <= 1024
}

// valueOpts are, per command, the options that take the next word as
// their value (so that word is not a file).
var valueOpts = map[string][]string{
	"head": {"-n", "-c"}, "tail": {"-n", "-c"},
	"grep": {"-e", "-f", "-A", "-B", "-C", "-m", "--regexp", "--file", "--max-count", "--context",
		"--after-context", "--before-context", "--include", "--exclude", "--exclude-dir", "--label"},
	"rg": {"-e", "-f", "-A", "-B", "-C", "-m", "-g", "-t", "-T", "-M", "-j", "--regexp", "--file", "--glob", "--iglob",
		"--type", "--type-not", "--max-count", "--context", "--after-context", "--before-context", "--max-columns",
		"--threads", "--sort", "--sortr", "--max-depth", "--max-filesize", "--type-add"},
	"sed":  {"-e", "-f", "-l", "--expression", "--file"},
	"tree": {"-L", "-I", "-P", "--filelimit"},
	"du":   {"-d", "--max-depth", "--exclude"},
	"ls":   {"-I", "--ignore", "-w", "--width", "-T"},
}

// callFiles adds the files of one simple command.
func callFiles(args []string, add func(p, action string)) {
	for len(args) > 0 {
		switch path.Base(args[0]) {
		case "sudo", "time", "nohup", "nice", "command", "builtin", "exec":
			args = args[1:]
			continue
		}
		break
	}
	if len(args) == 0 || args[0] == "" {
		return
	}
	cmd := path.Base(args[0])
	// operands: the arguments that are not options (after "--" all are).
	var ops []string
	var flags []string
	dashdash := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case dashdash:
			ops = append(ops, a)
		case a == "--":
			dashdash = true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			if slices.Contains(valueOpts[optCmd(cmd)], a) && i+1 < len(args) {
				i++
			}
		default:
			ops = append(ops, a)
		}
	}
	has := func(prefixes ...string) bool {
		for _, f := range flags {
			for _, p := range prefixes {
				if strings.HasPrefix(f, p) {
					return true
				}
			}
		}
		return false
	}
	each := func(list []string, action string) {
		for _, p := range list {
			add(p, action)
		}
	}
	switch cmd {
	case "cat", "head", "tail", "less", "more", "nl", "bat", "wc", "stat", "file", "xxd", "hexdump", "od", "tac", "strings", "source", ".":
		each(ops, ActionRead)
	case "sed", "perl":
		if len(ops) > 0 && ops[0] == "" && slices.Contains(flags, "-i") {
			ops = ops[1:] // BSD sed -i '': the suffix, empty
		}
		// The first operand is the script unless -e or -f gave it.
		if !has("-e", "-f", "--expression", "--file") && len(ops) > 0 {
			ops = ops[1:]
		}
		action := ActionRead
		if has("-i", "--in-place") || cmd == "perl" && has("-pi", "-i") {
			action = ActionEdit
		}
		each(ops, action)
	case "grep", "egrep", "fgrep", "rg", "ag", "ack":
		if !has("-e", "-f", "--regexp", "--file") && len(ops) > 0 {
			ops = ops[1:] // the pattern
		}
		each(ops, ActionSearch)
	case "find":
		// find's paths come before its expression.
		for i := 1; i < len(args); i++ {
			a := args[i]
			if a == "" || a[0] == '-' || a == "(" || a == "!" {
				break
			}
			add(a, ActionSearch)
		}
	case "ls", "tree", "du":
		each(ops, ActionSearch)
	case "touch", "tee":
		each(ops, ActionWrite)
	case "rm", "unlink", "shred":
		each(ops, ActionDelete)
	case "cp", "mv", "install":
		if len(ops) < 2 {
			return
		}
		src := ActionRead
		if cmd == "mv" {
			src = ActionDelete
		}
		each(ops[:len(ops)-1], src)
		add(ops[len(ops)-1], ActionWrite)
	}
}

// optCmd is the command whose options cmd shares.
func optCmd(cmd string) string {
	switch cmd {
	case "egrep", "fgrep":
		return "grep"
	case "ag", "ack":
		return "rg"
	}
	return cmd
}
