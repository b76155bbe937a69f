package searchindex

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unsafe"
)

// A segment's merged term index (its lexicon): the postings of all the
// files it holds under one term dictionary, so that a search looks a term
// up once per segment, not once per chunks file, and scores the rows in
// arrays indexed by their ordinal in the segment.
//
// The rows of the segment's entries are numbered one after the other in
// TOC order (an entry's rows are base .. base+rows-1, in its sidecar's row
// order); keys, times and lengths are copied into arrays of all the rows.
// An entry whose sidecar has no postings (an older build's) or cannot be
// read has no rows here: search reads it the way it reads a file no
// segment holds.
//
// Layout, little endian, at the offset the segment's header gives:
//
//	rows u64 (R), entries u32 (E), versions u32 (V);
//	V version headers of 32 bytes: the tokenizer's version u32, the
//	bytes of a tf u32 (1, 2 or 4), terms u32 (T), 0 u32, where the
//	dictionary starts u64, the terms' bytes u64;
//	E entries of 40 bytes: base u32, rows u32, the tokenizer's version
//	of its postings u32 (0: not merged), 0 u32, its rows' total length
//	u64, their least and greatest time i64 (Unix ms);
//	padded to 8, keys R×i64, times R×i64, lengths R×u32, entry R×u32;
//	then for each version the postings of each term (its rows' ordinals
//	n×u32, sorted, then their tfs n×width, padded to 4), and its
//	dictionary, at an offset that is a multiple of 8: each term's postings
//	offset T×u64, the terms' offsets (T+1)×u32 into the terms' bytes,
//	each term's postings count T×u32, the terms' bytes (sorted).
const (
	lexHead      = 16
	lexVerHead   = 32
	lexEntrySize = 40
)

// Lexicon is a mapped segment's merged term index.
type Lexicon struct {
	b       []byte // the segment
	Rows    int
	Keys    []int64  // by ordinal
	TS      []int64  // by ordinal, Unix ms (0: unknown)
	DL      []uint32 // by ordinal, in index terms
	Ent     []uint32 // by ordinal: its entry
	Entries []LexEntry
	vers    []lexVer
}

// LexEntry is an entry's rows in a lexicon.
type LexEntry struct {
	Base, Rows   int
	Version      int // of the tokenizer; 0: not merged
	SumDL        int64
	MinTS, MaxTS int64
}

type lexVer struct {
	version, tw, terms int
	blockAt            []byte // T×u64
	termOff            []byte // (T+1)×u32
	count              []byte // T×u32
	blob               []byte
}

// Postings are a term's postings in a lexicon: the ordinals of its rows,
// ascending, and their term frequencies.
type Postings struct {
	Ords []uint32
	tfs  []byte
	tw   int
}

// TF is the term frequency of the i-th posting.
func (p Postings) TF(i int) int32 { return int32(readWidth(p.tfs, i, p.tw)) }

// Versions lists the tokenizer versions of the lexicon's postings.
func (l *Lexicon) Versions() []int {
	var out []int
	for _, v := range l.vers {
		out = append(out, v.version)
	}
	return out
}

var errBadLexicon = errors.New("bad merged term index")

