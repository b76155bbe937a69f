package load

import (
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
