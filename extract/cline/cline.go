// Package cline reads the task histories of Cline and of its forks Roo Code
// and Kilo Code: one folder per task, <globalStorage>/<extension>/tasks/<id>/,
// under each VS Code-family editor (VS Code, Insiders, VSCodium, Cursor,
// Windsurf, and their remote servers) and under Cline's own data directory
// ($CLINE_DATA_DIR, $CLINE_DIR/data or ~/.cline/data).
//
// A task folder holds JSON arrays that Cline rewrites whole:
//
//   - api_conversation_history.json, the messages as sent to the model
//     (Anthropic MessageParams: text, thinking, tool_use blocks; tool results
//     come back as user text blocks "[read_file for 'x'] Result: …" or as
//     tool_result blocks). Newer Cline and the forks add a ts to each.
//   - ui_messages.json, what the chat panel showed: {ts, type: say|ask, …},
//     tied to the api history by conversationHistoryIndex. Its
//     say:"api_req_started" rows carry each request's tokens and cost.
//   - task_metadata.json: files_in_context, model_usage,
//     environment_history.
//
// Both arrays are streamed element by element (encoding/json tokens), so a
// file of hundreds of MB is never held whole, and every element becomes one
// raw record keyed "<file>[i]". Messages are made from the api history: a
// user message is split into what the user typed (role user, opening an
// exchange), tool results (role tool) and text Cline injected (role system;
// its environment details stay in the raw record only). A message takes
// its time from the message itself when Cline wrote one, else from the ui
// rows of its place in the history (ts_precision derived), and an assistant
// message takes the tokens and cost of the requests that produced it. The
// text of attempt_completion, plan_mode_respond and ask_followup_question
// calls is the assistant's prose. A ui_messages.json without an api history
// yields its messages from the ui rows instead (completeness partial).
//
// One session record per task carries the title (the task's first line),
// the fork and host it came from, the extension version, models, modes,
// cost and the files in context.
package cline

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/cline/about"
)

// AdapterVersion changes when the records this adapter emits change.
const AdapterVersion = "1"

const platform = about.Name

// The files of a task folder this adapter reads.
const (
	apiFile  = "api_conversation_history.json"
	uiFile   = "ui_messages.json"
	metaFile = "task_metadata.json"
)

// Adapter is the Cline (and Roo Code, Kilo Code) extractor.
type Adapter struct{}

func init() { extract.Register(Adapter{}) }

// Platform implements extract.Adapter.
func (Adapter) Platform() string { return platform }

// Fork is one extension of the Cline family.
type Fork struct {
	Extension string // the VS Code extension id, as its globalStorage folder is named
	Name      string // the name kept in session metadata
}

// Forks are the extensions whose task folders this adapter reads.
var Forks = []Fork{
	{"saoudrizwan.claude-dev", "cline"},
	{"rooveterinaryinc.roo-cline", "roo-code"},
	{"kilocode.kilo-code", "kilo-code"},
}

// Hosts are the VS Code-family editors whose user folder may hold the
// extensions' global storage.
var Hosts = []string{"Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"}

// remoteServers are the folders under the home directory where the remote
// server of an editor (SSH, containers, Codespaces) keeps its user folder,
// as <server>/data/User.
var remoteServers = []string{".vscode-server", ".vscode-server-insiders", ".vscode-remote", ".cursor-server", ".windsurf-server"}

// userDirs are the editors' user folders on goos.
func userDirs(opt *extract.Options, goos string) []string {
	base := opt.UserConfigDir(goos)
	var out []string
	if base != "" {
		for _, h := range Hosts {
			out = append(out, filepath.Join(base, h, "User"))
		}
	}
	if goos != "windows" && opt.Home != "" {
		for _, s := range remoteServers {
			out = append(out, filepath.Join(opt.Home, s, "data", "User"))
		}
	}
	return out
}

