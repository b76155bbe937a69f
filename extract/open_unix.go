//go:build unix

package extract

import (
	"os"
	"syscall"
)

// openFlags opens a source file without blocking (a named pipe put where a
// file was would block open(2) until a writer came) and, unless links are
// followed, without following a last symbolic link.
func openFlags(follow bool) int {
	if follow {
		return syscall.O_NONBLOCK
	}
	return syscall.O_NONBLOCK | syscall.O_NOFOLLOW
}

// setBlocking clears O_NONBLOCK on a regular file opened with openFlags.
// Reads of a regular file do not heed it; clearing it keeps the file as
// os.Open would have made it.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// openDir opens a directory to read its entries: non-blocking, and failing
// (ENOTDIR) rather than opening whatever replaced the directory since its
// parent was read, a named pipe above all.
func openDir(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}
