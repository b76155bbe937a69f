// Package watermark keeps where each source file's reading stopped: one
// watermark (a schema.Checkpoint) per platform and file, saved in a state
// directory as watermarks.json and a journal of later commits, and the
// plan a reader draws from a watermark to skip or resume a file.
//
// It lies below every stage: pos-extract reads the watermarks to skip what
// earlier runs consumed, and whoever stores the data (pos-load, or
// pos-extract --commit-state) commits them, so a run that dies downstream
// never advances them.
package watermark

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/schema"
)

// StateFile is the name of the watermark file inside a state directory.
const StateFile = "watermarks.json"

// JournalFile holds the watermarks committed since StateFile was last
// written whole, one per line; a later line wins over an earlier one and
// over StateFile. A commit appends its few watermarks there instead of
// rewriting the thousands of StateFile, which a home's files make about a
// megabyte read and written at every sync; the journal is folded into
// StateFile once it outgrows a quarter of it.
const JournalFile = "watermarks.log"

// journalMin is the size below which the journal is never folded.
const journalMin = 64 << 10

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

// LoadState reads dir/watermarks.json, then the journal's watermarks
// committed since; a missing file is an empty state.
func LoadState(dir string) (*State, error) {
	s := NewState()
	path := filepath.Join(dir, StateFile)
	// The file's identity is taken before its bytes are read: a file
	// replaced in between is kept under the old one's, and read again.
	id := identity(path)
	list, ok := keptUnchanged(path, id)
	if !ok {
		stateReads.Add(1)
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			if list, err = parseStateFile(path, b, id); err != nil {
				return nil, err
			}
		}
	}
	s.marks = make(map[string]*schema.Checkpoint, len(list)+len(list)/8)
	for _, c := range list {
		s.marks[markKey(c.Platform, c.Path)] = c
	}
	if err := s.replay(dir); err != nil {
		return nil, err
	}
	return s, nil
}

// parsed keeps, per state file, the watermarks last parsed from it, the
// file's identity and a hash of the bytes they were parsed from, once
// KeepParsed was called: a resident pos-sync loads the same state at every
// sync, and the file changes only when a journal is folded into it.
var parsed struct {
	sync.Mutex
	on    bool
	files map[string]parsedFile
}

type parsedFile struct {
	id    fileID
	sum   uint64
	size  int
	marks []schema.Checkpoint
}

// stateReads counts the state files LoadState read, for tests.
var stateReads atomic.Int64

// fileID is what tells a state file from another without reading it: the
// file is always replaced whole (a new inode), never written in place.
// It is the file's Fingerprint and its device.
type fileID struct {
	dev uint64
	fp  Fingerprint
}

// identity is the state file's fileID, or the zero one (which matches
// nothing) when it cannot be read.
func identity(path string) fileID {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), fp: Stat(fi)}
}

// keptUnchanged returns copies of the watermarks kept of the state file at
// path when it is the very file they were parsed from (see KeepParsed).
func keptUnchanged(path string, id fileID) ([]*schema.Checkpoint, bool) {
	parsed.Lock()
	p, ok := parsed.files[path]
	on := parsed.on
	parsed.Unlock()
	if !on || !ok || id == (fileID{}) || p.id != id {
		return nil, false
	}
	return p.copies(), true
}

// copies returns copies of the kept watermarks, the caller's own to change.
func (p *parsedFile) copies() []*schema.Checkpoint {
	list := make([]*schema.Checkpoint, len(p.marks))
	for i := range p.marks {
		c := copyCheckpoint(&p.marks[i])
		list[i] = &c
	}
	return list
}

// KeepParsed makes LoadState keep what it parsed of each state file, and
// use it again for the very same file (without reading it) or a file with
// the very same bytes.
func KeepParsed() {
	parsed.Lock()
	defer parsed.Unlock()
	parsed.on = true
}

