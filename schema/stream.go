package schema

import (
	"io"
	"os"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Encoder writes records as NDJSON.
type Encoder struct {
	w   io.Writer
	buf []byte // records not written yet; it grows to what is buffered
	err error  // the first write error: every later call returns it
	// FlushEach flushes after every record; set it when the output is a
	// terminal so a person sees records as they come.
	FlushEach bool
	ramp      int // flush once this much is buffered
}

// encoderBuffer is the most an Encoder buffers: a stage hands the next one
// its records in writes of up to this much.
const encoderBuffer = 1 << 20

// NewEncoder writes records to w. Its first writes are small (64 KB, then
// twice as much each time up to 1 MB), so the next stage of a pipeline
// starts on the first records instead of waiting for a full buffer: in
// an incremental sync of a few MB the stages then overlap from the start.
// Its buffer grows with its writes, so a stream of a few records costs a
// few KB of memory, not a megabyte cleared for nothing.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w, ramp: 64 << 10}
}

// Encode writes one record and a newline. The record is encoded straight
// into the buffer, grown once to the record's size when it is long.
func (e *Encoder) Encode(r *Record) error {
	if e.err != nil {
		return e.err
	}
	if r.Line == nil {
		e.buf = slices.Grow(e.buf, SizeHint(r)+1)
	}
	e.buf = AppendRecord(e.buf, r)
	e.buf = append(e.buf, '\n')
	if e.FlushEach || len(e.buf) >= e.ramp {
		e.ramp = min(2*e.ramp, encoderBuffer)
		return e.Flush()
	}
	return nil
}

// Flush writes buffered output.
func (e *Encoder) Flush() error {
	if e.err != nil || len(e.buf) == 0 {
		return e.err
	}
	n, err := e.w.Write(e.buf)
	if err == nil && n < len(e.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		e.err = err
		return err
	}
	e.buf = e.buf[:0]
	if cap(e.buf) > 2*encoderBuffer {
		e.buf = nil // do not keep one huge record's buffer
	}
	return nil
}

// IsZstd reports whether a path names a zstd-compressed stream.
func IsZstd(path string) bool { return strings.HasSuffix(path, ".zst") }

// Open opens a stream for reading: "-" is stdin, a path ending in .zst is
// decompressed on the fly.
func Open(path string, stdin io.Reader) (io.ReadCloser, error) {
	if path == "-" || path == "" {
		return io.NopCloser(stdin), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !IsZstd(path) {
		return f, nil
	}
	zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<30))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &zstdReadCloser{zr: zr, f: f}, nil
}

type zstdReadCloser struct {
	zr *zstd.Decoder
	f  *os.File
}

func (z *zstdReadCloser) Read(p []byte) (int, error) { return z.zr.Read(p) }
func (z *zstdReadCloser) Close() error {
	z.zr.Close()
	return z.f.Close()
}

// NewReader wraps r with a zstd decoder when compressed is true.
func NewReader(r io.Reader, compressed bool) (io.ReadCloser, error) {
	if !compressed {
		return io.NopCloser(r), nil
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<30))
	if err != nil {
		return nil, err
	}
	return zr.IOReadCloser(), nil
}

// NewWriter wraps w with a zstd encoder when compressed is true. Close
// flushes the compressed stream; it does not close w.
func NewWriter(w io.Writer, compressed bool) (io.WriteCloser, error) {
	if !compressed {
		return nopWriteCloser{w}, nil
	}
	return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Create opens a stream for writing: "-" is stdout, a path ending in .zst is
// compressed. Closing the result flushes and closes the file.
func Create(path string, stdout io.Writer) (io.WriteCloser, error) {
	if path == "-" || path == "" {
		return nopWriteCloser{stdout}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if !IsZstd(path) {
		return f, nil
	}
	zw, err := NewWriter(f, true)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &zstdWriteCloser{zw: zw, f: f}, nil
}

type zstdWriteCloser struct {
	zw io.WriteCloser
	f  *os.File
}

func (z *zstdWriteCloser) Write(p []byte) (int, error) { return z.zw.Write(p) }
func (z *zstdWriteCloser) Close() error {
	err := z.zw.Close()
	if cerr := z.f.Close(); err == nil {
		err = cerr
	}
	return err
}