// dataDir is Cline's own data directory (the CLI and the newer extension
// builds): $CLINE_DATA_DIR, else $CLINE_DIR/data, else ~/.cline/data.
func dataDir(opt *extract.Options) string {
	if v := strings.TrimSpace(opt.Getenv("CLINE_DATA_DIR")); v != "" {
		return v
	}
	if v := strings.TrimSpace(opt.Getenv("CLINE_DIR")); v != "" {
		return filepath.Join(v, "data")
	}
	return opt.InHome(".cline", "data")
}

// defaultRoots are the tasks folders to search on goos: each editor's
// global storage of each fork, and Cline's data directory. Only these
// folders are walked, never the home directory.
func defaultRoots(opt *extract.Options, goos string) []string {
	var out []string
	for _, u := range userDirs(opt, goos) {
		for _, f := range Forks {
			out = append(out, filepath.Join(u, "globalStorage", f.Extension, "tasks"))
		}
	}
	if d := dataDir(opt); d != "" {
		out = append(out, filepath.Join(d, "tasks"))
	}
	return out
}

// Locations implements extract.Adapter. A root given by --root may be a
// tasks folder, a task folder, a single file of a task (which stands for
// its task) or any folder holding task folders.
func (Adapter) Locations(opt extract.Options) []string {
	if len(opt.Roots) > 0 {
		return opt.Roots
	}
	return defaultRoots(&opt, runtime.GOOS)
}

// taskDir is a task folder and which of its files were found.
type taskDir struct {
	dir   string
	files map[string]bool // base name -> found by the walk
}

func isTaskFile(base string) bool {
	return base == apiFile || base == uiFile || base == metaFile
}

// Extract implements extract.Adapter.
func (a Adapter) Extract(ctx context.Context, opt extract.Options, emit extract.Emit) error {
	opt.Platform = Adapter{}.Platform() // keys this adapter's watermarks
	files, err := opt.Walk(ctx, a.Locations(opt), extract.Match{Name: func(path string) bool {
		return isTaskFile(filepath.Base(path))
	}})
	if err != nil {
		return err
	}
	tasks := group(files)
	return extract.Ordered(ctx, opt.WorkerCount(), len(tasks), func(ctx context.Context, i int, emit extract.Emit) error {
		r := &run{opt: &opt, emit: emit}
		return opt.FileDone(r.task(ctx, tasks[i]))
	}, emit)
}

// group gathers the files found into their task folders, in the order the
// walk found each folder's first file (oldest first).
func group(files []extract.SourceFile) []taskDir {
	idx := map[string]int{}
	var out []taskDir
	for _, f := range files {
		dir := filepath.Dir(f.Path)
		i, ok := idx[dir]
		if !ok {
			i = len(out)
			idx[dir] = i
			out = append(out, taskDir{dir: dir, files: map[string]bool{}})
		}
		out[i].files[filepath.Base(f.Path)] = true
	}
	return out
}

// origin is what a task folder's path tells about where it came from.
type origin struct {
	fork, ext, host string
}

// originOf reads the fork and the editor from a task folder's path:
// <host>/User/globalStorage/<extension>/tasks/<id>, or Cline's data
// directory (…/data/tasks/<id>).
func originOf(dir string) origin {
	parts := strings.FieldsFunc(filepath.ToSlash(dir), func(r rune) bool { return r == '/' || r == '\\' })
	var o origin
	for i, p := range parts {
		for _, f := range Forks {
			if strings.EqualFold(p, f.Extension) {
				o.fork, o.ext = f.Name, f.Extension
				if i >= 3 && strings.EqualFold(parts[i-1], "globalStorage") && strings.EqualFold(parts[i-2], "User") {
					o.host = parts[i-3]
					if o.host == "data" && i >= 4 {
						o.host = parts[i-4] // <server>/data/User
					}
				}
			}
		}
	}
	if o.fork == "" && slices.Contains(parts, ".cline") {
		o.fork = "cline"
	}
	return o
}
