// Package term answers what a command asks of the terminal it talks to:
// whether a stream is one, how wide it is, and whether it may carry ANSI
// styles. It reads no environment itself: the caller passes the values
// of $COLUMNS, $NO_COLOR and $TERM in, so that it decides where they come
// from.
package term

import (
	"io"
	"strconv"

	"golang.org/x/term"
)

// fd is the descriptor of an *os.File, or of a writer around one.
func fd(v any) (int, bool) {
	f, ok := v.(interface{ Fd() uintptr })
	if !ok {
		return 0, false
	}
	return int(f.Fd()), true
}

// IsTerminal reports whether v (a reader or a writer) is a terminal.
func IsTerminal(v any) bool {
	n, ok := fd(v)
	return ok && term.IsTerminal(n)
}

// Width is the width of the output in columns: flag when it is positive,
// else the terminal's when w is one, else columns (the value of $COLUMNS)
// when it is a positive number, else 120.
func Width(flag int, w io.Writer, columns string) int {
	if flag > 0 {
		return flag
	}
	if n, ok := fd(w); ok && term.IsTerminal(n) {
		if cols, _, err := term.GetSize(n); err == nil && cols > 0 {
			return cols
		}
	}
	if cols, err := strconv.Atoi(columns); err == nil && cols > 0 {
		return cols
	}
	return 120
}

// Color reports whether w may carry ANSI styles: a terminal, with noColor
// ($NO_COLOR) empty (no-color.org) and termName ($TERM) not "dumb".
func Color(w io.Writer, noColor, termName string) bool {
	return noColor == "" && termName != "dumb" && IsTerminal(w)
}
