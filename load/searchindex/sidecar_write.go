package searchindex

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

	"github.com/pos-lake/pos/internal/rabitq"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// Writing a chunks file's vector sidecar (see sidecar.go for its layout).

// SidecarWriter collects the sidecar of one chunks part file: Add each
// row in the file's order, with AddMeta its metadata, SetPostings the
// file's postings, then Write it under its temporary name (Tmp), which
// the caller renames to Path when it publishes the chunks file.
type SidecarWriter struct {
	tmp, path string
	dim       int
	lexical   int // the version of the tokenizer of its postings
	models    []string
	keys, ts  []int64
	dl        []uint32
	model     []uint8
	scale     []float32
	codes     []int8
	post      []PostingRow // the file's postings, sorted by term and key
	// meta is each row's metadata and text, in row order; a sidecar
	// written without it for every row (merged from older ones) has none.
	meta []RowMeta
}

func NewSidecarWriter(chunksPath string) *SidecarWriter {
	path := strings.TrimSuffix(chunksPath, ".parquet") + VectorsExt
	return &SidecarWriter{tmp: path + ".tmp", path: path, lexical: lexical.Version}
}

// Add quantizes a row's vector. The first vector fixes the dimension; a
// row without a vector, or with another dimension, has none here.
func (v *SidecarWriter) Add(key int64, ts time.Time, dl int, model string, vec []float32) {
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

// AddMeta adds the metadata and text of the next row. A sidecar gets its
// metadata section only when every row has its metadata.
func (v *SidecarWriter) AddMeta(m RowMeta) { v.meta = append(v.meta, m) }

// SetPostings sets the file's postings, sorted by term and chunk key.
func (v *SidecarWriter) SetPostings(post []PostingRow) { v.post = post }

// Tmp is where Write writes the sidecar.
func (v *SidecarWriter) Tmp() string { return v.tmp }

// Path is the sidecar's path beside its chunks file.
func (v *SidecarWriter) Path() string { return v.path }

// fill gives the rows that came before the first vector fixed the
// dimension.
func (v *SidecarWriter) fill() {
	if need := len(v.keys) * v.dim; len(v.codes) < need {
		v.codes = append(make([]int8, need-len(v.codes)), v.codes...)
	}
}

// Write writes the sidecar under its temporary name and lets go of its
// rows.
func (v *SidecarWriter) Write() error {
	v.fill()
	f, err := os.OpenFile(v.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	le := binary.LittleEndian
	hdr := []byte(vectorsMagic)
	hdr = le.AppendUint32(hdr, uint32(len(v.keys)))
	hdr = le.AppendUint32(hdr, uint32(v.dim))
	hdr = le.AppendUint32(hdr, uint32(len(v.models)))
	hdr = le.AppendUint32(hdr, uint32(v.lexical))
	metaAt := len(hdr) // filled in below
	hdr = le.AppendUint64(hdr, 0)
	bitsAt := len(hdr) // filled in below
	hdr = le.AppendUint64(hdr, 0)
	bits, stride := v.signCodes()
	hdr = le.AppendUint32(hdr, rabitq.Version)
	hdr = le.AppendUint32(hdr, uint32(stride))
	for _, m := range v.models {
		hdr = le.AppendUint16(hdr, uint16(min(len(m), math.MaxUint16)))
		hdr = append(hdr, m[:min(len(m), math.MaxUint16)]...)
	}
	for len(hdr)%8 != 0 {
		hdr = append(hdr, 0)
	}
	post := v.postings()
	codesEnd := len(hdr) + len(v.keys)*(8+8+4+1+4+v.dim)
	postAt := codesEnd
	if bits != nil {
		at := (codesEnd + 7) &^ 7
		le.PutUint64(hdr[bitsAt:], uint64(at))
		postAt = at + len(bits)
	}
	var meta []byte
	if len(v.meta) == len(v.keys) && len(v.keys) > 0 {
		enc := encodeMeta(v.meta)
		meta = append(le.AppendUint64(nil, uint64(len(enc))), enc...)
		le.PutUint64(hdr[metaAt:], uint64(postAt+len(post)))
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
	w.Write(codes)
	if bits != nil {
		w.Write(make([]byte, (codesEnd+7)&^7-codesEnd))
		w.Write(bits)
	}
	w.Write(post)
	w.Write(meta)
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	v.keys, v.ts, v.dl, v.model, v.scale, v.codes, v.post, v.meta = nil, nil, nil, nil, nil, nil, nil, nil
	if err != nil {
		os.Remove(v.tmp)
		return fmt.Errorf("writing %s: %w", v.path, err)
	}
	return nil
}

// signCodes encodes each row's sign code from its quantized vector, the
// one the exact score is computed from: the rows' entries and the bytes of
// one; nil for a file without vectors.
func (v *SidecarWriter) signCodes() ([]byte, int) {
	if v.dim == 0 || len(v.keys) == 0 {
		return nil, 0
	}
	enc := rabitq.NewEncoder(v.dim)
	n := rabitq.CodeBytes(v.dim)
	stride := n + 8
	out := make([]byte, len(v.keys)*stride)
	vec := make([]float32, v.dim)
	le := binary.LittleEndian
	for i := range v.keys {
		if v.model[i] == NoModel || v.scale[i] == 0 {
			continue // mult 0: no vector
		}
		for j, c := range v.codes[i*v.dim : (i+1)*v.dim] {
			vec[j] = float32(c)
		}
		e := out[i*stride : (i+1)*stride]
		mult, bound := enc.Encode(e[:n], vec)
		// The vector is scale × the codes encoded, and mult and bound
		// grow with its length.
		s := v.scale[i]
		le.PutUint32(e[n:], math.Float32bits(mult*s))
		le.PutUint32(e[n+4:], math.Float32bits(bound*s))
	}
	return out, stride
}

// postings encodes the postings section.
func (v *SidecarWriter) postings() []byte {
	rows := make(map[int64]uint32, len(v.keys))
	for i, k := range v.keys {
		rows[k] = uint32(i)
	}
	var termOff, postOff []uint32
	var blob []byte
	var maxTF int32
	for i, p := range v.post {
		if i == 0 || p.Term != v.post[i-1].Term {
			termOff, postOff = append(termOff, uint32(len(blob))), append(postOff, uint32(i))
			blob = append(blob, p.Term...)
		}
		maxTF = max(maxTF, p.TF)
	}
	termOff, postOff = append(termOff, uint32(len(blob))), append(postOff, uint32(len(v.post)))
	rw, tw := width(uint32(max(len(v.keys)-1, 0)), 2), width(uint32(maxTF), 1)
	le := binary.LittleEndian
	b := make([]byte, 0, 12+8*len(termOff)+(rw+tw)*len(v.post)+len(blob))
	b = le.AppendUint32(b, uint32(len(termOff)-1))
	b = le.AppendUint32(b, uint32(len(v.post)))
	b = le.AppendUint32(b, uint32(rw)|uint32(tw)<<8)
	for _, o := range termOff {
		b = le.AppendUint32(b, o)
	}
	for _, o := range postOff {
		b = le.AppendUint32(b, o)
	}
	for _, p := range v.post {
		b = appendWidth(b, rows[p.ChunkKey], rw)
	}
	for _, p := range v.post {
		b = appendWidth(b, uint32(p.TF), tw)
	}
	return append(b, blob...)
}

// width is the bytes (least, 1, 2 or 4) that hold n.
func width(n uint32, least int) int {
	switch {
	case n <= math.MaxUint8 && least <= 1:
		return 1
	case n <= math.MaxUint16 && least <= 2:
		return 2
	}
	return 4
}

func appendWidth(b []byte, n uint32, w int) []byte {
	switch w {
	case 1:
		return append(b, byte(n))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(n))
	}
	return binary.LittleEndian.AppendUint32(b, n)
}

// readWidth reads the i-th number of width w in b.
func readWidth(b []byte, i, w int) uint32 {
	switch w {
	case 1:
		return uint32(b[i])
	case 2:
		return uint32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return binary.LittleEndian.Uint32(b[4*i:])
}

// MergeSidecars writes the sidecar of the merged chunks file at chunksPath:
// the rows of the named files' sidecars, in order, their models renumbered,
// and the merged postings post (sorted); dim is the vectors' dimension (0:
// none has vectors).
func MergeSidecars(chunksPath, dir string, names []string, dim int, post []PostingRow) error {
	out := NewSidecarWriter(chunksPath)
	out.tmp, out.dim, out.post = out.path, dim, post
	withMeta := true // every file's sidecar has its rows' metadata
	for _, n := range names {
		v, err := ReadVectors(filepath.Join(dir, n), true)
		if err != nil {
			return err
		}
		if withMeta {
			meta, err := readAllMeta(filepath.Join(dir, n))
			switch {
			case errors.Is(err, ErrNoMeta):
				withMeta, out.meta = false, nil
			case err != nil:
				return err
			default:
				out.meta = append(out.meta, meta...)
			}
		}
		for i := range v.Rows {
			m := uint8(NoModel)
			if v.Model[i] != NoModel && int(v.Model[i]) < len(v.Models) {
				k := slices.Index(out.models, v.Models[v.Model[i]])
				if k < 0 {
					if len(out.models) >= NoModel {
						return fmt.Errorf("%s: more than %d embedding models", dir, NoModel)
					}
					k = len(out.models)
					out.models = append(out.models, v.Models[v.Model[i]])
				}
				m = uint8(k)
			}
			out.keys, out.ts, out.dl = append(out.keys, v.Keys[i]), append(out.ts, v.TS[i]), append(out.dl, v.DL[i])
			out.model, out.scale = append(out.model, m), append(out.scale, v.ScaleAt(i))
			if v.Dim == dim {
				out.codes = append(out.codes, v.Codes[i*dim:(i+1)*dim]...)
			} else {
				out.codes = append(out.codes, make([]int8, dim)...) // a sidecar without vectors
			}
		}
	}
	return out.Write()
}
