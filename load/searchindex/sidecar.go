package searchindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// Since POSVEC03 it also holds the file's postings, so that search's
// lexical side reads one small file per chunks file, not a Parquet file:
// opening one, with parquet-go or DuckDB, costs far more than reading a
// small file, and a lake of a million messages has thousands (one per day
// partition). The
// Parquet postings table stays the index SQL sees; a POSVEC02 sidecar
// (an older build's) sends search to it.
//
// Since POSVEC04 it also says which version of the tokenizer
// (lexical.Version) its postings were made with: search looks a file's
// postings up with the terms of its version. An older sidecar's are
// version 1.
//
// Since POSVEC05 it also holds each row's metadata and text (see
// sidecarMeta), so that search reads its candidates and describes its hits
// without opening the Parquet file: the sidecar has what search needs of a
// chunks file, and a search index segment (index.go) holds the
// sidecars of many.
//
// Since POSVEC06 it also holds each row's sign code (internal/rabitq):
// one bit per dimension of the rotated vector and two numbers, from which
// the vector scan estimates every row's score within a bound, reading an
// eighth of the bytes of the codes, and then computes the exact score of
// the rows the estimate cannot rule out.
//
// Layout, little endian:
//
//	magic "POSVEC06", rows u32, dim u32, models u32, lexical u32 (the
//	tokenizer's version), meta u64 (where the metadata section starts; 0:
//	none), bits u64 (where the sign codes start; 0: none), the codes'
//	version u32 (rabitq.Version) and the bytes of a row's entry u32,
//	then each model name as u16 length + bytes, padded to 8 bytes
//	(POSVEC05: no bits fields; POSVEC04 and older: no meta field either);
//	keys rows×i64, ts rows×i64 (Unix ms), dl rows×u32 (the chunk's
//	length in index terms), model rows×u8 (NoModel: no vector), scale
//	rows×f32, codes rows×dim×i8;
//	then, padded to 8 bytes, the sign codes: per row, the code's bytes,
//	then its mult f32 and bound f32 (rabitq.Encoder.Encode; both 0 for a
//	row without a vector);
//	then the postings: terms u32 (T), postings u32 (P), widths u32 (the
//	bytes of a row number, 2 or 4, and of a tf, 1, 2 or 4: the least that
//	hold the file's), term offsets (T+1)×u32 into the term bytes, posting
//	offsets (T+1)×u32, each posting's row P×width and tf P×width, the
//	terms' bytes (sorted);
//	then, from meta on, the metadata section: its length u64, then
//	encodeMeta's bytes.
const (
	VectorsExt     = ".vec"
	vectorsMagic   = "POSVEC06"
	vectorsMagicV5 = "POSVEC05" // without sign codes
	vectorsMagicV4 = "POSVEC04" // without metadata
	vectorsMagicV3 = "POSVEC03" // without the tokenizer's version: 1
	vectorsMagicV2 = "POSVEC02" // without postings
	// NoModel marks a row without a vector of the sidecar's dimension.
	NoModel = 0xff
)

// Vectors is a chunks file's vector sidecar, read.
type Vectors struct {
	Rows, Dim int
	// Lexical is the version of the tokenizer its postings were made
	// with (lexical.Version; 1 for a sidecar older than POSVEC04).
	Lexical  int
	Models   []string
	Keys, TS []int64  // TS in Unix ms, 0 when unknown
	DL       []uint32 // length in index terms (BM25)
	Model    []uint8  // index into Models, or NoModel
	Codes    []int8   // Rows × Dim
	scale    []byte   // Rows × f32: ScaleAt
}

// ErrNoVectors is returned for a chunks file without a sidecar.
var ErrNoVectors = errors.New("no vector sidecar")

// ReadVectors reads the sidecar of a chunks file (its .parquet path);
// without codes, only its rows' keys, times and lengths (a sixth of it).
func ReadVectors(chunksPath string, codes bool) (*Vectors, error) {
	return (*Index)(nil).ReadVectors(chunksPath, codes)
}

