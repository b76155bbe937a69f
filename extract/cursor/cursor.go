package cursor

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/cursor/about"
)

// AdapterVersion changes when the records this adapter emits change.
const AdapterVersion = "1"

const platform = about.Name

// dbName is the file Cursor (like VS Code) keeps its state in.
const dbName = "state.vscdb"

// Adapter is the Cursor extractor.
type Adapter struct{}

func init() { extract.Register(Adapter{}) }

// Platform implements extract.Adapter.
func (Adapter) Platform() string { return platform }

// UserDirs are Cursor's User directories for the options: on Linux
// $XDG_CONFIG_HOME/Cursor/User (default ~/.config), on macOS
// ~/Library/Application Support/Cursor/User, on Windows
// %APPDATA%\Cursor\User.
func UserDirs(opt *extract.Options) []string {
	return userDirs(opt, runtime.GOOS)
}

func userDirs(opt *extract.Options, goos string) []string {
	base := opt.UserConfigDir(goos)
	if base == "" {
		return nil
	}
	return []string{filepath.Join(base, "Cursor", "User")}
}

// ProjectsDir is where Cursor writes agent transcripts: ~/.cursor/projects.
func ProjectsDir(opt *extract.Options) string {
	return opt.InHome(".cursor", "projects")
}

// roots returns where to look for databases and for agent transcripts.
// A root may be a User directory (or the Cursor directory above it), a
// database, a workspaceStorage directory, ~/.cursor, a projects or an
// agent-transcripts directory, a transcript, or any directory to search.
func roots(opt *extract.Options) (dbs, transcripts []string) {
	if len(opt.Roots) == 0 {
		for _, u := range UserDirs(opt) {
			dbs = append(dbs, filepath.Join(u, "globalStorage", dbName), filepath.Join(u, "workspaceStorage"))
		}
		if p := ProjectsDir(opt); p != "" {
			transcripts = append(transcripts, p)
		}
		return dbs, transcripts
	}
	for _, r := range opt.Roots {
		user := ""
		switch {
		case extract.IsDir(filepath.Join(r, "globalStorage")) || extract.IsDir(filepath.Join(r, "workspaceStorage")):
			user = r
		case extract.IsDir(filepath.Join(r, "User", "globalStorage")) || extract.IsDir(filepath.Join(r, "User", "workspaceStorage")):
			user = filepath.Join(r, "User")
		}
		if user != "" {
			// A User directory: only its databases, not the rest of it
			// (History, snippets, extension storage).
			dbs = append(dbs, filepath.Join(user, "globalStorage", dbName), filepath.Join(user, "workspaceStorage"))
			continue
		}
		if filepath.Base(filepath.Clean(r)) == ".cursor" && extract.IsDir(filepath.Join(r, "projects")) {
			transcripts = append(transcripts, filepath.Join(r, "projects"))
			continue
		}
		dbs = append(dbs, r)
		transcripts = append(transcripts, r)
	}
	return dbs, transcripts
}

// Locations implements extract.Adapter.
func (Adapter) Locations(opt extract.Options) []string {
	return extract.JoinLocations(roots(&opt))
}

// rootFiles are the roots that name a file: such a file is read whatever
// its name. A root is followed if it is a link.
func rootFiles(list []string) map[string]bool {
	m := map[string]bool{}
	for _, r := range list {
		if fi, err := os.Stat(r); err == nil && fi.Mode().IsRegular() {
			if a, err := filepath.Abs(r); err == nil {
				m[a] = true
			}
		}
	}
	return m
}

// findDatabases returns the state.vscdb files under the roots (a root that
// is a file is taken if it is a .vscdb). Backups (state.vscdb.backup) are
// not read: they repeat the database.
func findDatabases(ctx context.Context, opt *extract.Options, list []string) ([]extract.SourceFile, error) {
	given := rootFiles(list)
	return opt.Walk(ctx, list, extract.Match{Name: func(path string) bool {
		if given[path] {
			return strings.HasSuffix(path, ".vscdb")
		}
		return filepath.Base(path) == dbName
	}})
}

