// Package enrich finds what makes a conversation searchable beyond its
// words: the files its tools read and changed, the git commits they made,
// topic tags, and the decisions stated in it. It works on canonical records
// of every platform; pos-normalize applies it (each part can be switched
// off) and emits file_ref and decision records and exchange tags and
// commits.
//
// Everything here is heuristic and local: patterns and weights, no model.
package enrich

import (
	"cmp"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/lazyre"
	"github.com/pos-lake/pos/schema"
)

// Options choose the parts of the enrichment.
type Options struct {
	Files, Commits, Tags, Decisions bool
}

// All is every part.
var All = Options{Files: true, Commits: true, Tags: true, Decisions: true}

// Any reports whether any part is on.
func (o Options) Any() bool { return o.Files || o.Commits || o.Tags || o.Decisions }

// File actions.
const (
	ActionRead      = "read"
	ActionWrite     = "write"
	ActionEdit      = "edit"
	ActionDelete    = "delete"
	ActionSearch    = "search"
	ActionReference = "reference"
)

// pathKeys are the tool input members, across platforms, that name a file
// or directory: Claude Code (file_path, notebook_path, path), Cline
// (path), Cursor (target_file, relative_workspace_path), Gemini
// (absolute_path, file_path), and common variants.
var pathKeys = []string{"file_path", "notebook_path", "path", "target_file", "targetFile", "relative_workspace_path",
	"absolute_path", "absolutePath", "filePath", "filepath", "file", "filename", "target_notebook"}

// FileRefs returns the files a message's tool calls name, with what the
// tool did to them, plus the files the platform listed on the message.
// Relative paths are taken relative to the message's cwd. fast reads
// the tools' inputs (nil: in Go).
func FileRefs(fast *jsontext.Fast, m *schema.Record) []schema.FileRef {
	var out []schema.FileRef
	// addIn adds a path relative to dir; add, relative to the message's cwd.
	addIn := func(dir, p, action, tool string) {
		p = strings.TrimSpace(p)
		if p == "" || len(p) > 4096 || strings.ContainsAny(p, "\n\x00") {
			return
		}
		if !strings.HasPrefix(p, "/") && !isWindowsAbs(p) && dir != "" && !strings.Contains(p, "*") {
			p = joinCwd(dir, p)
		}
		for _, f := range out {
			if f.Path == p && f.Action == action {
				return
			}
		}
		out = append(out, schema.FileRef{Path: p, Action: action, Tool: tool, MessageID: m.ID})
	}
	add := func(p, action, tool string) { addIn(m.Cwd, p, action, tool) }
	for _, t := range m.Tools {
		if len(t.Input) == 0 || t.Name == "" {
			continue
		}
		action := toolAction(t.Name)
		if strings.EqualFold(t.Name, "apply_patch") || strings.Contains(string(t.Input), "*** Begin Patch") {
			for _, pf := range patchFiles(string(t.Input)) {
				add(pf.path, pf.action, t.Name)
			}
			continue
		}
		if t.Input[0] != '{' {
			continue
		}
		in, ok := inputMembers(fast, t.Input)
		if !ok {
			continue
		}
		if shellTools[strings.ToLower(t.Name)] {
			script, dir := shellCommand(in)
			for _, pf := range shellFiles(script) {
				addIn(cmp.Or(dir, m.Cwd), pf.path, pf.action, t.Name)
			}
			continue
		}
		for _, k := range pathKeys {
			v, ok := in[k]
			if !ok || len(v) == 0 || v[0] != '"' {
				continue
			}
			if s, ok := jsonString(v); ok {
				add(s, action, t.Name)
			}
		}
		// MultiEdit-style and Cursor-style lists of edits.
		if v, ok := in["edits"]; ok && len(v) > 0 && v[0] == '[' {
			if edits, ok := editStrings(fast, v); ok {
				for _, e := range edits {
					for _, k := range pathKeys {
						if s, ok := e[k]; ok {
							add(s, action, t.Name)
						}
					}
				}
			}
		}
	}
	for _, f := range m.Files {
		known := slices.ContainsFunc(out, func(r schema.FileRef) bool { return r.Path == f || path.Base(r.Path) == f })
		if !known {
			add(f, ActionReference, "")
		}
	}
	return out
}

