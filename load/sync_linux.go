package load

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncFiles makes the files' data durable: one syncfs(2) of the lake's file
// system covers them all.
func syncFiles(lake string, _ []string) error {
	return syncfs(lake)
}

// syncDirs makes renames in the directories durable.
func syncDirs(lake string, _ map[string]bool) error {
	return syncfs(lake)
}

func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// exchangeDirs swaps two directories in one step (renameat2
// RENAME_EXCHANGE): a reader sees one or the other at each path, never
// neither.
func exchangeDirs(a, b string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			return errors.ErrUnsupported // a file system without it
		}
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
