package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/pos-lake/pos/schema"
)

// ErrSymlink is why a symbolic link below a root is passed over: it may
// point anywhere (a plan linked to /etc/passwd would put that file in the
// lake), or loop. Options.FollowLinks reads what links point to.
var ErrSymlink = errors.New("symbolic link, not followed")

// ErrVanished is why a file found by the walk is not read: it was removed
// before it could be opened.
var ErrVanished = errors.New("removed during the run")

// NotRegularError is why an entry that is not a regular file (a directory,
// a named pipe, a socket, a device) is not read in place of one. A named
// pipe would block the run in open(2) until a writer comes; a device may
// do anything when opened.
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string {
	switch t := e.Mode.Type(); {
	case t&fs.ModeDir != 0:
		return "is a directory, not a file"
	case t&fs.ModeNamedPipe != 0:
		return "not a regular file (named pipe)"
	case t&fs.ModeSocket != 0:
		return "not a regular file (socket)"
	case t&fs.ModeCharDevice != 0:
		return "not a regular file (character device)"
	case t&fs.ModeDevice != 0:
		return "not a regular file (block device)"
	}
	return "not a regular file"
}

// regular returns a NotRegularError for anything but a regular file.
func regular(fi fs.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return ErrSymlink
	}
	return &NotRegularError{Mode: fi.Mode()}
}

// stat is the type and fingerprint of path as a source file: lstat, so
// that a link is seen as a link, unless links are followed.
func (o *Options) stat(path string) (fs.FileInfo, error) {
	if o.FollowLinks {
		return os.Stat(path)
	}
	return os.Lstat(path)
}

// OpenFile opens a file an adapter reads (a source file, or one beside it
// such as a subagent's .meta.json), never blocking and never following a
// symbolic link unless Options.FollowLinks: its type is checked before it
// is opened, it is opened non-blocking and without following a last link,
// and the type of what was opened is checked again, so a file replaced
// between the walk and the open (by a link, a directory, a pipe) is caught
// too. The error says why a file was not opened (ErrSymlink, ErrVanished,
// *NotRegularError, or the system's reason); SkipFile reports it.
func (o *Options) OpenFile(path string) (*os.File, fs.FileInfo, error) {
	fi, err := o.stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := regular(fi); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags(o.FollowLinks), 0)
	if err != nil {
		if !o.FollowLinks {
			// O_NOFOLLOW fails on a link (ELOOP on Linux, EMLINK on
			// FreeBSD): the file became one since the lstat.
			if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
				return nil, nil, ErrSymlink
			}
		}
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err == nil {
		err = regular(fi)
	}
	if err == nil {
		err = setBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadSmall reads a small file beside the source files (a subagent's
// .meta.json, Gemini's .project_root, Cursor's workspace.json) as OpenFile
// opens it. A file that is not there is (nil, nil); one over max bytes is
// an error.
func (o *Options) ReadSmall(path string, max int64) ([]byte, error) {
	f, fi, err := o.OpenFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit", fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("over the %d-byte limit", max)
	}
	return b, nil
}

// SkipFile reports a file that cannot be read (not opened, or a read that
// failed) as skipped input, "path: reason", and returns what Skip returns:
// nil, so that the run goes on with the other files, or the error that
// stops it under --strict. A cancelled run's error is returned as it is.
func (o *Options) SkipFile(path string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return o.Skip(&schema.BadInput{Path: path, Err: reason(err)})
}

// reason is an error without the operation and path an *fs.PathError
// repeats: "permission denied", not "open /x/y: permission denied".
func reason(err error) error {
	var re *ReadError
	if errors.As(err, &re) {
		err = re.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ELOOP) {
		return errors.New("too many levels of symbolic links")
	}
	return err
}

// ReadError is a failed read of a source file, as opposed to an error
// downstream (the output closed) or a bad line: the file is reported as
// skipped and the run goes on (see Options.FileDone).
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// FileDone ends the job of one source file: a read that failed part way
// (a ReadError) is reported as a skipped file, without its checkpoint, so
// the next run reads it again from its last watermark; every other error
// (the output closed, --strict, a cancelled run) stops the run.
func (o *Options) FileDone(err error) error {
	var re *ReadError
	if errors.As(err, &re) {
		return o.SkipFile(re.Path, re)
	}
	return err
}

// IsFile reports whether path is a file OpenFile would open (as far as its
// type tells): a regular file, and not a symbolic link unless
// Options.FollowLinks. An adapter that infers something from a file's
// presence (a subagent has a transcript of its own) asks this, so that it
// never counts on a file the run will not read.
func (o *Options) IsFile(path string) bool {
	fi, err := o.stat(path)
	return err == nil && fi.Mode().IsRegular()
}