// ReadVectors is ReadVectors from the index's copy of the sidecar when it
// has one, else from the file. A nil index reads the file.
func (ix *Index) ReadVectors(chunksPath string, codes bool) (*Vectors, error) {
	sc, err := ix.openSidecar(chunksPath)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	v, r := sc.v, sc.v.Rows
	size := r * (8 + 8 + 4)
	if codes {
		size = r * (8 + 8 + 4 + 1 + 4 + v.Dim)
	}
	b, err := sc.at(sc.off, int64(size))
	if err != nil {
		return nil, err
	}
	if codes && sc.mem != nil {
		populate(b) // all of it is read
	}
	v.rows(b)
	if !codes {
		return v, nil
	}
	b = b[20*r:]
	v.Model = b[:r]
	v.scale = b[r : 5*r]
	raw := b[5*r:]
	v.Codes = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw))
	return v, nil
}

// ScaleAt is the scale of the i-th row's codes (its vector is scale ×
// codes; 0 for a row without a vector).
func (v *Vectors) ScaleAt(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(v.scale[4*i:]))
}

// rows decodes the rows' keys, times and lengths at the start of b: in
// place where b is aligned for them (an index's mapped segment), else
// copied.
func (v *Vectors) rows(b []byte) {
	r, le := v.Rows, binary.LittleEndian
	if r > 0 && littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 {
		v.Keys = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), r)
		v.TS = unsafe.Slice((*int64)(unsafe.Pointer(&b[8*r])), r)
		v.DL = unsafe.Slice((*uint32)(unsafe.Pointer(&b[16*r])), r)
		return
	}
	v.Keys, v.TS, v.DL = make([]int64, r), make([]int64, r), make([]uint32, r)
	for i := range r {
		v.Keys[i] = int64(le.Uint64(b[8*i:]))
		v.TS[i] = int64(le.Uint64(b[8*r+8*i:]))
		v.DL[i] = le.Uint32(b[16*r+4*i:])
	}
}

// littleEndian is whether this machine stores numbers as the sidecars do.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// ErrNoPostings is returned for a sidecar of a build that kept no
// postings in it.
var ErrNoPostings = errors.New("no postings in the vector sidecar")

// ReadLexical reads what search's lexical side needs of a chunks file's
// sidecar: its rows' keys, times and lengths, and the postings of terms
// (distinct), each handed to fn as ReadPostings does. A sidecar without
// postings returns its rows and ErrNoPostings.
func ReadLexical(chunksPath string, terms []string, fn func(term int, key int64, tf, dl int32)) (*Vectors, error) {
	pats := Exact(terms)
	return ReadLexicalQuery(chunksPath, func(int) []Term { return pats }, fn)
}

// Term is a term a search looks up: the term itself, or with Prefix every
// term that starts with it.
type Term struct {
	Text   string
	Prefix bool
}

// Exact returns terms as exact Terms.
func Exact(terms []string) []Term {
	out := make([]Term, len(terms))
	for i, t := range terms {
		out[i] = Term{Text: t}
	}
	return out
}

// ReadLexicalQuery is ReadLexical for the terms that terms returns for the
// version of the tokenizer the file's postings were made with
// (Vectors.Lexical). fn gets the index of the term in that list; a prefix
// hands on a posting for each of its terms, so a chunk may come more than
// once for one prefix.
func ReadLexicalQuery(chunksPath string, terms func(lexVersion int) []Term, fn func(term int, key int64, tf, dl int32)) (*Vectors, error) {
	return (*Index)(nil).ReadLexicalQuery(chunksPath, terms, fn)
}

