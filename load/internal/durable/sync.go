package durable

import "os"

// fsync makes the file or directory at p durable.
func fsync(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// MkdirAll creates dir and whichever of its parents are missing, as
// os.MkdirAll does, and says whether it created any: a directory it made
// needs its parent synced (SyncDirs with true) before a file in it is
// durable; one that was there does not.
func MkdirAll(dir string) (made bool, err error) {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return false, nil
	}
	return true, os.MkdirAll(dir, 0o700)
}
