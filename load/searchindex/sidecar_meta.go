package searchindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pos-lake/pos/load/internal/zstdcodec"
)

// RowMeta is what a sidecar keeps of a chunk besides its vector and
// postings: what search reads of its candidates and shows of its hits, so
// that neither opens the chunks Parquet file.
type RowMeta struct {
	ID, ParentID, ContentType, Platform, SessionID, AgentID string
	Project, User, Machine, Tool                            string
	ChunkIndex                                              int64
	Text                                                    string
}

// metaColumns is how many string columns the metadata section has, in
// RowMeta's order (ID .. Tool).
const metaColumns = 10

// field is RowMeta's string column i, in the metadata section's order.
func (m *RowMeta) field(i int) *string {
	return [metaColumns]*string{&m.ID, &m.ParentID, &m.ContentType, &m.Platform, &m.SessionID,
		&m.AgentID, &m.Project, &m.User, &m.Machine, &m.Tool}[min(i, metaColumns-1)]
}

// metaTextBlock is the raw bytes of text compressed together: a hit's text
// costs the decompression of one block.
const metaTextBlock = 64 << 10

// encodeMeta encodes the metadata section of rows, little endian:
//
//	for each of the metaColumns string columns: distinct values K u32,
//	their bytes' length u32, offsets (K+1)×u32, the bytes, each row's
//	value rows×u32;
//	chunk indexes rows×i64;
//	text: blocks u32 (B), block offsets (B+1)×u32 into the compressed
//	bytes, each row's block rows×u32, start rows×u32 and end rows×u32 in
//	its block once decompressed, then the blocks (zstd).
func encodeMeta(rows []RowMeta) []byte {
	le := binary.LittleEndian
	var b []byte
	for c := range metaColumns {
		index := map[string]uint32{}
		var vals []string
		ids := make([]uint32, len(rows))
		n := 0
		for i := range rows {
			s := *rows[i].field(c)
			k, ok := index[s]
			if !ok {
				k = uint32(len(vals))
				index[s] = k
				vals = append(vals, s)
				n += len(s)
			}
			ids[i] = k
		}
		b = le.AppendUint32(b, uint32(len(vals)))
		b = le.AppendUint32(b, uint32(n))
		off := uint32(0)
		b = le.AppendUint32(b, 0)
		for _, s := range vals {
			off += uint32(len(s))
			b = le.AppendUint32(b, off)
		}
		for _, s := range vals {
			b = append(b, s...)
		}
		for _, k := range ids {
			b = le.AppendUint32(b, k)
		}
	}
	for i := range rows {
		b = le.AppendUint64(b, uint64(rows[i].ChunkIndex))
	}

	var blocks [][]byte
	var raw []byte
	block, start, end := make([]uint32, len(rows)), make([]uint32, len(rows)), make([]uint32, len(rows))
	flush := func() {
		blocks = append(blocks, zstdcodec.Page.EncodeAll(raw, nil))
		raw = raw[:0]
	}
	for i := range rows {
		if len(raw) > 0 && len(raw)+len(rows[i].Text) > metaTextBlock {
			flush()
		}
		block[i], start[i] = uint32(len(blocks)), uint32(len(raw))
		raw = append(raw, rows[i].Text...)
		end[i] = uint32(len(raw))
	}
	flush()
	b = le.AppendUint32(b, uint32(len(blocks)))
	off := uint32(0)
	b = le.AppendUint32(b, 0)
	for _, z := range blocks {
		off += uint32(len(z))
		b = le.AppendUint32(b, off)
	}
	for _, col := range [][]uint32{block, start, end} {
		for _, x := range col {
			b = le.AppendUint32(b, x)
		}
	}
	for _, z := range blocks {
		b = append(b, z...)
	}
	return b
}

// ErrNoMeta is returned for a sidecar written without the rows' metadata
// (an older build's, or merged from one): the Parquet file has it.
var ErrNoMeta = errors.New("no metadata in the vector sidecar")

