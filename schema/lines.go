package schema

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the longest line a LineReader keeps. Longer lines are
// skipped (reported as ErrLineTooLong) so one absurd line cannot take the
// machine's memory; tens of MB are normal in agent transcripts.
const DefaultMaxLine = 512 << 20

// ErrLineTooLong reports a line longer than the reader's limit. The line
// has been consumed; reading can go on.
var ErrLineTooLong = errors.New("line too long")

// Line is one line of input. Bytes excludes the '\n' and is valid until the
// next call to Next.
type Line struct {
	Bytes  []byte
	Num    int64 // 1-based line number
	Offset int64 // byte offset of the line's first byte
	// Terminated is false for a last line that has no '\n' yet: a file still
	// being written, or a producer that omits the final newline.
	Terminated bool
}

// End is the offset just past the line and its newline.
func (l Line) End() int64 {
	n := l.Offset + int64(len(l.Bytes))
	if l.Terminated {
		n++
	}
	return n
}

// LineReader reads lines of any length with bounded memory: a line is held
// once, in an accumulator that grows to the longest line seen (never the
// 64 KB limit of bufio.Scanner).
type LineReader struct {
	r       *bufio.Reader
	acc     []byte
	off     int64
	num     int64
	MaxLine int
}

// NewLineReader reads lines from r, numbering them from 1 and measuring
// offsets from 0.
func NewLineReader(r io.Reader) *LineReader {
	return NewLineReaderAt(r, 0, 0)
}

// NewLineReaderAt reads lines from r, which starts at byte offset off of its
// file, after line number num.
func NewLineReaderAt(r io.Reader, off, num int64) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 1<<20), off: off, num: num, MaxLine: DefaultMaxLine}
}

// Reset makes the reader read r, which starts at byte offset off of its
// file, after line number num, keeping its buffers.
func (lr *LineReader) Reset(r io.Reader, off, num int64) {
	lr.r.Reset(r)
	lr.off, lr.num = off, num
	if cap(lr.acc) > 16<<20 {
		lr.acc = nil // do not keep one huge line's buffer
	}
}

// Next returns the next line. At the end of input it returns io.EOF; other
// read errors are returned as they are. A line over MaxLine yields a Line
// whose Bytes is nil together with an error wrapping ErrLineTooLong.
func (lr *LineReader) Next() (Line, error) {
	start := lr.off
	lr.acc = lr.acc[:0]
	tooLong := false
	for {
		frag, err := lr.r.ReadSlice('\n')
		lr.off += int64(len(frag))
		if !tooLong {
			if len(lr.acc)+len(frag) > lr.MaxLine+1 {
				tooLong = true
				lr.acc = lr.acc[:0]
			} else if err == nil && len(lr.acc) == 0 {
				// The whole line fits the buffer: no copy.
				lr.num++
				return Line{Bytes: frag[:len(frag)-1], Num: lr.num, Offset: start, Terminated: true}, nil
			} else {
				lr.acc = append(lr.acc, frag...)
			}
		}
		switch {
		case err == nil:
			lr.num++
			if tooLong {
				return Line{Num: lr.num, Offset: start, Terminated: true},
					fmt.Errorf("%w: %d bytes (limit %d)", ErrLineTooLong, lr.off-start-1, lr.MaxLine)
			}
			return Line{Bytes: lr.acc[:len(lr.acc)-1], Num: lr.num, Offset: start, Terminated: true}, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if lr.off == start {
				return Line{}, io.EOF
			}
			lr.num++
			if tooLong {
				return Line{Num: lr.num, Offset: start},
					fmt.Errorf("%w: %d bytes (limit %d)", ErrLineTooLong, lr.off-start, lr.MaxLine)
			}
			return Line{Bytes: lr.acc, Num: lr.num, Offset: start}, nil
		default:
			return Line{}, err
		}
	}
}

// Offset is the number of bytes consumed so far, including the starting
// offset.
func (lr *LineReader) Offset() int64 { return lr.off }

// Lines is the number of the last line read (the starting count before any).
func (lr *LineReader) Lines() int64 { return lr.num }