// ReadLexicalQuery is ReadLexicalQuery from the index's copy of the
// sidecar when it has one, else from the file.
func (ix *Index) ReadLexicalQuery(chunksPath string, terms func(lexVersion int) []Term, fn func(term int, key int64, tf, dl int32)) (*Vectors, error) {
	sc, err := ix.openSidecar(chunksPath)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	v, r := sc.v, sc.v.Rows
	le := binary.LittleEndian
	// The rows' keys, times and lengths, and (after the codes) the
	// postings, in one read when the codes between them are few.
	postAt := sc.postAt
	head := int64(r * (8 + 8 + 4))
	var b, post []byte
	switch rest := sc.postEnd - sc.off; {
	case !sc.postings:
		if b, err = sc.at(sc.off, head); err != nil {
			return nil, err
		}
	case sc.mem != nil || postAt-sc.off-head <= 4<<10:
		if b, err = sc.at(sc.off, rest); err != nil {
			return nil, err
		}
		post = b[postAt-sc.off:]
	default:
		if b, err = sc.at(sc.off, head); err != nil {
			return nil, err
		}
		if post, err = sc.at(postAt, sc.postEnd-postAt); err != nil {
			return nil, err
		}
	}
	v.rows(b)
	if !sc.postings {
		return v, ErrNoPostings
	}
	bad := func() error { return fmt.Errorf("%s%s: bad postings", filepath.Base(chunksPath), VectorsExt) }
	if len(post) < 12 {
		return nil, bad()
	}
	nt, np, widths := int64(le.Uint32(post)), int64(le.Uint32(post[4:])), le.Uint32(post[8:])
	rw, tw := int(widths&0xff), int(widths>>8&0xff)
	if rw != 2 && rw != 4 || tw != 1 && tw != 2 && tw != 4 || widths>>16 != 0 {
		return nil, bad()
	}
	tab := 12 + 8*(nt+1)
	blobAt := tab + int64(rw+tw)*np
	if int64(len(post)) < blobAt {
		return nil, bad()
	}
	rowsAt, tfAt := post[tab:], post[tab+int64(rw)*np:]
	termOff := func(i int) int { return int(le.Uint32(post[12+4*i:])) }
	postOff := func(i int) int { return int(le.Uint32(post[12+4*(int(nt)+1)+4*i:])) }
	blob := post[blobAt:]
	if termOff(int(nt)) != len(blob) || int64(postOff(int(nt))) != np {
		return nil, bad()
	}
	term := func(i int) string {
		lo, hi := termOff(i), termOff(i+1)
		if lo > hi || hi > len(blob) {
			return ""
		}
		return unsafe.String(unsafe.SliceData(blob[lo:hi]), hi-lo)
	}
	for ti, t := range terms(v.Lexical) {
		lo, hi := 0, int(nt) // the first term not below t
		for lo < hi {
			if m := int(uint(lo+hi) >> 1); term(m) < t.Text {
				lo = m + 1
			} else {
				hi = m
			}
		}
		for i := lo; i < int(nt); i++ {
			if tm := term(i); tm != t.Text && !(t.Prefix && strings.HasPrefix(tm, t.Text)) {
				break
			}
			from, to := postOff(i), postOff(i+1)
			if from > to || int64(to) > np {
				return nil, bad()
			}
			for p := from; p < to; p++ {
				row := int(readWidth(rowsAt, p, rw))
				if row >= r {
					return nil, bad()
				}
				fn(ti, v.Keys[row], int32(readWidth(tfAt, p, tw)), int32(v.DL[row]))
			}
			if !t.Prefix {
				break
			}
		}
	}
	return v, nil
}

// sidecar is an open sidecar whose header has been read: a file, or an
// index segment's copy of one in memory.
type sidecar struct {
	f        *os.File    // the sidecar's file, when it is read from one (closed with it)
	r        io.ReaderAt // where its bytes are read from when mem is nil
	mem      []byte      // the sidecar's bytes, when it is an index's copy
	size     int64
	v        *Vectors // Rows, Dim and Models
	off      int64    // where the keys start
	postings bool     // POSVEC03 and later: postings after the codes
	postAt   int64    // where the postings start (where the codes end, or the sign codes)
	postEnd  int64    // where the postings end
	// The sign codes (POSVEC06): where they start (0: none), their
	// version and the bytes of a row's.
	bitsAt              int64
	bitsVersion, stride int
	metaAt              int64 // where the metadata section starts (0: none)
}

// at returns n bytes at off: a slice of the index's copy (not to be
// written, nor kept past the search), or read from the file.
func (sc *sidecar) at(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > sc.size {
		return nil, fmt.Errorf("reading %d bytes at %d of a sidecar of %d", n, off, sc.size)
	}
	if sc.mem != nil {
		return sc.mem[off : off+n : off+n], nil
	}
	b := make([]byte, n)
	return b, sc.read(b, off)
}

// metaBytes returns the metadata section's bytes, after its length,
// which it checks against the sidecar's size.
func (sc *sidecar) metaBytes(chunksPath string) ([]byte, error) {
	b, err := sc.at(sc.metaAt-8, sc.size-sc.metaAt+8)
	if err != nil {
		return nil, err
	}
	if n := binary.LittleEndian.Uint64(b); n != uint64(len(b)-8) {
		return nil, fmt.Errorf("%s%s: %d bytes, want %d", filepath.Base(chunksPath), VectorsExt, sc.size, uint64(sc.metaAt)+n)
	}
	return b[8:], nil
}

