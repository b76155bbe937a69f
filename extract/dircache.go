package extract

import (
	"io/fs"

	"github.com/pos-lake/pos/internal/dircache"
)

// NewDirCache returns a cache of the directories' entries walks read, for
// Options.Dirs: it reads a directory as a walk without one does.
func NewDirCache() *dircache.Cache { return dircache.New(readDir) }

// readDir reads dir's entries through o.Dirs, if set.
func (o *Options) readDir(dir string) ([]fs.DirEntry, error) {
	if o.Dirs == nil {
		return readDir(dir)
	}
	return o.Dirs.ReadDir(dir)
}
