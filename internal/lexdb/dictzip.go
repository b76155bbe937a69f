package lexdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// data is a dictionary's data file, read at offsets of its uncompressed
// text.
type data interface {
	ReadAt(p []byte, off int64) (int, error)
	Close() error
}

// openData opens a data file: name.dict, or name.dict.dz with random
// access when its gzip header has dictzip's chunk table (inflated whole
// otherwise, on first use).
func openData(base string) (data, error) {
	if f, err := os.Open(base + ".dict"); err == nil {
		return f, nil
	}
	f, err := os.Open(base + ".dict.dz")
	if err != nil {
		return nil, err
	}
	dz, err := readDictzipHeader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s.dict.dz: %w", base, err)
	}
	return dz, nil
}

// dictzip is a dictzip file: gzip with a header field ("RA") that lists
// the compressed size of each chunk of chunkLen uncompressed bytes, each
// chunk ended by a full flush so that it inflates on its own.
type dictzip struct {
	f        *os.File
	chunkLen int64
	starts   []int64 // the file offset of each chunk, and the end of the last
	mu       sync.Mutex
	last     int64 // the chunk in buf, -1 for none
	buf      []byte
	whole    []byte // a plain gzip file, inflated on first use
	plain    bool
}

var errNotGzip = errors.New("not a gzip file")

func readDictzipHeader(f *os.File) (*dictzip, error) {
	var hdr [10]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return nil, errNotGzip
	}
	if hdr[0] != 0x1f || hdr[1] != 0x8b || hdr[2] != 8 {
		return nil, errNotGzip
	}
	flg := hdr[3]
	dz := &dictzip{f: f, last: -1}
	off := int64(10)
	if flg&4 == 0 { // no extra field: a plain gzip file
		dz.plain = true
		return dz, nil
	}
	var xlen [2]byte
	if _, err := f.ReadAt(xlen[:], off); err != nil {
		return nil, errNotGzip
	}
	n := int64(binary.LittleEndian.Uint16(xlen[:]))
	extra := make([]byte, n)
	if _, err := f.ReadAt(extra, off+2); err != nil {
		return nil, errors.New("truncated gzip header")
	}
	off += 2 + n
	var sizes []int64
	for len(extra) >= 4 {
		id, l := string(extra[:2]), int(binary.LittleEndian.Uint16(extra[2:4]))
		if 4+l > len(extra) {
			return nil, errors.New("bad gzip extra field")
		}
		sub := extra[4 : 4+l]
		extra = extra[4+l:]
		if id != "RA" || len(sub) < 6 {
			continue
		}
		dz.chunkLen = int64(binary.LittleEndian.Uint16(sub[2:4]))
		count := int(binary.LittleEndian.Uint16(sub[4:6]))
		if len(sub) < 6+2*count || dz.chunkLen == 0 {
			return nil, errors.New("bad dictzip chunk table")
		}
		for i := range count {
			sizes = append(sizes, int64(binary.LittleEndian.Uint16(sub[6+2*i:])))
		}
	}
	if sizes == nil {
		dz.plain = true
		return dz, nil
	}
	// The file name and comment, zero-terminated, and the header's CRC.
	for _, bit := range []byte{8, 16} {
		if flg&bit == 0 {
			continue
		}
		buf := make([]byte, 256)
		for {
			m, err := f.ReadAt(buf, off)
			if i := bytes.IndexByte(buf[:m], 0); i >= 0 {
				off += int64(i) + 1
				break
			}
			if err != nil {
				return nil, errors.New("truncated gzip header")
			}
			off += int64(m)
		}
	}
	if flg&2 != 0 {
		off += 2
	}
	dz.starts = make([]int64, len(sizes)+1)
	dz.starts[0] = off
	for i, s := range sizes {
		dz.starts[i+1] = dz.starts[i] + s
	}
	return dz, nil
}

func (dz *dictzip) Close() error { return dz.f.Close() }

// ReadAt reads uncompressed bytes at off: from the chunks that hold them.
func (dz *dictzip) ReadAt(p []byte, off int64) (int, error) {
	dz.mu.Lock()
	defer dz.mu.Unlock()
	if dz.plain {
		if dz.whole == nil {
			if _, err := dz.f.Seek(0, io.SeekStart); err != nil {
				return 0, err
			}
			zr, err := gzip.NewReader(dz.f)
			if err != nil {
				return 0, err
			}
			if dz.whole, err = io.ReadAll(zr); err != nil {
				return 0, err
			}
		}
		if off >= int64(len(dz.whole)) {
			return 0, io.EOF
		}
		n := copy(p, dz.whole[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	n := 0
	for n < len(p) {
		c := (off + int64(n)) / dz.chunkLen
		if c >= int64(len(dz.starts)-1) {
			return n, io.EOF
		}
		if err := dz.load(c); err != nil {
			return n, err
		}
		in := (off + int64(n)) - c*dz.chunkLen
		if in >= int64(len(dz.buf)) {
			return n, io.EOF
		}
		n += copy(p[n:], dz.buf[in:])
	}
	return n, nil
}

// load inflates chunk c into buf.
func (dz *dictzip) load(c int64) error {
	if dz.last == c {
		return nil
	}
	start, end := dz.starts[c], dz.starts[c+1]
	zr := flate.NewReader(io.NewSectionReader(dz.f, start, end-start))
	defer zr.Close()
	if cap(dz.buf) < int(dz.chunkLen) {
		dz.buf = make([]byte, dz.chunkLen)
	}
	dz.buf = dz.buf[:dz.chunkLen]
	m, err := io.ReadFull(zr, dz.buf)
	// A chunk ends in a flush, not a final block: running out of input is
	// its end (and the last chunk is shorter).
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		dz.last = -1
		return fmt.Errorf("dictzip chunk %d: %w", c, err)
	}
	dz.buf, dz.last = dz.buf[:m], c
	return nil
}
