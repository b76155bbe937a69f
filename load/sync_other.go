//go:build !linux

package load

import "errors"

// syncFiles makes the files' data durable, one fsync each.
func syncFiles(_ string, paths []string) error {
	for _, p := range paths {
		if err := fsync(p); err != nil {
			return err
		}
	}
	return nil
}

// syncDirs makes renames in the directories durable.
func syncDirs(_ string, dirs map[string]bool) error {
	for d := range dirs {
		fsync(d) // not every system can sync a directory; best effort
	}
	return nil
}

// exchangeDirs is not available here: partitions are not compacted.
func exchangeDirs(_, _ string) error { return errors.ErrUnsupported }
