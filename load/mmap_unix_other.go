//go:build unix && !linux

package load

// populate: pages are mapped as they are read.
func populate([]byte) {}
