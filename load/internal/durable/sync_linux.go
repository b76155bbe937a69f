package durable

import (
	"errors"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// syncEachMax is how many files (or directories) a run syncs one by one;
// past it one syncfs(2) of the lake's file system covers them all. fsync
// of a file waits for that file; syncfs waits for every dirty page of the
// file system, however unrelated. An incremental load syncs a handful of
// files, which syncfs would make wait for whatever else is written to the
// disk and not yet flushed; a first load syncs thousands, where one syncfs
// costs less than as many fsyncs.
const syncEachMax = 64

// syncTogether is how many fsyncs run at once. A journaling file system
// commits fsyncs that wait together in one journal write, so a run's
// handful of files cost about one disk flush rather than one each.
const syncTogether = 16

// SyncFiles makes the files' data durable.
func SyncFiles(lake string, paths []string) error {
	if len(paths) > syncEachMax {
		return syncfs(lake)
	}
	return fsyncAll(slices.Values(paths))
}

// SyncDirs makes renames in the directories durable, and the directories
// themselves. A directory whose value is true may have just been created:
// its parents up to the lake are synced too, so that its own entry is
// durable. A false value is a directory that existed before the run.
func SyncDirs(lake string, dirs map[string]bool) error {
	all := withParents(lake, dirs)
	if len(all) > syncEachMax {
		return syncfs(lake)
	}
	return fsyncAll(maps.Keys(all))
}

// fsyncAll syncs the files or directories, several at a time.
func fsyncAll(paths iter.Seq[string]) error {
	var g errgroup.Group
	g.SetLimit(syncTogether)
	for p := range paths {
		g.Go(func() error { return fsync(p) })
	}
	return g.Wait()
}

// withParents returns dirs and, for those inside lake that may have just
// been created (true), their parents up to lake itself.
func withParents(lake string, dirs map[string]bool) map[string]bool {
	lake = filepath.Clean(lake)
	all := make(map[string]bool, 2*len(dirs))
	for d, made := range dirs {
		d = filepath.Clean(d)
		all[d] = true
		if !made || d != lake && !strings.HasPrefix(d, lake+string(filepath.Separator)) {
			continue
		}
		for d != lake && len(all) <= syncEachMax {
			d = filepath.Dir(d)
			all[d] = true
		}
	}
	return all
}

func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// ExchangeDirs swaps two directories in one step (renameat2
// RENAME_EXCHANGE): a reader sees one or the other at each path, never
// neither.
func ExchangeDirs(a, b string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			return errors.ErrUnsupported // a file system without it
		}
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
