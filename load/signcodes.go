package load

import (
	"encoding/binary"
	"errors"
	"io"
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
}

// ErrNoSignCodes is returned for a sidecar of a build that wrote no sign
// codes: its rows are scanned with ReadVectors.
var ErrNoSignCodes = errors.New("no sign codes")

// ReadSignCodes reads the sign codes of a chunks file's sidecar into buf
// (reused when large enough), and its rows' times and keys when asked.
// Close lets go of the file.
func (ix *SearchIndex) ReadSignCodes(chunksPath string, ts, keys bool, buf []byte) (*SignCodes, error) {
	var sc *sidecar
	var err error
	if x := ix.lookup(chunksPath); x.b != nil && x.seg.f != nil {
		sc, err = readSidecarHead(io.NewSectionReader(x.seg.f, x.off, int64(len(x.b))), nil, int64(len(x.b)), chunksPath, false)
	} else {
		sc, err = ix.openSidecar(chunksPath)
	}
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
	s.Bits = slices.Grow(buf[:0], n)[:n]
	if err := sc.read(s.Bits, sc.bitsAt); err != nil {
		s.Close()
		return nil, err
	}
	if len(s.Models) > 1 {
		s.Model = make([]uint8, r)
		if err := sc.read(s.Model, sc.off+int64(20*r)); err != nil {
			s.Close()
			return nil, err
		}
	}
	if ts {
		if s.TS, err = sc.int64s(sc.off+int64(8*r), r); err != nil {
			s.Close()
			return nil, err
		}
	}
	if keys {
		if s.Keys, err = sc.int64s(sc.off, r); err != nil {
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
		if err := sc.read(rows.raw, sc.off+8*int64(from)); err != nil {
			return err
		}
		rows.own = slices.Grow(rows.own[:0], n)[:n]
		for i := range rows.own {
			rows.own[i] = int64(binary.LittleEndian.Uint64(rows.raw[8*i:]))
		}
		rows.keys = rows.own
	}
	if err := sc.read(rows.scale, sc.off+21*r+4*int64(from)); err != nil {
		return err
	}
	return sc.read(rows.code, sc.off+25*r+int64(s.Dim)*int64(from))
}

// Row is the key, the scale and the codes of row i, one of those the
// last ReadRows read.
func (rows *SignRows) Row(i int) (key int64, scale float32, codes []int8) {
	j, le := i-rows.from, binary.LittleEndian
	c := rows.code[j*rows.dim : (j+1)*rows.dim]
	return rows.keys[j], math.Float32frombits(le.Uint32(rows.scale[4*j:])),
		unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(c))), len(c))
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

// int64s reads n little-endian int64s at off.
func (sc *sidecar) int64s(off int64, n int) ([]int64, error) {
	b := make([]byte, 8*n)
	if err := sc.read(b, off); err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}
