package rollup

// CacheFile is the rollup file whose rows c keeps.
func CacheFile(c *Cache) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.file.path
}
