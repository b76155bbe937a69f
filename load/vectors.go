package load

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Beside each chunks file goes its vector sidecar, <part>.vec: the chunk
// key, time and model of each row, in the file's row order, and its vector
// quantized to one signed byte per dimension with a per-row scale. It is
// what search scans: a fifth of the bytes of the Parquet list column, and
// read with no decoding at all. The Parquet file keeps the exact vectors
// (the chunks view's vector column); a chunks file without its sidecar (an
// older build's) is scored by DuckDB from those.
//
// Layout, little endian:
//
//	magic "POSVEC02", rows u32, dim u32, models u32, then each model name
//	as u16 length + bytes, padded to 8 bytes;
//	keys rows×i64, ts rows×i64 (Unix ms), dl rows×u32 (the chunk's
//	length in index terms), model rows×u8 (NoModel: no vector), scale
//	rows×f32, codes rows×dim×i8.
const (
	VectorsExt   = ".vec"
	vectorsMagic = "POSVEC02"
	// NoModel marks a row without a vector of the sidecar's dimension.
	NoModel = 0xff
)

// vectorFile collects the sidecar of one chunks part file.
type vectorFile struct {
	tmp, path string
	dim       int
	models    []string
	keys, ts  []int64
	dl        []uint32
	model     []uint8
	scale     []float32
	codes     []int8
}

func newVectorFile(chunksPath string) *vectorFile {
	path := strings.TrimSuffix(chunksPath, ".parquet") + VectorsExt
	return &vectorFile{tmp: path + ".tmp", path: path}
}

// add quantizes a row's vector. The first vector fixes the dimension; a
// row without a vector, or with another dimension, has none here.
func (v *vectorFile) add(key int64, ts time.Time, dl int, model string, vec []float32) {
	if v.dim == 0 && len(vec) > 0 {
		v.dim = len(vec)
	}
	m := uint8(NoModel)
	if len(vec) > 0 && len(vec) == v.dim {
		i := slices.Index(v.models, model)
		if i < 0 && len(v.models) < NoModel {
			i = len(v.models)
			v.models = append(v.models, model)
		}
		if i >= 0 {
			m = uint8(i)
		}
	}
	var ms int64
	if !ts.IsZero() {
		ms = ts.UnixMilli()
	}
	v.keys, v.ts, v.model = append(v.keys, key), append(v.ts, ms), append(v.model, m)
	v.dl = append(v.dl, uint32(dl))
	scale := float32(0)
	if m != NoModel {
		var maxAbs float32
		for _, x := range vec {
			maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
		}
		if maxAbs > 0 {
			scale = maxAbs / 127
		}
	}
	v.scale = append(v.scale, scale)
	if v.dim == 0 {
		return
	}
	start := len(v.codes)
	v.codes = slices.Grow(v.codes, v.dim)[:start+v.dim]
	if scale == 0 {
		clear(v.codes[start:])
		return
	}
	for i, x := range vec {
		v.codes[start+i] = int8(math.Round(float64(x / scale)))
	}
}

// fill gives the rows that came before the first vector fixed the
// dimension.
func (v *vectorFile) fill() {
	if need := len(v.keys) * v.dim; len(v.codes) < need {
		v.codes = append(make([]int8, need-len(v.codes)), v.codes...)
	}
}

