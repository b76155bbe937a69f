// Package dircache keeps the entries of directories a process lists again
// and again: a resident pos-sync walks the same homes and lists the same
// lake partitions at every sync, and pos-mcp lists the lake at every
// search, where almost no directory changed in between.
package dircache

import (
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// Cache keeps directories' entries. A directory's entries are used again
// while its inode and modification time are those they were read with,
// and only when that time was already Settle old when they were read:
// adding, removing or renaming an entry sets the time, but a file
// system's clock is coarse, and a change made just after the listing
// could otherwise leave the time as it was. An entry's Info is not kept:
// a file's size and time are read afresh. A nil Cache reads every
// directory each time. Safe for concurrent use.
type Cache struct {
	read func(string) ([]fs.DirEntry, error)
	mu   sync.Mutex
	dirs map[string]entry
}

type entry struct {
	ino   uint64
	mtime int64
	ents  []fs.DirEntry
}

// Settle is how old a directory's modification time must be, when its
// entries are read, for them to be kept.
const Settle = 2 * time.Second

// New returns an empty Cache that reads directories with read (nil:
// os.ReadDir, entries in name order).
func New(read func(dir string) ([]fs.DirEntry, error)) *Cache {
	if read == nil {
		read = os.ReadDir
	}
	return &Cache{read: read, dirs: map[string]entry{}}
}

// ReadDir reads dir's entries, from the cache when it holds them and the
// directory has not changed since. The entries are shared: the caller
// must not change the slice.
func (c *Cache) ReadDir(dir string) ([]fs.DirEntry, error) {
	if c == nil {
		return os.ReadDir(dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return c.read(dir) // its error, as the reader reports it
	}
	key := entry{mtime: fi.ModTime().UnixNano()}
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
	ents, err := c.read(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && readAt.Sub(fi.ModTime()) >= Settle {
		key.ents = ents
		c.dirs[dir] = key
	} else {
		delete(c.dirs, dir)
	}
	return ents, err
}

// Kept reports whether c keeps dir's entries.
func (c *Cache) Kept(dir string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.dirs[dir]
	return ok
}

// Forget drops every directory c keeps.
func (c *Cache) Forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dirs = map[string]entry{}
}
