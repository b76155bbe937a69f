package schema

import (
	"fmt"
	"strconv"
)

// BadInput describes an input record that was skipped: where it is and why.
// Its message is the one-line diagnostic "path:line: reason".
type BadInput struct {
	Path string // file, or "-" / "" for stdin
	Line int64  // 1-based line, 0 when the format has no lines
	Key  string // row key or JSON path when there are no lines
	Err  error
}

func (b *BadInput) Error() string {
	where := b.Path
	if where == "" {
		where = "-"
	}
	switch {
	case b.Line > 0:
		where += ":" + strconv.FormatInt(b.Line, 10)
	case b.Key != "":
		where += ":" + b.Key
	}
	return fmt.Sprintf("%s: %v", where, b.Err)
}

func (b *BadInput) Unwrap() error { return b.Err }

// SkipFunc is called for each input record a stage skips. Returning an error
// stops the stage with that error (the --strict behaviour); returning nil
// goes on with the next record.
type SkipFunc func(*BadInput) error