func (sc *sidecar) close() {
	if sc.f != nil {
		sc.f.Close()
	}
}

// openSidecar opens a chunks file's sidecar: the index's copy, read with
// pread from the segment's file (see SignCodes for why not through the
// mapping), or the sidecar file.
func (ix *Index) openSidecar(chunksPath string) (*sidecar, error) {
	if x := ix.lookup(chunksPath); x.b != nil {
		n := int64(len(x.b))
		if x.seg.f == nil {
			return readSidecarHead(memFile(x.b), x.b, x.head, n, chunksPath, false)
		}
		return readSidecarHead(io.NewSectionReader(x.seg.f, x.off, n), nil, x.head, n, chunksPath, false)
	}
	f, err := os.Open(strings.TrimSuffix(chunksPath, ".parquet") + VectorsExt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoVectors
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	sc, err := readSidecarHead(f, nil, nil, fi.Size(), chunksPath, true)
	if err != nil {
		f.Close()
		return nil, err
	}
	sc.f = f
	return sc, nil
}

// memFile reads a sidecar's bytes as a file.
type memFile []byte

func (m memFile) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m)) {
		return 0, io.EOF
	}
	n := copy(b, m[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// modelNames parses a sidecar header's model names, which start at off
// (head holds at least its first off bytes): the names and the offset past
// them, padded to 8 bytes; ok is false when they do not end within head.
func modelNames(head []byte, off int) (names []string, end int, ok bool) {
	le := binary.LittleEndian
	for range int(le.Uint32(head[16:])) {
		if off+2 > len(head) {
			return nil, 0, false
		}
		n := int(le.Uint16(head[off:]))
		if off+2+n > len(head) {
			return nil, 0, false
		}
		names = append(names, internName(head[off+2:off+2+n]))
		off += 2 + n
	}
	return names, (off + 7) &^ 7, true
}

// modelNameCache holds the model names sidecars have: a lake's thousands
// of sidecars name one or two models, and a search reads every header.
var modelNameCache struct {
	sync.Mutex
	m map[string]string
}

// internName returns b as a string, the same one for the same bytes (up
// to a few dozen names).
func internName(b []byte) string {
	c := &modelNameCache
	c.Lock()
	defer c.Unlock()
	if s, ok := c.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(c.m) < 64 {
		if c.m == nil {
			c.m = map[string]string{}
		}
		c.m[s] = s
	}
	return s
}

// sidecarHeadRead is how many bytes of a sidecar are read for its header:
// enough for the model names of all but sidecars of many models.
const sidecarHeadRead = 512

// sidecarHeader is the fixed part of a sidecar's header, by version.
type sidecarHeader struct {
	postings            bool // POSVEC03 and later
	namesAt, lex        int
	metaAt, bitsAt      int64
	bitsVersion, stride int
}

// parseSidecarHeader reads the fixed part of a header; ok is false for
// bytes that are not the start of a sidecar this build reads.
func parseSidecarHeader(head []byte) (h sidecarHeader, ok bool) {
	le := binary.LittleEndian
	if len(head) < 20 {
		return h, false
	}
	magic := head[:8]
	h.namesAt, h.lex, h.postings = 20, 1, string(magic) != vectorsMagicV2
	switch {
	case len(head) >= 48 && string(magic) == vectorsMagic:
		h.namesAt, h.lex, h.metaAt = 48, int(le.Uint32(head[20:])), int64(le.Uint64(head[24:]))
		h.bitsAt, h.bitsVersion, h.stride = int64(le.Uint64(head[32:])), int(le.Uint32(head[40:])), int(le.Uint32(head[44:]))
	case len(head) >= 32 && string(magic) == vectorsMagicV5:
		h.namesAt, h.lex, h.metaAt = 32, int(le.Uint32(head[20:])), int64(le.Uint64(head[24:]))
	case len(head) >= 24 && string(magic) == vectorsMagicV4:
		h.namesAt, h.lex = 24, int(le.Uint32(head[20:]))
	case string(magic) == vectorsMagicV3 || string(magic) == vectorsMagicV2:
	default:
		return h, false
	}
	return h, true
}

// sidecarHeadLen is the length of the header at the start of b through
// its model names, padded to 8 bytes: 0 when b does not hold it.
func sidecarHeadLen(b []byte) int {
	h, ok := parseSidecarHeader(b)
	if !ok {
		return 0
	}
	if _, end, ok := modelNames(b, h.namesAt); ok && end <= len(b) {
		return end
	}
	return 0
}

// readSidecarHead reads the header of a sidecar of size bytes from r (mem:
// its bytes, when in memory; known: a copy of its header through the
// model names, from an index segment's TOC, when there is one).
//
// A sidecar file's metadata section is checked to end where the file
// does (checkMeta); an index's copy is checked when its metadata is read
// (metaBytes): the segment's own length guards it, and a search that
// reads no metadata leaves that part of each copy unread.
func readSidecarHead(r io.ReaderAt, mem, known []byte, size int64, chunksPath string, checkMeta bool) (*sidecar, error) {
	bad := func(what string) error { return fmt.Errorf("%s%s: %s", filepath.Base(chunksPath), VectorsExt, what) }
	le := binary.LittleEndian
	head := known
	if int64(len(known)) > size || sidecarHeadLen(known) != len(known) {
		head = nil // not a whole header: read the sidecar's own
	}
	if head == nil && mem != nil {
		// Its model names fit in the first 4 KB but for a sidecar of many
		// models, which is read again at its largest.
		head = mem[:min(size, 4<<10)]
	} else if head == nil {
		head = make([]byte, min(size, sidecarHeadRead))
		if _, err := r.ReadAt(head, 0); err != nil {
			return nil, err
		}
	}
	h, ok := parseSidecarHeader(head)
	if !ok {
		return nil, bad("not a vector sidecar of this build")
	}
	namesAt, lex, metaAt, bitsAt, bitsVersion, stride := h.namesAt, h.lex, h.metaAt, h.bitsAt, h.bitsVersion, h.stride
	names, off, ok := modelNames(head, namesAt)
	if !ok && int64(len(head)) < size {
		if mem != nil {
			head = mem[:min(size, 64<<10)]
		} else {
			head = make([]byte, min(size, 64<<10))
			if _, err := r.ReadAt(head, 0); err != nil {
				return nil, err
			}
		}
		names, off, ok = modelNames(head, namesAt)
	}
	if !ok {
		return nil, bad("truncated")
	}
	sc := &sidecar{mem: mem, r: r, size: size, postings: h.postings, postEnd: size}
	v := &Vectors{Rows: int(le.Uint32(head[8:])), Dim: int(le.Uint32(head[12:])), Models: names, Lexical: lex}
	if int64(v.Rows) > size/int64(8+8+4+1+4+v.Dim) {
		// Rows of that many bytes do not fit (nor does their size in an
		// int64, for some).
		return nil, bad(fmt.Sprintf("%d rows of %d dimensions in %d bytes", v.Rows, v.Dim, size))
	}
	need := int64(off) + int64(v.Rows)*int64(8+8+4+1+4+v.Dim)
	sc.postAt = need
	if bitsAt != 0 {
		// The sign codes, after the codes, padded to 8 bytes.
		if bitsAt != (need+7)&^7 || stride < 8 || stride > 1<<16 || stride%8 != 0 {
			return nil, bad("bad sign codes")
		}
		n := int64(v.Rows) * int64(stride)
		if n > size-bitsAt {
			return nil, bad(fmt.Sprintf("%d rows of sign codes of %d bytes in %d bytes", v.Rows, stride, size))
		}
		sc.bitsAt, sc.bitsVersion, sc.stride = bitsAt, bitsVersion, stride
		need = bitsAt + n
		sc.postAt = need
	}
	if sc.postings && size < need+8 || !sc.postings && size != need {
		return nil, bad(fmt.Sprintf("%d bytes, want %d", size, need))
	}
	if metaAt != 0 {
		if metaAt < need+12 || metaAt > size-8 {
			return nil, bad("bad metadata offset")
		}
		sc.metaAt, sc.postEnd = metaAt+8, metaAt
		// The section starts with its length: a sidecar cut short says so.
		if checkMeta {
			n := make([]byte, 8)
			if _, err := r.ReadAt(n, metaAt); err != nil {
				return nil, err
			}
			if metaAt+8+int64(le.Uint64(n)) != size {
				return nil, bad(fmt.Sprintf("%d bytes, want %d", size, metaAt+8+int64(le.Uint64(n))))
			}
		}
	}
	sc.v, sc.off = v, int64(off)
	return sc, nil
}
