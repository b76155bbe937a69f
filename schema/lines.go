package schema

import (
	"bufio"
	"bytes"
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
// next call to Next (for ever, from a reader made by NewKeptLineReader).
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

	// Kept lines (NewKeptLineReader): the input is read into blocks that
	// are only ever appended to, so a line's Bytes stay valid after the
	// next call. blk[pos:] is read and not yet returned; a block is
	// dropped (left to the lines that point into it) when it has little
	// room left.
	keep bool
	src  io.Reader
	blk  []byte
	pos  int
	rerr error
	grow int // the next block's size
}

// A reader of kept lines starts with a small block and doubles each new
// one up to keptBlock: a few lines (a turn appended to a transcript, a
// small stream) cost a few KB, a long input full blocks.
const (
	keptFirst   = 64 << 10 // the first block's size
	keptBlock   = 1 << 20  // the largest block's size, or twice a longer line's
	keptMinRead = 64 << 10 // a full-size block with less room left is not read into
)

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

// NewKeptLineReader is NewLineReaderAt for a reader whose lines stay
// valid, unchanged, after the next call to Next and after Reset, so that a
// caller may keep them instead of copying them. It costs no more than
// NewLineReaderAt: the input is copied once, from the read into a block.
func NewKeptLineReader(r io.Reader, off, num int64) *LineReader {
	return &LineReader{keep: true, src: r, off: off, num: num, MaxLine: DefaultMaxLine}
}

// Reset makes the reader read r, which starts at byte offset off of its
// file, after line number num, keeping its buffers.
func (lr *LineReader) Reset(r io.Reader, off, num int64) {
	lr.off, lr.num = off, num
	if lr.keep {
		// The rest of the block is free for the new input's bytes.
		lr.src, lr.rerr, lr.blk = r, nil, lr.blk[:lr.pos]
		return
	}
	lr.r.Reset(r)
	if cap(lr.acc) > 16<<20 {
		lr.acc = nil // do not keep one huge line's buffer
	}
}

// Next returns the next line. At the end of input it returns io.EOF; other
// read errors are returned as they are. A line over MaxLine yields a Line
// whose Bytes is nil together with an error wrapping ErrLineTooLong.
func (lr *LineReader) Next() (Line, error) {
	if lr.keep {
		return lr.nextKept()
	}
	start := lr.off
	lr.acc = lr.acc[:0]
	tooLong := false
	for {
		frag, err := lr.r.ReadSlice('\n')
		lr.off += int64(len(frag))
		if !tooLong {
			limit := lr.MaxLine + 1 // the line and its '\n'
			if errors.Is(err, io.EOF) {
				limit = lr.MaxLine // a last line without one
			}
			if len(lr.acc)+len(frag) > limit {
				tooLong = true
				lr.acc = lr.acc[:0]
			} else if err == nil && len(lr.acc) == 0 {
				// The whole line fits the buffer: no copy.
				lr.num++
				return Line{Bytes: frag[:len(frag)-1], Num: lr.num, Offset: start, Terminated: true}, nil
			} else {
				if len(lr.acc)+len(frag) > cap(lr.acc) {
					// Doubled, not grown by append's quarter for large
					// slices: a 100 MB line is then read with 200 MB of
					// buffers, not 500.
					acc := make([]byte, len(lr.acc), max(2*cap(lr.acc), len(lr.acc)+len(frag), 4096))
					copy(acc, lr.acc)
					lr.acc = acc
				}
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

// nextKept is Next for kept lines: the same lines, numbers, offsets and
// errors, each line's bytes in a block no later call writes over.
func (lr *LineReader) nextKept() (Line, error) {
	start := lr.off
	tooLong := false // the line's first bytes were dropped
	scanned := 0     // bytes of blk[pos:] with no '\n'
	empty := 0       // reads in a row that returned nothing
	for {
		if i := bytes.IndexByte(lr.blk[lr.pos+scanned:], '\n'); i >= 0 {
			end := lr.pos + scanned + i
			b := lr.blk[lr.pos:end:end]
			lr.pos = end + 1
			lr.off += int64(len(b)) + 1
			lr.num++
			if tooLong || len(b) > lr.MaxLine {
				return Line{Num: lr.num, Offset: start, Terminated: true},
					fmt.Errorf("%w: %d bytes (limit %d)", ErrLineTooLong, lr.off-start-1, lr.MaxLine)
			}
			return Line{Bytes: b, Num: lr.num, Offset: start, Terminated: true}, nil
		}
		scanned = len(lr.blk) - lr.pos
		if scanned > lr.MaxLine {
			// Too long already: consume what is read, keep nothing.
			lr.off += int64(scanned)
			lr.pos, scanned, tooLong = len(lr.blk), 0, true
		}
		if lr.rerr != nil {
			if !errors.Is(lr.rerr, io.EOF) {
				return Line{}, lr.rerr
			}
			if lr.off == start && scanned == 0 {
				return Line{}, io.EOF
			}
			b := lr.blk[lr.pos:len(lr.blk):len(lr.blk)]
			lr.pos = len(lr.blk)
			lr.off += int64(len(b))
			lr.num++
			if tooLong {
				return Line{Num: lr.num, Offset: start},
					fmt.Errorf("%w: %d bytes (limit %d)", ErrLineTooLong, lr.off-start, lr.MaxLine)
			}
			return Line{Bytes: b, Num: lr.num, Offset: start}, nil
		}
		if room := cap(lr.blk) - len(lr.blk); room < min(keptMinRead, cap(lr.blk)/4) || room == 0 {
			// A new block, with the line begun so far and room to read.
			size := max(lr.grow, keptFirst)
			lr.grow = min(2*size, keptBlock)
			nb := make([]byte, scanned, max(size, 2*scanned+keptMinRead))
			copy(nb, lr.blk[lr.pos:])
			lr.blk, lr.pos = nb, 0
		}
		n, err := lr.src.Read(lr.blk[len(lr.blk):cap(lr.blk)])
		lr.blk = lr.blk[:len(lr.blk)+n]
		switch {
		case err != nil:
			lr.rerr = err
		case n > 0:
			empty = 0
		default:
			if empty++; empty == 100 { // as bufio.Reader gives up
				lr.rerr = io.ErrNoProgress
			}
		}
	}
}

// Kept reports whether the reader's lines stay valid after the next call
// (NewKeptLineReader).
func (lr *LineReader) Kept() bool { return lr.keep }

// Offset is the number of bytes consumed so far, including the starting
// offset.
func (lr *LineReader) Offset() int64 { return lr.off }

// Lines is the number of the last line read (the starting count before any).
func (lr *LineReader) Lines() int64 { return lr.num }
