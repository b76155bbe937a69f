package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ErrLocked is returned when another pos-load holds the lake too long.
var ErrLocked = errors.New("the lake is locked by another pos-load")

// lock takes the lake's writer lock (an flock on <lake>/_state/lock),
// waiting up to timeout. Readers never lock: files only appear by rename.
//
// The lock file holds the holder's pid until a run ends cleanly (unlock
// with clean): dirty reports that the last run did not, so it may have
// left temporary files behind.
func lock(ctx context.Context, lake string, timeout time.Duration) (f *os.File, dirty bool, err error) {
	dir := filepath.Join(lake, "_state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	f, err = os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			if st, err := f.Stat(); err != nil || st.Size() > 0 {
				dirty = true
			}
			if err := f.Truncate(0); err != nil {
				unlock(f, false)
				return nil, false, err
			}
			if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
				unlock(f, false)
				return nil, false, err
			}
			return f, dirty, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, false, err
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, false, fmt.Errorf("%w (waited %s; see %s)", ErrLocked, timeout, f.Name())
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// unlock releases the lock; clean says the run left no temporary file.
func unlock(f *os.File, clean bool) {
	if f != nil {
		if clean {
			f.Truncate(0)
		}
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// Lock takes the lake's writer lock as a load does, for a program that puts
// a lake's files in place other than through a Loader (a cache fetched from
// a shared lake), waiting up to timeout. dirty reports that the last holder
// did not end cleanly; the returned func releases the lock, clean saying
// this holder left no temporary file.
func Lock(ctx context.Context, lake string, timeout time.Duration) (release func(clean bool), dirty bool, err error) {
	f, dirty, err := lock(ctx, lake, timeout)
	if err != nil {
		return nil, false, err
	}
	return func(clean bool) { unlock(f, clean) }, dirty, nil
}
