//go:build unix && !linux

package load

// mapPopulate: no such flag; pages are mapped as they are read.
const mapPopulate = 0