// sidecarMeta is a sidecar's metadata section, parsed.
type sidecarMeta struct {
	rows   int
	cols   [metaColumns]struct{ offs, bytes, ids []byte }
	index  []byte
	blocks int
	boffs  []byte
	block  []byte
	start  []byte
	end    []byte
	// data are the compressed text blocks; when the section was read in
	// part, dataLen bytes of them start at dataAt in the sidecar instead,
	// read by readAt when a row's text is wanted.
	data    []byte
	dataAt  int64
	dataLen int
	readAt  func(b []byte, off int64) error
	// caps are the blocks' decompressed sizes as the rows' ends give
	// them, found at the first block read.
	caps []int
}

// blockCap is the size block bi decompresses to: the largest end of its
// rows. A damaged block that would decompress to more is refused before
// it is, so a bad sidecar cannot make a search allocate without bound.
func (m *sidecarMeta) blockCap(bi int) int {
	if m.caps == nil {
		le := binary.LittleEndian
		m.caps = make([]int, m.blocks)
		for r := range m.rows {
			if b := int(le.Uint32(m.block[4*r:])); b < m.blocks {
				m.caps[b] = max(m.caps[b], int(le.Uint32(m.end[4*r:])))
			}
		}
	}
	return m.caps[bi]
}

// errShortMeta is returned by parseMetaHead for bytes that end before
// the section's text blocks.
var errShortMeta = errors.New("metadata cut short")

// parseMeta parses a metadata section, all of it in b.
func parseMeta(b []byte, rows int) (*sidecarMeta, error) {
	m, p, err := parseMetaHead(b, rows, len(b))
	if err != nil {
		return nil, err
	}
	m.data = b[p:]
	return m, nil
}

// parseMetaHead parses a metadata section of size bytes whose first
// bytes are b, up to its text blocks, which start at p: errShortMeta when
// b ends before them.
func parseMetaHead(b []byte, rows, size int) (_ *sidecarMeta, p int, _ error) {
	le := binary.LittleEndian
	m := &sidecarMeta{rows: rows}
	short := false
	take := func(n int) ([]byte, bool) {
		if n < 0 || p+n > len(b) || p+n < p {
			short = len(b) < size && n >= 0 && p+n >= p && p+n <= size
			return nil, false
		}
		s := b[p : p+n : p+n]
		p += n
		return s, true
	}
	u32 := func() (int, bool) {
		s, ok := take(4)
		if !ok {
			return 0, false
		}
		return int(le.Uint32(s)), true
	}
	bad := func() error {
		if short {
			return errShortMeta
		}
		return errors.New("bad metadata")
	}
	var ok bool
	for c := range metaColumns {
		k, ok1 := u32()
		n, ok2 := u32()
		if !ok1 || !ok2 || k > size {
			return nil, 0, bad()
		}
		col := &m.cols[c]
		if col.offs, ok = take(4 * (k + 1)); !ok {
			return nil, 0, bad()
		}
		if col.bytes, ok = take(n); !ok {
			return nil, 0, bad()
		}
		if col.ids, ok = take(4 * rows); !ok {
			return nil, 0, bad()
		}
		if int(le.Uint32(col.offs[4*k:])) != n {
			return nil, 0, bad()
		}
	}
	if m.index, ok = take(8 * rows); !ok {
		return nil, 0, bad()
	}
	nb, ok := u32()
	if !ok || nb > size {
		return nil, 0, bad()
	}
	m.blocks = nb
	for _, dst := range []*[]byte{&m.boffs, &m.block, &m.start, &m.end} {
		n := 4 * rows
		if dst == &m.boffs {
			n = 4 * (nb + 1)
		}
		if *dst, ok = take(n); !ok {
			return nil, 0, bad()
		}
	}
	m.dataLen = size - p
	if int(le.Uint32(m.boffs[4*nb:])) != m.dataLen {
		return nil, 0, errors.New("bad metadata")
	}
	return m, p, nil
}

