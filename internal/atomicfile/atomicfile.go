// Package atomicfile replaces a file whole: readers see the old file or the
// new one, never a part of one, and a writer killed midway leaves the old
// file in place beside a temporary file whose name says who wrote it.
//
// Every stage writes its small state files (watermarks, manifests, stamps)
// through it, so it lies below them all.
package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
)

// Write writes b to a temporary file beside path, syncs it and renames it
// over path, private to the user.
//
// The temporary file is named ".<base>.pid<PID>-<random>.tmp": the
// writer's pid in the name lets the next run remove a file that a killed
// writer left (layout.SweepTemps).
func Write(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".pid"+strconv.Itoa(os.Getpid())+"-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
