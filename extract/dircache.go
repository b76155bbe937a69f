package extract

import (
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// DirCache keeps the entries of the directories walks read, for the next
// walk in the same process: a resident pos-sync walks the same homes at
// every sync, where almost no directory changed. A directory's entries are
// used again while its inode and modification time are those they were
// read with, and only when that time was already dirSettle old when they
// were read: adding, removing or renaming an entry sets the time, but a
// file system's clock is coarse, and a change made just after the listing
// could otherwise leave the time as it was. Each entry's Info is read
// afresh (a file's size and time are not kept). Safe for concurrent use.
type DirCache struct {
	mu   sync.Mutex
	dirs map[string]cachedDir
}

type cachedDir struct {
	ino   uint64
	mtime int64
	ents  []fs.DirEntry
}

// dirSettle is how old a directory's modification time must be, when its
// entries are read, for them to be kept.
const dirSettle = 2 * time.Second

// NewDirCache returns an empty cache.
func NewDirCache() *DirCache { return &DirCache{dirs: map[string]cachedDir{}} }

// readDir reads dir's entries, from the cache when c holds them and the
// directory has not changed since.
func (c *DirCache) readDir(dir string) ([]fs.DirEntry, error) {
	if c == nil {
		return readDir(dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return readDir(dir) // its error, as the walk reports it
	}
	key := cachedDir{mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		key.ino = uint64(st.Ino)
	}
	c.mu.Lock()
	e, ok := c.dirs[dir]
	c.mu.Unlock()
	if ok && e.ino == key.ino && e.mtime == key.mtime {
		return e.ents, nil
	}
	readAt := time.Now()
	ents, err := readDir(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && readAt.Sub(fi.ModTime()) >= dirSettle {
		key.ents = ents
		c.dirs[dir] = key
	} else {
		delete(c.dirs, dir)
	}
	return ents, err
}
