package cmdio

import (
	"os"
	"syscall"
)

// growPipe enlarges a pipe's kernel buffer (64 KB by default) to 1 MB, so
// the stages of a pipeline trade fewer, larger writes and context switches.
func growPipe(f *os.File) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	const fSetPipeSz = 1031 // F_SETPIPE_SZ
	syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSz, 1<<20)
}
