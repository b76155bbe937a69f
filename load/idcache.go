package load

import (
	"os"
	"sync"
)

// IDCache keeps the ids and content hashes of the part files loads read,
// for the next load in the same process: a resident pos-sync loads a few
// rows into the same partitions turn after turn, and would otherwise read
// every file of each again. A part file is written once under a temporary
// name and never changed after its rename, and its name is made for it
// alone (the run's time and a random part), so a file with the same path,
// size and modification time holds the same ids, even a copy of it (a
// lake restored from a backup); one that differs in any is read again. Safe for concurrent use by the lanes.
type IDCache struct {
	mu    sync.Mutex
	files map[string]*fileIDs
	held  int // ids held in all
	max   int
	clock uint64
	hits  int // files served from the cache
}

type fileKey struct {
	size  int64
	mtime int64 // nanoseconds
}

type fileIDs struct {
	key         fileKey
	ids, hashes []uint64
	lastUsed    uint64
}

// NewIDCache returns a cache that holds up to max ids (16 bytes each with
// their hashes), dropping the files least recently used past that.
func NewIDCache(max int) *IDCache {
	return &IDCache{files: map[string]*fileIDs{}, max: max}
}

// addIDs adds the ids and content hashes of the part file at path to idx,
// from the cache when it holds this very file, else read (and kept).
func (c *IDCache) addIDs(path string, idx map[uint64]uint64) error {
	if c == nil {
		return readIDs(path, func(ids, hashes []uint64) { addTo(idx, ids, hashes) })
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	key := fileKey{fi.Size(), fi.ModTime().UnixNano()}
	c.mu.Lock()
	e := c.files[path]
	if e != nil && e.key == key {
		c.clock++
		e.lastUsed = c.clock
		c.hits++
		c.mu.Unlock()
		addTo(idx, e.ids, e.hashes)
		return nil
	}
	c.mu.Unlock()
	n := &fileIDs{key: key}
	err = readIDs(path, func(ids, hashes []uint64) {
		n.ids = append(n.ids, ids...)
		n.hashes = append(n.hashes, hashes...)
	})
	if err != nil {
		return err
	}
	addTo(idx, n.ids, n.hashes)
	c.put(path, n)
	return nil
}

func (c *IDCache) put(path string, n *fileIDs) {
	if len(n.ids) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.files[path]; old != nil {
		c.held -= len(old.ids)
	}
	c.clock++
	n.lastUsed = c.clock
	c.files[path] = n
	c.held += len(n.ids)
	for c.held > c.max {
		var oldest string
		for p, e := range c.files {
			if oldest == "" || e.lastUsed < c.files[oldest].lastUsed {
				oldest = p
			}
		}
		c.held -= len(c.files[oldest].ids)
		delete(c.files, oldest)
	}
}

func addTo(idx map[uint64]uint64, ids, hashes []uint64) {
	for i, id := range ids {
		idx[id] = hashes[i]
	}
}
