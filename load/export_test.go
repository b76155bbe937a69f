package load

// ReadIDs exposes readIDs to the black-box tests of package load_test:
// through c (nil: no cache), into idx.
func ReadIDs(c *IDCache, path string, idx map[uint64]uint64) error { return c.addIDs(path, idx) }

// CacheHits is how many files c served without reading them.
func CacheHits(c *IDCache) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// WritersKept is how many closed writers p keeps.
func WritersKept(p *Writers) int { return p.kept() }