func (v *vectorFile) write() error {
	v.fill()
	f, err := os.OpenFile(v.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	le := binary.LittleEndian
	hdr := []byte(vectorsMagic)
	hdr = le.AppendUint32(hdr, uint32(len(v.keys)))
	hdr = le.AppendUint32(hdr, uint32(v.dim))
	hdr = le.AppendUint32(hdr, uint32(len(v.models)))
	for _, m := range v.models {
		hdr = le.AppendUint16(hdr, uint16(min(len(m), math.MaxUint16)))
		hdr = append(hdr, m[:min(len(m), math.MaxUint16)]...)
	}
	for len(hdr)%8 != 0 {
		hdr = append(hdr, 0)
	}
	w.Write(hdr)
	buf := make([]byte, 0, 8*len(v.keys))
	for _, k := range v.keys {
		buf = le.AppendUint64(buf, uint64(k))
	}
	w.Write(buf)
	buf = buf[:0]
	for _, t := range v.ts {
		buf = le.AppendUint64(buf, uint64(t))
	}
	w.Write(buf)
	buf = buf[:0]
	for _, n := range v.dl {
		buf = le.AppendUint32(buf, n)
	}
	w.Write(buf)
	w.Write(v.model)
	buf = buf[:0]
	for _, s := range v.scale {
		buf = le.AppendUint32(buf, math.Float32bits(s))
	}
	w.Write(buf)
	codes := make([]byte, len(v.codes))
	for i, c := range v.codes {
		codes[i] = byte(c)
	}
	_, err = w.Write(codes)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	v.keys, v.ts, v.dl, v.model, v.scale, v.codes = nil, nil, nil, nil, nil, nil
	if err != nil {
		os.Remove(v.tmp)
		return fmt.Errorf("writing %s: %w", v.path, err)
	}
	return nil
}

// Vectors is a chunks file's vector sidecar, read.
type Vectors struct {
	Rows, Dim int
	Models    []string
	Keys, TS  []int64  // TS in Unix ms, 0 when unknown
	DL        []uint32 // length in index terms (BM25)
	Model     []uint8  // index into Models, or NoModel
	Scale     []float32
	Codes     []int8 // Rows × Dim
}

// ErrNoVectors is returned for a chunks file without a sidecar.
var ErrNoVectors = errors.New("no vector sidecar")

// ReadVectors reads the sidecar of a chunks file (its .parquet path);
// without codes, only its rows' keys, times and lengths (a sixth of it).
func ReadVectors(chunksPath string, codes bool) (*Vectors, error) {
	f, err := os.Open(strings.TrimSuffix(chunksPath, ".parquet") + VectorsExt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoVectors
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("%s%s: %s", filepath.Base(chunksPath), VectorsExt, what) }
	le := binary.LittleEndian
	head := make([]byte, min(fi.Size(), 64<<10))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	if len(head) < 20 || string(head[:8]) != vectorsMagic {
		return nil, bad("not a vector sidecar of this build")
	}
	v := &Vectors{Rows: int(le.Uint32(head[8:])), Dim: int(le.Uint32(head[12:]))}
	nm := int(le.Uint32(head[16:]))
	off := 20
	for i := 0; i < nm; i++ {
		if off+2 > len(head) {
			return nil, bad("truncated")
		}
		n := int(le.Uint16(head[off:]))
		if off+2+n > len(head) {
			return nil, bad("truncated")
		}
		v.Models = append(v.Models, string(head[off+2:off+2+n]))
		off += 2 + n
	}
	off = (off + 7) &^ 7
	r := v.Rows
	if need := int64(off + r*(8+8+4+1+4) + r*v.Dim); fi.Size() != need {
		return nil, bad(fmt.Sprintf("%d bytes, want %d", fi.Size(), need))
	}
	size := r * (8 + 8 + 4)
	if codes {
		size = r * (8 + 8 + 4 + 1 + 4 + v.Dim)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		return nil, err
	}
	v.Keys, v.TS, v.DL = make([]int64, r), make([]int64, r), make([]uint32, r)
	for i := range r {
		v.Keys[i] = int64(le.Uint64(b[8*i:]))
		v.TS[i] = int64(le.Uint64(b[8*r+8*i:]))
		v.DL[i] = le.Uint32(b[16*r+4*i:])
	}
	if !codes {
		return v, nil
	}
	b = b[20*r:]
	v.Model = b[:r]
	v.Scale = make([]float32, r)
	for i := range r {
		v.Scale[i] = math.Float32frombits(le.Uint32(b[r+4*i:]))
	}
	raw := b[5*r:]
	v.Codes = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw))
	return v, nil
}

// chunkIndex is what a chunks part file carries beside it: its postings
// and its vector sidecar, published before it.
type chunkIndex struct {
	post *postingsFile
	vecs *vectorFile
}

func newChunkIndex(lake string, p *partition, partName string) *chunkIndex {
	return &chunkIndex{
		post: newPostingsFile(lake, p, partName),
		vecs: newVectorFile(filepath.Join(p.dir, partName)),
	}
}

func (x *chunkIndex) full() bool { return x.post.full() }

func (x *chunkIndex) write() error {
	if err := x.post.write(); err != nil {
		return err
	}
	if err := x.vecs.write(); err != nil {
		os.Remove(x.post.tmp)
		return err
	}
	return nil
}

func (x *chunkIndex) tmps() []string { return []string{x.post.tmp, x.vecs.tmp} }

// publish renames the postings and the sidecar into place.
func (x *chunkIndex) publish() (int, error) {
	for i, f := range [][2]string{{x.post.tmp, x.post.path}, {x.vecs.tmp, x.vecs.path}} {
		if err := os.Rename(f[0], f[1]); err != nil {
			return i, fmt.Errorf("publishing %s: %w", f[1], err)
		}
	}
	return 2, nil
}

func (x *chunkIndex) abort() {
	os.Remove(x.post.tmp)
	os.Remove(x.vecs.tmp)
}
