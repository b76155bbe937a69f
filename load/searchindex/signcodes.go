package searchindex

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"unsafe"
)

// SignCodes is a chunks file's sidecar as the vector scan reads it: the
// rows' sign codes (see the VectorsExt comment), read whole, and the rest
// of the rows the scan scores exactly read with ReadRows. It is read with
// pread, from the sidecar file or from the index segment's copy, not
// through the segment's mapping: the scan reads a small part of each of
// thousands of sidecars, and on virtual machines a page mapped in costs
// more than copying it.
type SignCodes struct {
	Rows, Dim int
	Models    []string
	// Model is each row's model, read when the sidecar has more than one
	// (with one, a row without a vector has a mult of 0).
	Model []uint8
	// TS and Keys are the rows' times and keys, when asked for.
	TS, Keys []int64
	// Bits are the rows' entries, Stride bytes each, made by rabitq of
	// Version: the code, then mult and bound as f32.
	Bits            []byte
	Stride, Version int

	sc *sidecar
	// whole holds the sidecar's rows (keys to sign codes) when they were
	// read together, from wholeAt: ReadRows then reads nothing more.
	whole   []byte
	wholeAt int64
}

// wholeRead is the size up to which a sidecar's rows, from their keys to
// their sign codes, are read at once: the rows a scan scores exactly are
// then read from memory. Most chunks files hold a few hundred rows at
// most, and nearly all of them a row to score exactly, so one read in
// place of four saves more than the bytes read for nothing cost (a
// variable for tests).
var wholeRead int64 = 128 << 10

// ErrNoSignCodes is returned for a sidecar of a build that wrote no sign
// codes: its rows are scanned with ReadVectors.
var ErrNoSignCodes = errors.New("no sign codes")

// ReadSignCodes reads the sign codes of a chunks file's sidecar into buf
// (reused when large enough), and its rows' times and keys when asked.
// Close lets go of the file.
func (ix *Index) ReadSignCodes(chunksPath string, ts, keys bool, buf []byte) (*SignCodes, error) {
	sc, err := ix.openSidecar(chunksPath)
	if err != nil {
		return nil, err
	}
	if sc.bitsAt == 0 {
		sc.close()
		return nil, ErrNoSignCodes
	}
	r := sc.v.Rows
	s := &SignCodes{Rows: r, Dim: sc.v.Dim, Models: sc.v.Models, Stride: sc.stride, Version: sc.bitsVersion, sc: sc}
	n := r * sc.stride
	if all := sc.bitsAt + int64(n) - sc.off; all <= wholeRead {
		s.whole, s.wholeAt = slices.Grow(buf[:0], int(all))[:all], sc.off
		if err := sc.read(s.whole, sc.off); err != nil {
			s.Close()
			return nil, err
		}
		s.Bits = s.whole[sc.bitsAt-sc.off:]
	} else {
		s.Bits = slices.Grow(buf[:0], n)[:n]
		if err := sc.read(s.Bits, sc.bitsAt); err != nil {
			s.Close()
			return nil, err
		}
	}
	if len(s.Models) > 1 {
		s.Model = make([]uint8, r)
		if err := s.read(s.Model, sc.off+int64(20*r)); err != nil {
			s.Close()
			return nil, err
		}
	}
	if ts {
		if s.TS, err = s.int64s(sc.off+int64(8*r), r); err != nil {
			s.Close()
			return nil, err
		}
	}
	if keys {
		if s.Keys, err = s.int64s(sc.off, r); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// SignRows are rows of a sidecar read whole by SignCodes.ReadRows: their
// keys, scales and codes. Its buffers are reused by the next ReadRows.
type SignRows struct {
	from, dim   int
	keys        []int64 // the SignCodes' Keys, or own
	own         []int64 // the keys read, decoded
	raw         []byte  // the keys' bytes, when read
	scale, code []byte
}

// ReadRows reads the keys, scales and codes of rows from to to (not
// included) into rows: three reads, whatever the number of rows.
func (s *SignCodes) ReadRows(rows *SignRows, from, to int) error {
	if from < 0 || to > s.Rows || from >= to {
		return errors.New("no such rows")
	}
	sc, r, n := s.sc, int64(s.Rows), to-from
	rows.from, rows.dim = from, s.Dim
	rows.scale = slices.Grow(rows.scale[:0], 4*n)[:4*n]
	rows.code = slices.Grow(rows.code[:0], s.Dim*n)[:s.Dim*n]
	if s.Keys != nil {
		rows.keys = s.Keys[from:to]
	} else {
		rows.raw = slices.Grow(rows.raw[:0], 8*n)[:8*n]
		if err := s.read(rows.raw, sc.off+8*int64(from)); err != nil {
			return err
		}
		rows.own = slices.Grow(rows.own[:0], n)[:n]
		for i := range rows.own {
			rows.own[i] = int64(binary.LittleEndian.Uint64(rows.raw[8*i:]))
		}
		rows.keys = rows.own
	}
	if err := s.read(rows.scale, sc.off+21*r+4*int64(from)); err != nil {
		return err
	}
	return s.read(rows.code, sc.off+25*r+int64(s.Dim)*int64(from))
}

// read fills b from off of the sidecar: from the rows read whole when
// they hold it.
func (s *SignCodes) read(b []byte, off int64) error {
	if at := off - s.wholeAt; s.whole != nil && at >= 0 && at+int64(len(b)) <= int64(len(s.whole)) {
		copy(b, s.whole[at:])
		return nil
	}
	return s.sc.read(b, off)
}

// int64s reads n little-endian int64s at off.
func (s *SignCodes) int64s(off int64, n int) ([]int64, error) {
	b := make([]byte, 8*n)
	if err := s.read(b, off); err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}

// Row is the key, the scale and the codes of row i, one of those the
// last ReadRows read.
func (rows *SignRows) Row(i int) (key int64, scale float32, codes []int8) {
	j, le := i-rows.from, binary.LittleEndian
	c := rows.code[j*rows.dim : (j+1)*rows.dim]
	return rows.keys[j], math.Float32frombits(le.Uint32(rows.scale[4*j:])),
		unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(c))), len(c))
}

// Buffer is the memory the codes were read into, for the next
// ReadSignCodes to reuse.
func (s *SignCodes) Buffer() []byte {
	if s.whole != nil {
		return s.whole
	}
	return s.Bits
}

// Close lets go of the sidecar's file.
func (s *SignCodes) Close() { s.sc.close() }

// read fills b from off.
func (sc *sidecar) read(b []byte, off int64) error {
	if off < 0 || off+int64(len(b)) > sc.size {
		return errors.New("reading past the sidecar's end")
	}
	if sc.mem != nil {
		copy(b, sc.mem[off:])
		return nil
	}
	_, err := sc.r.ReadAt(b, off)
	return err
}