// readLexicon reads the lexicon at off of a segment's bytes b with n
// entries, checking that what it names lies within b.
func readLexicon(b []byte, off int64, n int) (*Lexicon, error) {
	le := binary.LittleEndian
	size := int64(len(b))
	if !littleEndian || off%8 != 0 || off < 0 || off+lexHead > size || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
		return nil, errBadLexicon
	}
	h := b[off:]
	r, e, nv := int64(le.Uint64(h)), int64(le.Uint32(h[8:])), int64(le.Uint32(h[12:]))
	if e != int64(n) || r < 0 || r > 1<<31 || nv > 64 {
		return nil, errBadLexicon
	}
	entAt := off + lexHead + nv*lexVerHead
	arrAt := (entAt + e*lexEntrySize + 7) &^ 7
	end := arrAt + r*(8+8+4+4)
	if end > size {
		return nil, errBadLexicon
	}
	l := &Lexicon{b: b, Rows: int(r)}
	ptr := func(at int64) unsafe.Pointer { return unsafe.Pointer(&b[at]) }
	if r > 0 {
		l.Keys = unsafe.Slice((*int64)(ptr(arrAt)), r)
		l.TS = unsafe.Slice((*int64)(ptr(arrAt+8*r)), r)
		l.DL = unsafe.Slice((*uint32)(ptr(arrAt+16*r)), r)
		l.Ent = unsafe.Slice((*uint32)(ptr(arrAt+20*r)), r)
	}
	for i := range e {
		x := b[entAt+i*lexEntrySize:]
		le := LexEntry{Base: int(le.Uint32(x)), Rows: int(le.Uint32(x[4:])), Version: int(le.Uint32(x[8:])),
			SumDL: int64(le.Uint64(x[16:])), MinTS: int64(le.Uint64(x[24:])), MaxTS: int64(le.Uint64(x[32:]))}
		if int64(le.Base)+int64(le.Rows) > r || le.Version < 0 {
			return nil, errBadLexicon
		}
		if l.Entries == nil {
			l.Entries = make([]LexEntry, 0, e)
		}
		l.Entries = append(l.Entries, le)
	}
	for i := range nv {
		x := b[off+lexHead+i*lexVerHead:]
		v := lexVer{version: int(le.Uint32(x)), tw: int(le.Uint32(x[4:])), terms: int(le.Uint32(x[8:]))}
		dictAt, blobLen := int64(le.Uint64(x[16:])), int64(le.Uint64(x[24:]))
		t := int64(v.terms)
		if v.tw != 1 && v.tw != 2 && v.tw != 4 || v.version <= 0 || dictAt < end || dictAt%8 != 0 || blobLen < 0 ||
			dictAt > size || t > size || blobLen > size || dictAt+t*16+4+blobLen > size {
			return nil, errBadLexicon
		}
		v.blockAt = b[dictAt : dictAt+8*t]
		v.termOff = b[dictAt+8*t : dictAt+12*t+4]
		v.count = b[dictAt+12*t+4 : dictAt+16*t+4]
		v.blob = b[dictAt+16*t+4 : dictAt+16*t+4+blobLen]
		if le.Uint32(v.termOff[4*t:]) != uint32(blobLen) {
			return nil, errBadLexicon
		}
		l.vers = append(l.vers, v)
	}
	return l, nil
}

