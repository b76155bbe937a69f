//go:build !linux

package durable

import "errors"

// SyncFiles makes the files' data durable, one fsync each.
func SyncFiles(_ string, paths []string) error {
	for _, p := range paths {
		if err := fsync(p); err != nil {
			return err
		}
	}
	return nil
}

// SyncDirs makes renames in the directories durable.
func SyncDirs(_ string, dirs map[string]bool) error {
	for d := range dirs {
		fsync(d) // not every system can sync a directory; best effort
	}
	return nil
}

// ExchangeDirs is not available here: partitions are not compacted.
func ExchangeDirs(_, _ string) error { return errors.ErrUnsupported }
