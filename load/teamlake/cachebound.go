package teamlake

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// CacheUse is a cache of a shared lake found beside another: its
// directory, its size and when a fetch last used it.
type CacheUse struct {
	Dir  string
	Size int64
	Used time.Time
}

// BoundCaches keeps the caches in the directory that holds cache (one
// cache a shared lake, as the default caches are laid out) within max
// bytes together: it removes the other caches, the least recently used
// first, until they fit or only cache is left. It returns those it
// removed and the size of cache itself, which it never removes: a cache
// larger than max is the caller's to report. A directory that does not
// hold a fetched cache is not counted or touched.
func BoundCaches(cache string, max int64) (removed []CacheUse, own int64, err error) {
	ents, err := os.ReadDir(filepath.Dir(cache))
	if err != nil {
		return nil, 0, err
	}
	var others []CacheUse
	var total int64
	for _, e := range ents {
		dir := filepath.Join(filepath.Dir(cache), e.Name())
		fi, err := os.Stat(filepath.Join(dir, "_state", "teamlake"))
		if !e.IsDir() || err != nil || !fi.IsDir() {
			continue
		}
		u := CacheUse{Dir: dir, Used: fi.ModTime()}
		if lk, err := os.Stat(filepath.Join(dir, "_state", "lock")); err == nil && lk.ModTime().After(u.Used) {
			u.Used = lk.ModTime()
		}
		if u.Size, err = dirSize(dir); err != nil {
			return nil, 0, err
		}
		total += u.Size
		if filepath.Clean(dir) == filepath.Clean(cache) {
			own = u.Size
			continue
		}
		others = append(others, u)
	}
	slices.SortFunc(others, func(a, b CacheUse) int { return a.Used.Compare(b.Used) })
	for _, u := range others {
		if total <= max {
			break
		}
		if err := os.RemoveAll(u.Dir); err != nil {
			return removed, own, err
		}
		removed = append(removed, u)
		total -= u.Size
	}
	return removed, own, nil
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