// parseStateFile parses the state file's bytes b, read from the file id,
// or copies what an earlier call parsed from the same bytes (see
// KeepParsed). The copies are the caller's own to change.
func parseStateFile(path string, b []byte, id fileID) ([]*schema.Checkpoint, error) {
	parsed.Lock()
	on := parsed.on
	parsed.Unlock()
	if !on {
		list, err := schema.UnmarshalCheckpoints(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return list, nil
	}
	sum := xxhash.Sum64(b)
	parsed.Lock()
	p, ok := parsed.files[path]
	parsed.Unlock()
	if ok && p.sum == sum && p.size == len(b) {
		p.id = id
		parsed.Lock()
		parsed.files[path] = p
		parsed.Unlock()
	} else {
		list, err := schema.UnmarshalCheckpoints(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		p = parsedFile{id: id, sum: sum, size: len(b), marks: make([]schema.Checkpoint, 0, len(list))}
		for _, c := range list {
			if c != nil {
				p.marks = append(p.marks, copyCheckpoint(c))
			}
		}
		parsed.Lock()
		if parsed.files == nil {
			parsed.files = map[string]parsedFile{}
		}
		parsed.files[path] = p
		parsed.Unlock()
	}
	return p.copies(), nil
}

func copyCheckpoint(c *schema.Checkpoint) schema.Checkpoint {
	d := *c
	d.Context = maps.Clone(c.Context)
	return d
}

// replay applies the journal's watermarks, in order. A last line without
// its newline was being appended when its run stopped: its commit did not
// happen, and the line is left out.
func (s *State) replay(dir string) error {
	path := filepath.Join(dir, JournalFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	for n := 1; len(b) > 0; n++ {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		b = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		list, err := schema.UnmarshalCheckpoints(slices.Concat([]byte{'['}, line, []byte{']'}))
		if err != nil || len(list) != 1 || list[0] == nil {
			if err == nil {
				err = errors.New("not one watermark")
			}
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		s.marks[markKey(list[0].Platform, list[0].Path)] = list[0]
	}
	return nil
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

// Each calls fn with each of a platform's watermarks, in no order. fn
// must not change them, nor call the state's methods.
func (s *State) Each(platform string, fn func(*schema.Checkpoint)) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.marks {
		if c.Platform == platform {
			fn(c)
		}
	}
}

// Put records a watermark (without the State and Lake a checkpoint
// record carries: a state file holds its own watermarks).
func (s *State) Put(c *schema.Checkpoint) {
	if c.State != "" || c.Lake != "" {
		cc := *c
		cc.State, cc.Lake = "", ""
		c = &cc
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks[markKey(c.Platform, c.Path)] = c
}

// list returns the watermarks, by path.
func (s *State) list() []*schema.Checkpoint {
	s.mu.Lock()
	list := make([]*schema.Checkpoint, 0, len(s.marks))
	for _, c := range s.marks {
		list = append(list, c)
	}
	s.mu.Unlock()
	sortCheckpoints(list)
	return list
}

func sortCheckpoints(list []*schema.Checkpoint) {
	slices.SortFunc(list, func(a, b *schema.Checkpoint) int { return cmp.Compare(a.Path, b.Path) })
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
	list := s.list()
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
	if err := atomicfile.Write(filepath.Join(dir, StateFile), append(b, '\n')); err != nil {
		return err
	}
	// The journal's watermarks are in the file now. Should this removal not
	// happen (a crash), its lines are applied again over the file: a file
	// whose watermark moved since is then read again from the older one,
	// and pos-load keeps no row twice.
	if err := os.Remove(filepath.Join(dir, JournalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
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

// MergeState commits marks to the state saved in dir: appended to the
// journal, or, when there is no state file yet or the journal has grown
// past a quarter of it, merged into a new state file.
func MergeState(dir string, marks *State) error {
	list := marks.list()
	base, err := os.Stat(filepath.Join(dir, StateFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil && len(list) == 0 {
		return nil
	}
	var b []byte
	for _, c := range list {
		b = append(schema.AppendCheckpoint(b, c), '\n')
	}
	if err == nil {
		var logged int64
		if fi, err := os.Stat(filepath.Join(dir, JournalFile)); err == nil {
			logged = fi.Size()
		}
		if logged+int64(len(b)) <= max(base.Size()/4, journalMin) {
			return appendSynced(filepath.Join(dir, JournalFile), b)
		}
	}
	s, err := LoadState(dir)
	if err != nil {
		return err
	}
	for _, c := range list {
		s.marks[markKey(c.Platform, c.Path)] = c
	}
	return s.Save(dir)
}

// appendSynced appends b to the journal at path (created private to the
// user) and makes it durable, with the file's name when it is new. A last
// line cut short by a run that stopped while appending is cut off first:
// it was never a commit, and b must start a line of its own.
func appendSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	end := fi.Size()
	if end > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, end-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			whole, err := io.ReadAll(io.NewSectionReader(f, 0, end))
			if err != nil {
				return err
			}
			end = int64(bytes.LastIndexByte(whole, '\n') + 1)
			if err := f.Truncate(end); err != nil {
				return err
			}
		}
	}
	if _, err := f.WriteAt(b, end); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if fi.Size() == 0 {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync() // best effort: not every system syncs a directory
			d.Close()
		}
	}
	return f.Close()
}
