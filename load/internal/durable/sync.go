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
