package extract

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// SourceFile is a file an adapter will read.
type SourceFile struct {
	Path string
	Info fs.FileInfo
}

// Match tells an adapter's files among the entries under its roots.
type Match struct {
	// Name reports, from the path alone and without I/O, whether a file
	// there would be one of the adapter's. An entry whose name matches but
	// that is not a regular file (a directory, a symbolic link not
	// followed, a named pipe, a socket, a device) is reported as skipped,
	// "path: reason", and never opened.
	Name func(path string) bool
	// Content, if set, is also asked about a regular file whose name
	// matches, and may look inside it (with Options.FirstLine or OpenFile):
	// a root may hold other tools' files under the same kind of name. An
	// error (the file cannot be opened) reports the file as skipped.
	Content func(path string) (bool, error)
}

// Walk finds the files under roots that m matches, sorted by modification
// time (oldest first, so an original session is read before a session that
// replays it) and then by path.
//
// A root that does not exist is passed over; a root that is a file is
// taken if it matches; a root that is a symbolic link is followed (the user
// or the platform's layout named it). Below a root, symbolic links are not
// followed unless Options.FollowLinks: one named like the adapter's files
// is reported as skipped (ErrSymlink). With FollowLinks, a link to a
// directory is searched unless it loops back to a directory above it, and
// a file reached by several paths is read once, by the first path in
// order.
//
// Every entry that cannot be taken is reported through Options.Skip as
// "path: reason" and counted, after the walk and in path order, and the
// walk goes on: a root or a directory that cannot be read, and every entry
// named like the adapter's files that is not a regular file, or that
// vanished before it could be looked at. Under --strict the first report
// ends the walk with its error. A cancelled ctx ends it with ctx's error.
//
// Directories are read, and m's functions called, on several goroutines at
// once: they must be safe for concurrent use.
func (o *Options) Walk(ctx context.Context, roots []string, m Match) ([]SourceFile, error) {
	w := &walker{o: o, m: m, ctx: ctx, slots: make(chan struct{}, walkWorkers-1)}
	for _, root := range roots {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		root, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			w.skip(root, err)
			continue
		}
		if fi.IsDir() {
			w.tree(root)
			continue
		}
		path := root
		if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			// A root that links to a file is read where the link points,
			// which the later opens, not following links, can reach.
			if real, err := filepath.EvalSymlinks(root); err == nil {
				path = real
			}
		}
		w.file(root, path, fi)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := w.report(); err != nil {
		return nil, err
	}
	return w.result(), nil
}

// walkWorkers is how many directories a walk reads at once. The walk comes
// before any file is read, on the path of every sync, and one directory
// after another it spends its time waiting on readdir and lstat; a few at
// once overlap those waits without taking the CPUs the adapters read with.
const walkWorkers = 4

type walker struct {
	o     *Options
	m     Match
	ctx   context.Context
	slots chan struct{} // goroutines besides the caller's
	wg    sync.WaitGroup

	mu      sync.Mutex
	found   []SourceFile
	real    []string // with FollowLinks: each found file's real path
	skipped []skippedEntry
}

type skippedEntry struct {
	path string
	err  error
}

func (w *walker) skip(path string, err error) {
	w.mu.Lock()
	w.skipped = append(w.skipped, skippedEntry{path, err})
	w.mu.Unlock()
}

// tree searches the directory root, several directories at once.
func (w *walker) tree(root string) {
	var chain []string
	if w.o.FollowLinks {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			chain = []string{real}
		}
	}
	w.visit(root, chain)
	w.wg.Wait()
}

// visit reads one directory. chain holds, with FollowLinks, the real paths
// of the directories from the root down to dir: a link to one of them
// would loop.
func (w *walker) visit(dir string, chain []string) {
	if w.ctx.Err() != nil {
		return
	}
	ents, err := w.o.readDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// What was read before the error is still searched.
		w.skip(dir, err)
	}
	for _, d := range ents {
		path := filepath.Join(dir, d.Name())
		switch t := d.Type(); {
		case t.IsDir():
			if w.m.Name(path) {
				w.skip(path, &NotRegularError{Mode: fs.ModeDir})
			}
			w.descend(path, chain)
		case t&fs.ModeSymlink != 0:
			w.link(path, chain)
		case t.IsRegular():
			if !w.m.Name(path) {
				continue
			}
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				err = ErrVanished
			}
			if err != nil {
				w.skip(path, err)
				continue
			}
			w.file(path, path, fi)
		default:
			if w.m.Name(path) {
				w.skip(path, &NotRegularError{Mode: t})
			}
		}
	}
}