// findTranscripts returns the agent transcripts under the roots: .jsonl and
// .txt files below an agent-transcripts directory. When a conversation has
// both a .jsonl and a legacy .txt, only the .jsonl is read.
func findTranscripts(ctx context.Context, opt *extract.Options, list []string) ([]extract.SourceFile, error) {
	given := rootFiles(list)
	inFolder := func(path string) bool {
		return slices.Contains(strings.Split(filepath.ToSlash(filepath.Dir(path)), "/"), "agent-transcripts")
	}
	files, err := opt.Walk(ctx, list, extract.Match{
		Name: func(path string) bool {
			ext := filepath.Ext(path)
			return (ext == ".jsonl" || ext == ".txt") && (given[path] || inFolder(path))
		},
		Content: func(path string) (bool, error) {
			if inFolder(path) || filepath.Ext(path) == ".txt" {
				return true, nil
			}
			// A file named on the command line outside an
			// agent-transcripts folder may be another tool's: take it
			// only if it reads as one.
			return looksLikeTranscript(opt, path)
		},
	})
	if err != nil {
		return nil, err
	}
	hasJSONL := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".jsonl") {
			id := transcriptIdentity(f.Path)
			hasJSONL[id.session+"/"+id.agent] = true
		}
	}
	out := files[:0]
	for _, f := range files {
		if id := transcriptIdentity(f.Path); strings.HasSuffix(f.Path, ".txt") && hasJSONL[id.session+"/"+id.agent] {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// Extract implements extract.Adapter.
func (a Adapter) Extract(ctx context.Context, opt extract.Options, emit extract.Emit) error {
	opt.Platform = Adapter{}.Platform() // keys this adapter's watermarks
	dbRoots, trRoots := roots(&opt)
	dbFiles, err := findDatabases(ctx, &opt, dbRoots)
	if err != nil {
		return err
	}
	trFiles, err := findTranscripts(ctx, &opt, trRoots)
	if err != nil {
		return err
	}
	r := &run{opt: &opt}
	// Which databases to read: changed since their watermark (the main
	// file or its -wal) and not older than --since.
	var read []*dbFile
	for _, f := range dbFiles {
		d, err := statDB(&opt, f.Path)
		if err != nil {
			if err := opt.SkipFile(f.Path, err); err != nil {
				return err
			}
			continue
		}
		if !r.wanted(d) {
			continue
		}
		read = append(read, d)
	}
	if len(read) == 0 && len(trFiles) == 0 {
		return nil
	}
	// Every database, read or not, says which project and title its
	// composers have and which conversations it holds.
	if r.idx, err = buildIndex(ctx, &opt, dbFiles, trFiles); err != nil {
		return err
	}
	workers := opt.WorkerCount()
	n := len(read) + len(trFiles)
	return extract.Ordered(ctx, workers, n, func(ctx context.Context, i int, emit extract.Emit) error {
		if i < len(read) {
			return opt.FileDone(r.database(ctx, read[i], emit))
		}
		sf := trFiles[i-len(read)]
		return opt.FileDone(opt.ReadSource(sf.Path, func(src *extract.Source) error {
			return r.transcript(ctx, sf, src, emit)
		}))
	}, emit)
}

// run is the state of one extraction, shared (read-only) by its jobs.
type run struct {
	opt *extract.Options
	idx *index
}

// fileURIPath turns a file:// URI into a local path; other URIs (remote
// workspaces) are returned as they are.
func fileURIPath(s string) string {
	if !strings.HasPrefix(s, "file:") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" {
		return s
	}
	p := u.Path
	// file:///c%3A/Users/x -> c:/Users/x
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' && isLetter(p[1]) {
		p = p[1:]
	}
	if u.Host != "" && u.Host != "localhost" {
		p = "//" + u.Host + p
	}
	return p
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// looksLikeTranscript reports whether a .jsonl file starts with a Cursor
// agent transcript line: {"role": "user"|"assistant", "message": …}, with
// none of the members other tools' lines carry at the top (type,
// sessionId, payload).
func looksLikeTranscript(opt *extract.Options, path string) (bool, error) {
	probe, err := opt.FirstObject(path)
	if err != nil {
		return false, err
	}
	var role string
	json.Unmarshal(probe["role"], &role)
	_, msg := probe["message"]
	_, typ := probe["type"]
	_, sid := probe["sessionId"]
	_, payload := probe["payload"]
	return (role == "user" || role == "assistant") && msg && !typ && !sid && !payload, nil
}