// Postings looks a term up among the postings of a version of the
// tokenizer; a prefix term hands fn each term that starts with it, in
// order. fn is not called for a term the lexicon does not have.
func (l *Lexicon) Postings(version int, t Term, fn func(Postings) error) error {
	var v *lexVer
	for i := range l.vers {
		if l.vers[i].version == version {
			v = &l.vers[i]
		}
	}
	if v == nil {
		return nil
	}
	le := binary.LittleEndian
	term := func(i int) (string, bool) {
		lo, hi := int(le.Uint32(v.termOff[4*i:])), int(le.Uint32(v.termOff[4*i+4:]))
		if lo > hi || hi > len(v.blob) {
			return "", false
		}
		return unsafe.String(unsafe.SliceData(v.blob[lo:hi]), hi-lo), true
	}
	lo, hi := 0, v.terms // the first term not below t
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		tm, ok := term(m)
		if !ok {
			return errBadLexicon
		}
		if tm < t.Text {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for i := lo; i < v.terms; i++ {
		tm, ok := term(i)
		if !ok {
			return errBadLexicon
		}
		if tm != t.Text && !(t.Prefix && strings.HasPrefix(tm, t.Text)) {
			return nil
		}
		at, n := int64(le.Uint64(v.blockAt[8*i:])), int64(le.Uint32(v.count[4*i:]))
		if at < 0 || at%4 != 0 || at > int64(len(l.b)) || at+n*int64(4+v.tw) > int64(len(l.b)) {
			return errBadLexicon
		}
		p := Postings{tfs: l.b[at+4*n : at+n*int64(4+v.tw)], tw: v.tw}
		if n > 0 {
			p.Ords = unsafe.Slice((*uint32)(unsafe.Pointer(&l.b[at])), n)
		}
		ne := uint32(len(l.Entries))
		for _, o := range p.Ords {
			if int(o) >= l.Rows || l.Ent[o] >= ne {
				return errBadLexicon
			}
		}
		if err := fn(p); err != nil {
			return err
		}
		if !t.Prefix {
			return nil
		}
	}
	return nil
}

// postingsView is a sidecar's postings section, read.
type postingsView struct {
	nt, np       int
	rw, tw       int
	rowsAt, tfAt []byte
	termOff      []byte
	postOff      []byte
	blob         []byte
}

// parsePostings reads a sidecar's postings section post of a file of
// rows rows.
func parsePostings(post []byte) (*postingsView, bool) {
	le := binary.LittleEndian
	if len(post) < 12 {
		return nil, false
	}
	nt, np, widths := int64(le.Uint32(post)), int64(le.Uint32(post[4:])), le.Uint32(post[8:])
	rw, tw := int(widths&0xff), int(widths>>8&0xff)
	if rw != 2 && rw != 4 || tw != 1 && tw != 2 && tw != 4 || widths>>16 != 0 {
		return nil, false
	}
	tab := 12 + 8*(nt+1)
	blobAt := tab + int64(rw+tw)*np
	if int64(len(post)) < blobAt {
		return nil, false
	}
	p := &postingsView{nt: int(nt), np: int(np), rw: rw, tw: tw,
		rowsAt: post[tab:], tfAt: post[tab+int64(rw)*np:],
		termOff: post[12 : 12+4*(nt+1)], postOff: post[12+4*(nt+1) : tab], blob: post[blobAt:]}
	if p.off(p.termOff, p.nt) != len(p.blob) || p.off(p.postOff, p.nt) != p.np {
		return nil, false
	}
	return p, true
}

func (p *postingsView) off(tab []byte, i int) int { return int(binary.LittleEndian.Uint32(tab[4*i:])) }

// term is the i-th term ("", false when its offsets are wrong).
func (p *postingsView) term(i int) (string, bool) {
	lo, hi := p.off(p.termOff, i), p.off(p.termOff, i+1)
	if lo > hi || hi > len(p.blob) {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(p.blob[lo:hi]), hi-lo), true
}

// postings are the range of the i-th term's postings (false when wrong).
func (p *postingsView) postings(i int) (from, to int, ok bool) {
	from, to = p.off(p.postOff, i), p.off(p.postOff, i+1)
	return from, to, from <= to && to <= p.np
}

// lexSource is an entry's sidecar, read for merging.
type lexSource struct {
	e    int
	v    *Vectors
	post *postingsView
	next int // its next term
	term string
}

type lexHeap []*lexSource

func (h lexHeap) Len() int { return len(h) }
func (h lexHeap) Less(i, j int) bool {
	return h[i].term < h[j].term || h[i].term == h[j].term && h[i].e < h[j].e
}
func (h lexHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lexHeap) Push(x any)   { *h = append(*h, x.(*lexSource)) }
func (h *lexHeap) Pop() any     { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }
func (s *lexSource) advance() bool {
	if s.next >= s.post.nt {
		return false
	}
	t, ok := s.post.term(s.next)
	s.term = t
	s.next++
	return ok
}

// lexSourceOf reads an entry's sidecar (its bytes in the segment) for
// merging: nil when it has no postings or cannot be read, and then its
// file is searched on its own.
func lexSourceOf(b []byte, e int, path string) *lexSource {
	sc, err := readSidecarHead(memFile(b), b, nil, int64(len(b)), path, false)
	if err != nil || !sc.postings {
		return nil
	}
	v, r := sc.v, sc.v.Rows
	if sc.postAt > sc.postEnd {
		return nil
	}
	v.rows(b[sc.off : sc.off+int64(r)*20])
	post, ok := parsePostings(b[sc.postAt:sc.postEnd])
	if !ok || v.Lexical <= 0 {
		return nil
	}
	for i := range post.np {
		if int(readWidth(post.rowsAt, i, post.rw)) >= r {
			return nil
		}
	}
	for i := range post.nt {
		if _, ok := post.term(i); !ok {
			return nil
		}
		if _, _, ok := post.postings(i); !ok {
			return nil
		}
	}
	return &lexSource{e: e, v: v, post: post}
}

// writeLexicon appends a segment's lexicon to f (w counts what was
// written; seg is the segment as written so far, mapped), and returns
// where it starts.
func writeLexicon(f *os.File, w *countWriter, seg []byte, entries []segEntry, offs []int64) (int64, error) {
	if err := w.pad(); err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	at := w.n
	srcs := make([]*lexSource, len(entries))
	var rows int64
	var versions []int
	for i, e := range entries {
		if s := lexSourceOf(seg[offs[i]:offs[i]+e.n], i, e.path); s != nil {
			srcs[i] = s
			rows += int64(s.v.Rows)
			if !slices.Contains(versions, s.v.Lexical) {
				versions = append(versions, s.v.Lexical)
			}
		}
	}
	if rows > 1<<31 {
		return 0, nil // no lexicon: its files are searched one by one
	}
	slices.Sort(versions)
	bw := bufio.NewWriterSize(f, 64<<10)
	cw := &countWriter{w: bw, n: w.n}
	head := make([]byte, lexHead+len(versions)*lexVerHead+len(entries)*lexEntrySize)
	le.PutUint64(head, uint64(rows))
	le.PutUint32(head[8:], uint32(len(entries)))
	le.PutUint32(head[12:], uint32(len(versions)))
	base := make([]int, len(entries))
	var keys, ts, dl, ent []byte
	n := 0
	for i, s := range srcs {
		base[i] = n
		x := head[lexHead+len(versions)*lexVerHead+i*lexEntrySize:]
		if s == nil {
			continue
		}
		r := s.v.Rows
		var sum int64
		lo, hi := int64(0), int64(0)
		for j := range r {
			keys = le.AppendUint64(keys, uint64(s.v.Keys[j]))
			ts = le.AppendUint64(ts, uint64(s.v.TS[j]))
			dl = le.AppendUint32(dl, s.v.DL[j])
			ent = le.AppendUint32(ent, uint32(i))
			sum += int64(s.v.DL[j])
			if j == 0 || s.v.TS[j] < lo {
				lo = s.v.TS[j]
			}
			if j == 0 || s.v.TS[j] > hi {
				hi = s.v.TS[j]
			}
		}
		le.PutUint32(x, uint32(n))
		le.PutUint32(x[4:], uint32(r))
		le.PutUint32(x[8:], uint32(s.v.Lexical))
		le.PutUint64(x[16:], uint64(sum))
		le.PutUint64(x[24:], uint64(lo))
		le.PutUint64(x[32:], uint64(hi))
		n += r
	}
	cw.Write(head)
	cw.pad()
	cw.Write(keys)
	cw.Write(ts)
	cw.Write(dl)
	cw.Write(ent)
	keys, ts, dl, ent = nil, nil, nil, nil
	for vi, version := range versions {
		tw := 1
		h := &lexHeap{}
		for _, s := range srcs {
			if s != nil && s.v.Lexical == version {
				tw = max(tw, s.post.tw)
				s.next = 0
				if s.advance() {
					*h = append(*h, s)
				}
			}
		}
		heap.Init(h)
		var blockAt []uint64
		var termOff, count []uint32
		var blob []byte
		var ords, tfs []uint32
		var block []byte
		for h.Len() > 0 {
			term := (*h)[0].term
			ords, tfs = ords[:0], tfs[:0]
			for h.Len() > 0 && (*h)[0].term == term {
				s := (*h)[0]
				from, to, _ := s.post.postings(s.next - 1)
				for p := from; p < to; p++ {
					ords = append(ords, uint32(base[s.e])+readWidth(s.post.rowsAt, p, s.post.rw))
					tfs = append(tfs, readWidth(s.post.tfAt, p, s.post.tw))
				}
				if s.advance() {
					heap.Fix(h, 0)
				} else {
					heap.Pop(h)
				}
			}
			blockAt, count = append(blockAt, uint64(cw.n)), append(count, uint32(len(ords)))
			termOff, blob = append(termOff, uint32(len(blob))), append(blob, term...)
			if len(blob) > 1<<31 {
				return 0, fmt.Errorf("the terms of the segment take more than 2 GB")
			}
			block = block[:0]
			for _, o := range ords {
				block = le.AppendUint32(block, o)
			}
			for _, t := range tfs {
				block = appendWidth(block, t, tw)
			}
			for len(block)%4 != 0 {
				block = append(block, 0)
			}
			if _, err := cw.Write(block); err != nil {
				return 0, err
			}
		}
		termOff = append(termOff, uint32(len(blob)))
		if err := cw.pad(); err != nil {
			return 0, err
		}
		x := head[lexHead+vi*lexVerHead:]
		le.PutUint32(x, uint32(version))
		le.PutUint32(x[4:], uint32(tw))
		le.PutUint32(x[8:], uint32(len(count)))
		le.PutUint64(x[16:], uint64(cw.n))
		le.PutUint64(x[24:], uint64(len(blob)))
		var dict []byte
		for _, o := range blockAt {
			dict = le.AppendUint64(dict, o)
		}
		for _, o := range termOff {
			dict = le.AppendUint32(dict, o)
		}
		for _, c := range count {
			dict = le.AppendUint32(dict, c)
		}
		cw.Write(dict)
		if _, err := cw.Write(blob); err != nil {
			return 0, err
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	w.n = cw.n
	// The version headers, now that the dictionaries are written.
	if _, err := f.WriteAt(head[:lexHead+len(versions)*lexVerHead], at); err != nil {
		return 0, err
	}
	return at, nil
}

var _ io.Writer = (*countWriter)(nil)