// descend searches a directory below the one being read, on another
// goroutine when one is free.
func (w *walker) descend(path string, chain []string) {
	if w.o.FollowLinks {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			if slices.Contains(chain, real) {
				return // a link back to a directory above: a loop
			}
			chain = append(slices.Clip(chain), real)
		}
	}
	select {
	case w.slots <- struct{}{}:
		w.wg.Go(func() {
			w.visit(path, chain)
			<-w.slots
		})
	default:
		w.visit(path, chain)
	}
}

// link handles a symbolic link below a root.
func (w *walker) link(path string, chain []string) {
	if !w.o.FollowLinks {
		if w.m.Name(path) {
			w.skip(path, ErrSymlink)
		}
		return
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if w.m.Name(path) {
			w.skip(path, errors.New("symbolic link to nothing"))
		}
	case err != nil:
		if w.m.Name(path) {
			w.skip(path, err)
		}
	case fi.IsDir():
		if w.m.Name(path) {
			w.skip(path, &NotRegularError{Mode: fs.ModeDir})
		}
		w.descend(path, chain)
	default:
		w.file(path, path, fi)
	}
}

// file takes a file whose name is name (as the walk found it) and that is
// read at path, if it matches.
func (w *walker) file(name, path string, fi fs.FileInfo) {
	if !w.m.Name(name) {
		return
	}
	if err := regular(fi); err != nil {
		w.skip(path, err)
		return
	}
	if w.m.Content != nil {
		ok, err := w.m.Content(path)
		if err != nil {
			w.skip(path, err)
			return
		}
		if !ok {
			return
		}
	}
	real := ""
	if w.o.FollowLinks {
		real, _ = filepath.EvalSymlinks(path)
	}
	w.mu.Lock()
	w.found = append(w.found, SourceFile{Path: path, Info: fi})
	w.real = append(w.real, real)
	w.mu.Unlock()
}

// report hands what the walk passed over to Options.SkipFile, in path
// order, each path once.
func (w *walker) report() error {
	slices.SortStableFunc(w.skipped, func(a, b skippedEntry) int { return cmp.Compare(a.path, b.path) })
	for i, s := range w.skipped {
		if i > 0 && w.skipped[i-1].path == s.path {
			continue
		}
		if err := w.o.SkipFile(s.path, s.err); err != nil {
			return err
		}
	}
	return nil
}

// result is the files found, each once, in reading order. A file found
// through several roots (a root inside another) is one; with FollowLinks,
// a file reached through several paths is read by the least of them.
func (w *walker) result() []SourceFile {
	type entry struct {
		f    SourceFile
		real string
	}
	all := make([]entry, len(w.found))
	for i, f := range w.found {
		all[i] = entry{f, w.real[i]}
	}
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.f.Path, b.f.Path) })
	seen := map[string]bool{}
	out := make([]SourceFile, 0, len(all))
	for _, e := range all {
		key := e.f.Path
		if e.real != "" {
			key = e.real
		}
		if seen[key] || seen[e.f.Path] {
			continue
		}
		seen[key], seen[e.f.Path] = true, true
		out = append(out, e.f)
	}
	slices.SortStableFunc(out, func(a, b SourceFile) int {
		return cmp.Or(a.Info.ModTime().Compare(b.Info.ModTime()), cmp.Compare(a.Path, b.Path))
	})
	return out
}

// readDir reads a directory's entries unsorted (the walk sorts what it
// keeps), following dir itself if it is a symbolic link (a root, or a link
// followed). Entries read before an error are returned with it.
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// IsDir reports whether p is a directory (or a link to one): a root that
// holds a platform's own folder layout is searched in those folders only.
func IsDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// JoinLocations joins the lists of directories an adapter searches for its
// kinds of files (transcripts, plans, databases) into the one list
// Adapter.Locations gives: in order, each directory once.
func JoinLocations(lists ...[]string) []string {
	var out []string
	for _, list := range lists {
		for _, d := range list {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}
