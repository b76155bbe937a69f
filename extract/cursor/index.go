package cursor

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
)

// index is what the databases of a run say about each other, gathered
// before any is read: a 2025 composer's body is in the global database but
// its project and title are in a workspace database's composer head, and an
// agent transcript repeats a conversation a database may hold. It is built
// from every database found, read or not (unchanged ones too), with one
// or two short read-only statements each on the live file.
type index struct {
	heads     map[string]*headInfo // composer id -> what a workspace database says of it
	composers map[string]bool      // composer ids with a composerData row
	bodied    map[string]bool      // conversations whose bodies a database holds
	projects  map[string]string    // database path -> its workspace's folder
	slugs     map[string]string    // lower-case project slug -> folder (agent transcripts)
	tmp       string               // where snapshots go ("": the system's)
}

// headInfo is a composer as a workspace database lists it.
type headInfo struct {
	name             string
	created, updated time.Time
	mode, forceMode  string
	project          string
	workspace        string // the workspaceStorage directory's name
}

// A workspace.json that cannot be read is reported through opt.SkipFile;
// the error is SkipFile's.
func buildIndex(ctx context.Context, opt *extract.Options, dbs []extract.SourceFile, transcripts []extract.SourceFile) (*index, error) {
	idx := &index{
		heads: map[string]*headInfo{}, composers: map[string]bool{}, bodied: map[string]bool{},
		projects: map[string]string{}, slugs: map[string]string{},
	}
	if runtime.GOOS == "windows" {
		idx.tmp = cmp.Or(opt.Getenv("TEMP"), opt.Getenv("TMP"))
	} else {
		idx.tmp = opt.Getenv("TMPDIR")
	}
	paths := make([]string, 0, len(dbs))
	for _, f := range dbs {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths) // the first workspace to list a composer names it
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		project, err := workspaceFolder(opt, filepath.Dir(p))
		if err != nil {
			if err := opt.SkipFile(filepath.Join(filepath.Dir(p), "workspace.json"), err); err != nil {
				return nil, err
			}
		}
		if project != "" {
			idx.projects[p] = project
			idx.slugs[strings.ToLower(slug(project))] = project
		}
		idx.scan(ctx, p, project)
	}
	return idx, nil
}

// scan adds what one live database says. Errors are ignored here: the
// database's own read reports them.
func (idx *index) scan(ctx context.Context, path, project string) {
	db, err := openLive(path)
	if err != nil {
		return
	}
	defer db.Close()
	item, kv, err := tables(ctx, db)
	if err != nil {
		return
	}
	if item {
		var v []byte
		if db.QueryRowContext(ctx, `SELECT value FROM ItemTable WHERE key = ?`, keyComposerData).Scan(&v) == nil {
			idx.addHeads(v, project, workspaceName(path))
		}
	}
	if kv {
		kvKeys(ctx, db, prefixComposer, func(k string) error {
			idx.composers[strings.TrimPrefix(k, prefixComposer)] = true
			return nil
		})
		idx.bubbleOwners(ctx, db)
	}
}

// addHeads records the composers a composer.composerData value lists.
func (idx *index) addHeads(v []byte, project, workspace string) {
	var list composerList
	if decode(v, &list) != nil {
		return
	}
	for _, el := range list.AllComposers {
		var c composer
		if decode(el, &c) != nil || c.ComposerID == "" {
			continue
		}
		if len(c.Conversation) > 0 {
			idx.bodied[c.ComposerID] = true
		}
		if _, ok := idx.heads[c.ComposerID]; ok {
			continue
		}
		h := &headInfo{name: c.title(), mode: modeString(c.UnifiedMode), forceMode: c.ForceMode, project: project, workspace: workspace}
		h.created, _ = c.CreatedAt.Time()
		h.updated, _ = c.LastUpdatedAt.Time()
		idx.heads[c.ComposerID] = h
	}
}

// bubbleOwners records the composers that have at least one bubble body.
func (idx *index) bubbleOwners(ctx context.Context, db *sql.DB) {
	rows, err := db.QueryContext(ctx, `SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ? AND value IS NOT NULL`, prefixBubble, prefixEnd(prefixBubble))
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var k sql.NullString
		if rows.Scan(&k) != nil {
			return
		}
		if c, _, ok := splitBubbleKey(k.String); ok {
			idx.bodied[c] = true
		}
	}
}

// splitBubbleKey splits "bubbleId:<composer>:<bubble>".
func splitBubbleKey(k string) (composerID, bubbleID string, ok bool) {
	rest, found := strings.CutPrefix(k, prefixBubble)
	if !found {
		return "", "", false
	}
	return strings.Cut(rest, ":")
}

// workspaceFolder reads the folder (or .code-workspace file's folder) a
// workspaceStorage directory belongs to from its workspace.json ("" when
// there is none). The error says why an existing one could not be read.
func workspaceFolder(opt *extract.Options, dir string) (string, error) {
	b, err := opt.ReadSmall(filepath.Join(dir, "workspace.json"), 1<<20)
	if b == nil || err != nil {
		return "", err
	}
	var w struct {
		Folder    string `json:"folder"`
		Workspace string `json:"workspace"`
	}
	if json.Unmarshal(b, &w) != nil {
		return "", nil
	}
	if w.Folder != "" {
		return fileURIPath(w.Folder), nil
	}
	if w.Workspace != "" {
		p := fileURIPath(w.Workspace)
		if i := strings.LastIndexAny(p, `/\`); i > 0 {
			return p[:i], nil
		}
		return p, nil
	}
	return "", nil
}

// workspaceName is the workspaceStorage directory a database is in, or "".
func workspaceName(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(filepath.Dir(dir)) == "workspaceStorage" {
		return filepath.Base(dir)
	}
	return ""
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// slug is how Cursor names a project's folder under ~/.cursor/projects:
// every run of characters other than ASCII letters and digits becomes '-',
// without leading or trailing '-'. It is lossy, so it is only ever used to
// match a folder known from a workspace.json.
func slug(folder string) string {
	return strings.Trim(nonAlnum.ReplaceAllString(folder, "-"), "-")
}
