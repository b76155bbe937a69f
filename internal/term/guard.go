package term

import (
	"io"

	"github.com/pos-lake/pos/internal/termsafe"
)

// Guard stands between a command and its stdout and stderr, so that text
// from the histories never drives the terminal: terminal control
// characters are shown as escapes on Err, and on Out unless raw; the
// styles the command writes itself (allowed) pass. Out counts what the
// command wrote.
type Guard struct {
	Out *Counter
	Err io.Writer

	out, err *termsafe.Writer
}

// NewGuard guards out and errw.
func NewGuard(out, errw io.Writer, raw bool, allowed ...string) *Guard {
	g := &Guard{err: termsafe.NewWriter(errw)}
	if !raw {
		g.out = termsafe.NewWriter(out, allowed...)
		out = g.out
	}
	g.Out, g.Err = &Counter{W: out}, g.err
	return g
}

// Flush writes out what the escaping held back (a sequence cut between
// two writes), stdout first.
func (g *Guard) Flush() {
	if g.out != nil {
		g.out.Flush()
	}
	g.err.Flush()
}

// Counter counts the bytes written through it.
type Counter struct {
	W io.Writer
	N int64
}

// Fd is the descriptor of the writer it counts for, if it has one: the
// output is still known to be a terminal.
func (c *Counter) Fd() uintptr {
	if f, ok := c.W.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

func (c *Counter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}

// SafeError is err with its message's terminal control characters shown
// as escapes (a message may quote the lake: a session id, a path);
// errors.Is and errors.As see err within. It is nil when err is.
func SafeError(err error) error {
	if err == nil {
		return nil
	}
	return safeError{err}
}

type safeError struct{ err error }

func (e safeError) Error() string { return termsafe.String(e.err.Error()) }
func (e safeError) Unwrap() error { return e.err }