// value is row's value of column c (a copy: it outlives the sidecar).
func (m *sidecarMeta) value(c, row int) (string, error) {
	le := binary.LittleEndian
	col := &m.cols[c]
	k := int(le.Uint32(col.ids[4*row:]))
	if 4*(k+1)+4 > len(col.offs) {
		return "", errors.New("bad metadata")
	}
	lo, hi := int(le.Uint32(col.offs[4*k:])), int(le.Uint32(col.offs[4*k+4:]))
	if lo > hi || hi > len(col.bytes) {
		return "", errors.New("bad metadata")
	}
	return string(col.bytes[lo:hi]), nil
}

// row fills in the metadata of a row, its text if text.
func (m *sidecarMeta) row(row int, text bool, blocks map[int][]byte) (RowMeta, error) {
	var r RowMeta
	for c := range metaColumns {
		s, err := m.value(c, row)
		if err != nil {
			return r, err
		}
		*r.field(c) = s
	}
	le := binary.LittleEndian
	r.ChunkIndex = int64(le.Uint64(m.index[8*row:]))
	if !text {
		return r, nil
	}
	bi := int(le.Uint32(m.block[4*row:]))
	if bi >= m.blocks {
		return r, errors.New("bad metadata")
	}
	raw, ok := blocks[bi]
	if !ok {
		lo, hi := int(le.Uint32(m.boffs[4*bi:])), int(le.Uint32(m.boffs[4*bi+4:]))
		if lo > hi || hi > m.dataLen {
			return r, errors.New("bad metadata")
		}
		var z []byte
		if m.readAt == nil {
			z = m.data[lo:hi]
		} else {
			z = make([]byte, hi-lo)
			if err := m.readAt(z, m.dataAt+int64(lo)); err != nil {
				return r, err
			}
		}
		dec, err := metaDecoder()
		if err != nil {
			return r, err
		}
		if raw, err = dec.DecodeAll(z, make([]byte, 0, m.blockCap(bi))); err != nil {
			return r, fmt.Errorf("bad metadata: %w", err)
		}
		blocks[bi] = raw
	}
	lo, hi := int(le.Uint32(m.start[4*row:])), int(le.Uint32(m.end[4*row:]))
	if lo > hi || hi > len(raw) {
		return r, errors.New("bad metadata")
	}
	r.Text = string(raw[lo:hi])
	return r, nil
}

// ReadRowMeta calls fn with the metadata (and with text, the text) of the
// rows of a chunks file whose chunk_key is in keys (nil: every row), from its sidecar (the
// index's copy when it has one): ErrNoMeta when the sidecar has none,
// ErrNoVectors when there is no sidecar. ts is the row's time (zero when
// unknown).
func (ix *Index) ReadRowMeta(chunksPath string, keys map[int64]bool, text bool, fn func(key int64, ts time.Time, m RowMeta)) error {
	sc, err := ix.openSidecar(chunksPath)
	if err != nil {
		return err
	}
	defer sc.close()
	if sc.metaAt == 0 {
		return ErrNoMeta
	}
	r := sc.v.Rows
	// Buffers reused from search to search: on virtual machines the
	// first touch of new memory costs more than reading into it.
	kb, mb := metaBufs.Get().(*[]byte), metaBufs.Get().(*[]byte)
	defer metaBufs.Put(kb)
	defer metaBufs.Put(mb)
	b := grow(kb, r*(8+8))
	if err := sc.read(b, sc.off); err != nil {
		return err
	}
	le := binary.LittleEndian
	bad := func(err error) error { return fmt.Errorf("%s%s: %w", filepath.Base(chunksPath), VectorsExt, err) }
	m, err := sc.readMeta(chunksPath, mb)
	if err != nil {
		return err
	}
	blocks := map[int][]byte{}
	for row := range r {
		key := int64(le.Uint64(b[8*row:]))
		if keys != nil && !keys[key] {
			continue
		}
		rm, err := m.row(row, text, blocks)
		if err != nil {
			return bad(err)
		}
		var ts time.Time
		if ms := int64(le.Uint64(b[8*r+8*row:])); ms != 0 {
			ts = time.UnixMilli(ms).UTC()
		}
		fn(key, ts, rm)
	}
	return nil
}

