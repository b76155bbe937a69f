package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/pos-lake/pos/schema"
)

// StateFile is the name of the watermark file inside a state directory.
const StateFile = "watermarks.json"

// headBytes is how much of a file's start is hashed to notice that a file
// was replaced by another one of at least the same size.
const headBytes = 4096

// State holds one watermark per source file. Extractors read it to skip what
// earlier runs consumed; the watermarks of this run travel down the pipeline
// as checkpoint records and are committed by whoever stores the data
// (pos-load, or pos-extract --commit-state), so a run that dies downstream
// never advances them.
type State struct {
	mu    sync.Mutex
	marks map[string]*schema.Checkpoint
}

// NewState returns an empty state.
func NewState() *State { return &State{marks: map[string]*schema.Checkpoint{}} }

// LoadState reads dir/watermarks.json; a missing file is an empty state.
func LoadState(dir string) (*State, error) {
	s := NewState()
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := schema.UnmarshalCheckpoints(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	for _, c := range list {
		s.marks[markKey(c.Platform, c.Path)] = c
	}
	return s, nil
}

// markKey keys a watermark by platform and path: two adapters may read the
// same file (a --root shared by several platforms) and each keeps its own.
func markKey(platform, path string) string { return platform + "\x00" + path }

// Get returns a platform's watermark of a path, or nil.
func (s *State) Get(platform, path string) *schema.Checkpoint {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.marks[markKey(platform, path)]
}

// Put records a watermark.
func (s *State) Put(c *schema.Checkpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks[markKey(c.Platform, c.Path)] = c
}

// Len is the number of watermarks.
func (s *State) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.marks)
}

// Save writes the state to dir atomically (temporary file, then rename),
// private to the user.
func (s *State) Save(dir string) error {
	s.mu.Lock()
	list := make([]*schema.Checkpoint, 0, len(s.marks))
	for _, c := range s.marks {
		list = append(list, c)
	}
	s.mu.Unlock()
	sortCheckpoints(list)
	// One watermark per line: readable, and quick to write for the
	// thousands of files a home holds.
	b := []byte("[")
	for i, c := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n "...)
		b = schema.AppendCheckpoint(b, c)
	}
	b = append(b, "\n]"...)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, StateFile), append(b, '\n'))
}

// WriteFileAtomic writes b to a temporary file beside path, syncs it and
// renames it over path, so readers see the old or the new file, never a
// part of one.
func WriteFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
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

// Plan says where to start reading a file given its watermark.
type Plan struct {
	Start int64 // byte offset to start at
	Lines int64 // lines before Start
	Skip  bool  // nothing new: the file is unchanged
	// Context is the adapter context saved with the watermark (nil when
	// starting from the beginning).
	Context map[string]string
	Reason  string // why the file is read from the start, for -v
	// Replay is the watermark's consumed offset when the read resumes
	// before it: lines starting below it were delivered by an earlier run
	// (see schema.Source.Replay).
	Replay int64
}

// Fingerprint is what identifies a file's version.
type Fingerprint struct {
	Size  int64
	Mtime time.Time
	Inode uint64
}

// Stat returns the fingerprint of a file.
func Stat(fi fs.FileInfo) Fingerprint {
	fp := Fingerprint{Size: fi.Size(), Mtime: fi.ModTime().UTC()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		fp.Inode = st.Ino
	}
	return fp
}

// HeadHash hashes the first min(n, headBytes) bytes of f.
func HeadHash(f io.ReaderAt, n int64) (string, error) {
	n = min(n, headBytes)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:8]), nil
}

// Unchanged reports whether a file is the one its watermark describes,
// with nothing after it: the same inode (when known), size and mtime (to
// the nanosecond). Such a file is skipped without reading its first bytes;
// PlanRead checks those for every other file.
func (s *State) Unchanged(platform, path string, fp Fingerprint) bool {
	c := s.Get(platform, path)
	return c != nil && c.Inode != 0 && c.Inode == fp.Inode &&
		fp.Size == max(c.Seen, c.Size) && fp.Mtime.Equal(c.Mtime)
}

// PlanRead decides where to read path from. A file that shrank, has another
// inode, or whose first bytes changed is read again from the start; a file
// whose size and mtime equal the watermark's is skipped.
func (s *State) PlanRead(platform, path string, f io.ReaderAt, fp Fingerprint) (Plan, error) {
	c := s.Get(platform, path)
	if c == nil {
		return Plan{Reason: "new"}, nil
	}
	switch {
	case c.Inode != 0 && fp.Inode != 0 && c.Inode != fp.Inode:
		return Plan{Reason: "replaced (new inode)"}, nil
	case fp.Size < c.Size:
		return Plan{Reason: "shrank"}, nil
	}
	if c.Head != "" {
		h, err := HeadHash(f, min(c.Size, fp.Size))
		if err != nil {
			return Plan{}, err
		}
		if h != c.Head {
			return Plan{Reason: "replaced (content changed)"}, nil
		}
	}
	if fp.Size == max(c.Seen, c.Size) && fp.Mtime.Equal(c.Mtime) {
		return Plan{Skip: true}, nil
	}
	return Plan{Start: c.Resume, Lines: c.Lines, Context: c.Context, Replay: c.Size}, nil
}

// MergeState adds marks to the state saved in dir and saves it.
func MergeState(dir string, marks *State) error {
	s, err := LoadState(dir)
	if err != nil {
		return err
	}
	marks.mu.Lock()
	for p, c := range marks.marks {
		s.marks[p] = c
	}
	marks.mu.Unlock()
	return s.Save(dir)
}
