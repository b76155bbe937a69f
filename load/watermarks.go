package load

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// Watermarks are committed where the run that read them keeps them, so
// that the next run reads them: a checkpoint record says where (schema.
// Checkpoint State and Lake, set by pos-extract). One read from a state
// directory named with pos-extract --state is committed to that directory;
// one read from this lake's _state, or that does not say, to this lake's
// _state. One read from another lake's _state is refused: committed here,
// the next run would read the other lake's again and re-read every file;
// committed there, that lake would be told it holds what it does not.

// StateMismatchError is a stream whose watermarks were read from another
// lake's state than the lake being loaded.
type StateMismatchError struct {
	From string // the lake whose _state pos-extract read
	Lake string // the lake being loaded
}

func (e *StateMismatchError) Error() string {
	return fmt.Sprintf("the stream's watermarks were read from the lake %s, but this load goes to %s: stopped, no watermark committed (each run would read every file again)", e.From, e.Lake)
}

// Hint is the fix, for the command to print on a line of its own.
func (e *StateMismatchError) Hint() string {
	return "give pos-extract and pos-load the same --lake (or set POS_LAKE for both), or keep the watermarks elsewhere with pos-extract --state DIR"
}

// mark routes a checkpoint's watermark to the state it is committed to.
func (l *Loader) mark(c *schema.Checkpoint) error {
	switch {
	case c.State != "":
		dir, err := filepath.Abs(c.State)
		if err != nil {
			return err
		}
		if own := filepath.Join(l.opt.Lake, "_state"); sameDir(dir, own) {
			break
		}
		if l.elsewhere == nil {
			l.elsewhere = map[string]*watermark.State{}
		}
		s := l.elsewhere[dir]
		if s == nil {
			s = watermark.NewState()
			l.elsewhere[dir] = s
		}
		s.Put(c)
		return nil
	case c.Lake != "":
		same, ok := l.lakes[c.Lake]
		if !ok {
			abs, err := filepath.Abs(c.Lake)
			if err != nil {
				return err
			}
			same = sameDir(abs, l.opt.Lake)
			if l.lakes == nil {
				l.lakes = map[string]bool{}
			}
			l.lakes[c.Lake] = same
		}
		if !same {
			return &StateMismatchError{From: c.Lake, Lake: l.opt.Lake}
		}
	}
	l.marks.Put(c)
	return nil
}

// commitMarks commits the watermarks of the run: this lake's, then those
// of each other state directory, in order.
func (l *Loader) commitMarks() (int, error) {
	n := 0
	if l.marks.Len() > 0 {
		if err := watermark.MergeState(filepath.Join(l.opt.Lake, "_state"), l.marks); err != nil {
			return n, fmt.Errorf("committing watermarks: %w", err)
		}
		n += l.marks.Len()
	}
	dirs := make([]string, 0, len(l.elsewhere))
	for d := range l.elsewhere {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		if err := watermark.MergeState(d, l.elsewhere[d]); err != nil {
			return n, fmt.Errorf("committing watermarks to %s: %w", d, err)
		}
		n += l.elsewhere[d].Len()
	}
	return n, nil
}

// sameDir reports whether two absolute paths name one directory: the same
// path, or the same directory reached otherwise (a symbolic link, a bind
// mount).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}