func isWindowsAbs(p string) bool {
	return len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// toolAction guesses what a tool does to a file from its name, across the
// platforms' naming (Read, read_file, view, Edit, replace_in_file,
// str_replace, write_to_file, Glob, grep_search, list_files …).
func toolAction(name string) string {
	n := strings.ToLower(name)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(n, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("delete", "remove", "rm_file"):
		return ActionDelete
	case has("edit", "replace", "patch", "diff", "insert", "update"):
		return ActionEdit
	case has("write", "create", "save", "new_file"):
		return ActionWrite
	case has("grep", "glob", "search", "find", "list") || n == "ls":
		return ActionSearch
	case has("read", "view", "cat", "open", "fetch_file", "get_file"):
		return ActionRead
	}
	return ActionReference
}

type patchFile struct{ path, action string }

var patchRE = lazyre.New(`\*\*\* (Update|Add|Delete) File: ([^\n"\\]+)`)

// patchFiles reads the files of an apply_patch envelope (Codex):
// "*** Update File: path", "*** Add File: path", "*** Delete File: path".
func patchFiles(s string) []patchFile {
	var out []patchFile
	for _, m := range patchRE().FindAllStringSubmatch(s, -1) {
		action := ActionEdit
		switch m[1] {
		case "Add":
			action = ActionWrite
		case "Delete":
			action = ActionDelete
		}
		out = append(out, patchFile{path: strings.TrimSpace(m[2]), action: action})
	}
	return out
}

// Commit SHAs in git's output: "[main 3f2a9c1] message" (commit),
// "commit <40 hex>" (log, show), "abc1234..def5678  main -> main" (push).
// Each expression runs on one line that a cheap test picked.
var (
	commitRE = lazyre.New(`^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\] `)
	logRE    = lazyre.New(`^commit ([0-9a-f]{40})\b`)
	pushRE   = lazyre.New(`\b[0-9a-f]{7,40}\.\.\.?([0-9a-f]{7,40})\s+\S+ -> \S+`)
)

// Commits returns the commit SHAs git reported in a tool's output, in
// order, each once.
func Commits(text string) []string {
	// Each pattern needs one of these: most tool output has none, and is
	// passed over at memory speed instead of line by line.
	if !strings.Contains(text, "] ") && !strings.Contains(text, "commit ") && !strings.Contains(text, " -> ") {
		return nil
	}
	var out []string
	add := func(re *regexp.Regexp, line string) {
		if m := re.FindStringSubmatch(line); m != nil && !slices.Contains(out, m[1]) && len(out) < 50 {
			out = append(out, m[1])
		}
	}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimLeft(line, " ")
		switch {
		case len(line) > 10 && line[0] == '[':
			add(commitRE(), line)
		case strings.HasPrefix(line, "commit "):
			add(logRE(), line)
		case strings.Contains(line, " -> ") && strings.Contains(line, ".."):
			add(pushRE(), line)
		}
	}
	return out
}

// joinCwd resolves a relative path against a working directory in the
// directory's own style: a Windows cwd (C:\proj) joins with backslashes,
// so the same file named relatively and absolutely is one path.
func joinCwd(cwd, p string) string {
	if !isWindowsAbs(cwd) {
		return path.Join(cwd, p)
	}
	parts := strings.FieldsFunc(cwd, func(r rune) bool { return r == '\\' || r == '/' })
	for _, e := range strings.FieldsFunc(p, func(r rune) bool { return r == '\\' || r == '/' }) {
		switch {
		case e == ".":
		case e == ".." && len(parts) > 1:
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, e)
		}
	}
	if len(parts) == 1 {
		return parts[0] + `\`
	}
	return strings.Join(parts, `\`)
}