// metaBufs are buffers ReadRowMeta reads into.
var metaBufs = sync.Pool{New: func() any { return new([]byte) }}

// grow returns (*buf)[:n], grown first when short.
func grow(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	return (*buf)[:n]
}

// metaGuess is how many bytes of a sidecar's metadata section per row
// are read at first, for the part before its text blocks: about 120 for
// half of the chunks files, 280 for the tenth with the longest ids.
const metaGuess = 160

// readMeta reads and parses the sidecar's metadata section. A sidecar
// read from a file has the section read up to its text blocks (most of
// its bytes), into buf (grown when short; the metadata is not to be used
// once buf is used again), and its text blocks are read block by block
// as rows' texts are asked for.
func (sc *sidecar) readMeta(chunksPath string, buf *[]byte) (*sidecarMeta, error) {
	bad := func(err error) error { return fmt.Errorf("%s%s: %w", filepath.Base(chunksPath), VectorsExt, err) }
	if sc.mem == nil {
		// Read from the start of the section (with its length), twice as
		// much each time until the part before the text blocks is in.
		total := sc.size - sc.metaAt
		n := min(total, int64(4<<10+metaGuess*sc.v.Rows))
		for {
			b := grow(buf, int(8+n))
			if err := sc.read(b, sc.metaAt-8); err != nil {
				return nil, err
			}
			if n := binary.LittleEndian.Uint64(b); n != uint64(total) {
				return nil, bad(fmt.Errorf("%d bytes, want %d", sc.size, uint64(sc.metaAt)+n))
			}
			m, p, err := parseMetaHead(b[8:], sc.v.Rows, int(total))
			if err == nil {
				m.dataAt, m.readAt = sc.metaAt+int64(p), sc.read
				return m, nil
			}
			if !errors.Is(err, errShortMeta) || n == total {
				return nil, bad(err)
			}
			n = min(total, 2*n)
		}
	}
	mb, err := sc.metaBytes(chunksPath)
	if err != nil {
		return nil, err
	}
	m, err := parseMeta(mb, sc.v.Rows)
	if err != nil {
		return nil, bad(err)
	}
	return m, nil
}

// readAllMeta returns the metadata and text of every row of a chunks
// file's sidecar, in row order (compaction carries them to the merged
// file's sidecar).
func readAllMeta(chunksPath string) ([]RowMeta, error) {
	sc, err := (*Index)(nil).openSidecar(chunksPath)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	if sc.metaAt == 0 {
		return nil, ErrNoMeta
	}
	mb, err := sc.metaBytes(chunksPath)
	if err != nil {
		return nil, err
	}
	m, err := parseMeta(mb, sc.v.Rows)
	if err != nil {
		return nil, fmt.Errorf("%s%s: %w", filepath.Base(chunksPath), VectorsExt, err)
	}
	out := make([]RowMeta, sc.v.Rows)
	blocks := map[int][]byte{}
	for row := range out {
		if out[row], err = m.row(row, true, blocks); err != nil {
			return nil, fmt.Errorf("%s%s: %w", filepath.Base(chunksPath), VectorsExt, err)
		}
	}
	return out, nil
}

// metaDecoder decodes a sidecar's text blocks into a buffer of the size
// the sidecar gives them, and no further (WithDecodeAllCapLimit): the
// sizes come from the same file as the blocks, so a damaged one is refused
// rather than trusted.
var metaDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecodeAllCapLimit(true))
})
