package layout

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/internal/dircache"
)

// Listing keeps what PartitionFiles found between calls, for a process
// that searches the lake again and again (pos-mcp): listing a lake of a few
// hundred partitions otherwise opens and reads each of them on every
// search. Its answers are kept while the lake's state stamp (StateStamp,
// which every load changes when it completes) stays the same; once it
// changes, a directory is read again only when its modification time has
// changed, which a file added, renamed into it or removed changes. Forget
// drops everything (a file listed has vanished: a load is under way). A nil
// Listing reads every directory each time.
type Listing struct {
	dirs  *dircache.Cache
	mu    sync.Mutex
	stamp string
	files map[string][]string // PartitionFiles' answers under stamp
	// The whole tables' files under stamp, relative to their table's
	// directory (see tableFiles), by lake and table.
	tables map[string][]string
	// The kept listings (keptListing) read or written, for Forget.
	kept map[string]string // path -> the stamp it was trusted under
}

// NewListing returns an empty Listing.
func NewListing() *Listing {
	return &Listing{dirs: dircache.New(nil), files: map[string][]string{}, tables: map[string][]string{}, kept: map[string]string{}}
}

// Forget drops what l keeps.
func (l *Listing) Forget() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for path, stamp := range l.kept {
		// The next process lists the table again, and so does this one
		// (a lake it cannot write keeps the file).
		distrusted.Store(path, stamp)
		os.Remove(path)
	}
	l.dirs.Forget()
	l.files, l.stamp = map[string][]string{}, ""
	l.tables, l.kept = map[string][]string{}, map[string]string{}
}

// readDir is os.ReadDir, from the kept entries when dir has not changed
// (see dircache.Cache).
func (l *Listing) readDir(dir string) ([]fs.DirEntry, error) {
	if l == nil {
		return os.ReadDir(dir)
	}
	return l.dirs.ReadDir(dir)
}

// PartitionFiles is PartitionFiles, answered from what l keeps when it
// can.
func (l *Listing) PartitionFiles(lake, table, platform string, since, until time.Time) ([]string, error) {
	if l == nil {
		return l.partitionFiles(lake, table, platform, since, until)
	}
	stamp := StateStamp(lake)
	key := strings.Join([]string{lake, table, platform, since.UTC().Format(time.DateOnly), until.UTC().Format(time.DateOnly)}, "\x00")
	l.mu.Lock()
	if stamp != l.stamp {
		l.stamp, l.files, l.tables = stamp, map[string][]string{}, map[string][]string{}
	} else if out, ok := l.files[key]; ok {
		l.mu.Unlock()
		return slices.Clone(out), nil
	}
	l.mu.Unlock()
	var out []string
	rel, ok, err := l.tableFiles(lake, table, stamp, since.IsZero() && until.IsZero())
	if ok {
		out = windowOf(lake, table, rel, platform, since, until)
	} else if err == nil {
		out, err = l.partitionFiles(lake, table, platform, since, until)
	}
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if stamp == l.stamp {
		l.files[key] = slices.Clone(out)
	}
	l.mu.Unlock()
	return out, nil
}

// AppendParquetFiles is AppendParquetFiles, from what l keeps when dir
// has not changed.
func (l *Listing) AppendParquetFiles(out []string, dir string) ([]string, error) {
	ents, err := l.readDir(dir)
	if err != nil {
		return out, err
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".parquet") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

func (l *Listing) partitionFiles(lake, table, platform string, since, until time.Time) ([]string, error) {
	root := TableDir(lake, table)
	plats, err := l.readDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	from, to := "", ""
	if !since.IsZero() {
		from = since.UTC().Format(time.DateOnly)
	}
	if !until.IsZero() {
		to = until.UTC().Format(time.DateOnly)
	}
	var out []string
	for _, p := range plats {
		plat, ok := strings.CutPrefix(p.Name(), "platform=")
		if !ok || !p.IsDir() || platform != "" && plat != PartValue(platform) {
			continue
		}
		dates, err := l.readDir(filepath.Join(root, p.Name()))
		if err != nil {
			return nil, err
		}
		for _, d := range dates {
			date, ok := strings.CutPrefix(d.Name(), "date=")
			if !ok || !d.IsDir() || from != "" && date < from || to != "" && date > to {
				continue
			}
			if out, err = l.AppendParquetFiles(out, Dir(lake, table, plat, date)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
