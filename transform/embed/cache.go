package embed

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/internal/lazyre"
)

// Key identifies a text in the cache: the first 16 bytes of its SHA-256.
type Key [16]byte

// KeyOf returns the cache key of a text.
func KeyOf(text string) Key {
	s := sha256.Sum256([]byte(text))
	var k Key
	copy(k[:], s[:16])
	return k
}

// CacheDir is where a lake keeps its embedding cache.
func CacheDir(lake string) string { return filepath.Join(lake, "_cache", "embeddings") }

// Cache remembers the vectors a model gave for texts, so a backfill run
// again embeds nothing twice. It lives in the lake, one directory per model
// and dimension:
//
//	<lake>/_cache/embeddings/<model>@<dim>/seg-<run>.keys   16-byte text hashes
//	<lake>/_cache/embeddings/<model>@<dim>/seg-<run>.vecs   dim float32s per key, same order
//
// Each run appends to a segment of its own and never rewrites another's, so
// runs may share a cache; an entry is readable once both its vector and its
// key are on disk, and a torn tail (a killed run) is ignored. Closing the
// last user of a cache with many segments merges them into one.
type Cache struct {
	dir  string
	dims int // the dimension asked for (0: the model's default)

	mu      sync.Mutex
	dim     int
	index   map[Key]loc
	segs    []*os.File // the .vecs of each segment, for ReadAt
	own     *segWriter
	lock    *os.File
	entries int
}

type loc struct {
	seg int32
	idx uint32
}

const (
	keysMagic   = "POSEMBK1"
	vecsMagic   = "POSEMBV1"
	headerSize  = 16
	maxSegments = 8
)

var unsafeName = lazyre.New(`[^A-Za-z0-9._-]+`)

// cacheName is the directory of a model's vectors of a dimension.
func cacheName(model string, dims int) string {
	name := unsafeName().ReplaceAllString(model, "_")
	if len(name) > 80 || name != model {
		sum := sha256.Sum256([]byte(model))
		name = name[:min(len(name), 60)] + "-" + hex.EncodeToString(sum[:4])
	}
	d := "default"
	if dims > 0 {
		d = strconv.Itoa(dims)
	}
	return name + "@" + d
}

// OpenCache opens (creating it if needed) the cache of model's vectors of
// dims dimensions (0: the model's default) under root.
func OpenCache(root, model string, dims int) (*Cache, error) {
	dir := filepath.Join(root, cacheName(model, dims))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	lk, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	// A shared lock: runs read and append side by side; only a merge
	// needs the cache alone.
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_SH); err != nil {
		lk.Close()
		return nil, fmt.Errorf("embedding cache: locking %s: %w", dir, err)
	}
	c := &Cache{dir: dir, dims: dims, dim: dims, index: map[Key]loc{}, lock: lk}
	if err := c.load(); err != nil {
		c.closeFiles()
		return nil, err
	}
	return c, nil
}

// load reads the keys of every segment.
func (c *Cache) load() error {
	names, err := filepath.Glob(filepath.Join(fsglob.Quote(c.dir), "seg-*.keys"))
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, kn := range names {
		vn := strings.TrimSuffix(kn, ".keys") + ".vecs"
		keys, kdim, err := readKeys(kn)
		if err != nil {
			continue // unreadable: a cache miss, not an error
		}
		vf, err := os.Open(vn)
		if err != nil {
			continue
		}
		vdim, size, err := readHeader(vf, vecsMagic)
		if err != nil || vdim != kdim || (c.dim != 0 && kdim != c.dim) {
			vf.Close()
			continue
		}
		c.dim = kdim
		n := min(len(keys), int((size-headerSize)/int64(4*kdim)))
		seg := int32(len(c.segs))
		c.segs = append(c.segs, vf)
		for i := 0; i < n; i++ {
			c.index[keys[i]] = loc{seg: seg, idx: uint32(i)}
		}
		c.entries += n
	}
	return nil
}

func readHeader(f *os.File, magic string) (dim int, size int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return 0, 0, err
	}
	if string(h[:8]) != magic {
		return 0, 0, errors.New("not a cache segment")
	}
	dim = int(binary.LittleEndian.Uint32(h[8:12]))
	if dim <= 0 || dim > 1<<16 {
		return 0, 0, errors.New("bad dimension")
	}
	return dim, fi.Size(), nil
}

func readKeys(path string) ([]Key, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	dim, size, err := readHeader(f, keysMagic)
	if err != nil {
		return nil, 0, err
	}
	n := int((size - headerSize) / 16)
	buf := make([]byte, n*16)
	if _, err := f.ReadAt(buf, headerSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	keys := make([]Key, n)
	for i := range keys {
		copy(keys[i][:], buf[i*16:])
	}
	return keys, dim, nil
}

// Len is the number of vectors the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.index)
}

// Get returns the vector cached for a key.
func (c *Cache) Get(k Key) ([]float32, bool) {
	c.mu.Lock()
	l, ok := c.index[k]
	if !ok {
		c.mu.Unlock()
		return nil, false
	}
	if c.own != nil && int(l.seg) == c.own.seg && int(l.idx) >= c.own.flushed {
		if err := c.own.flush(); err != nil {
			c.mu.Unlock()
			return nil, false
		}
	}
	f, dim := c.segs[l.seg], c.dim
	c.mu.Unlock()
	buf := make([]byte, 4*dim)
	if _, err := f.ReadAt(buf, headerSize+int64(l.idx)*int64(4*dim)); err != nil {
		return nil, false
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return v, true
}

// Put adds a vector. Vectors of another dimension than the cache's are
// not kept.
func (c *Cache) Put(k Key, v []float32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.index[k]; ok {
		return nil
	}
	if c.dim == 0 {
		c.dim = len(v)
	}
	if len(v) != c.dim {
		return nil
	}
	if c.own == nil {
		w, err := newSegWriter(c.dir, c.dim, len(c.segs))
		if err != nil {
			return fmt.Errorf("embedding cache: %w", err)
		}
		c.own = w
		c.segs = append(c.segs, w.vf)
	}
	idx, err := c.own.add(k, v)
	if err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	c.index[k] = loc{seg: int32(c.own.seg), idx: uint32(idx)}
	return nil
}

// Close makes this run's vectors durable and, when the cache has many
// segments and no other run uses it, merges them into one.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	if c.own != nil {
		err = c.own.finish()
	}
	if err == nil && c.segCount() > maxSegments {
		err = c.merge()
	}
	c.closeFiles()
	return err
}

func (c *Cache) segCount() int {
	n, _ := filepath.Glob(filepath.Join(fsglob.Quote(c.dir), "seg-*.keys"))
	return len(n)
}

func (c *Cache) closeFiles() {
	for _, f := range c.segs {
		f.Close()
	}
	c.segs = nil
	if c.lock != nil {
		syscall.Flock(int(c.lock.Fd()), syscall.LOCK_UN)
		c.lock.Close()
		c.lock = nil
	}
}

// merge rewrites every segment as one, if no other run holds the cache.
func (c *Cache) merge() error {
	if err := syscall.Flock(int(c.lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // in use: merge another time
	}
	old, _ := filepath.Glob(filepath.Join(fsglob.Quote(c.dir), "seg-*"))
	w, err := newSegWriter(c.dir, c.dim, -1)
	if err != nil {
		return err
	}
	keys := make([]Key, 0, len(c.index))
	for k := range c.index {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return c.index[keys[i]].seg < c.index[keys[j]].seg ||
			c.index[keys[i]].seg == c.index[keys[j]].seg && c.index[keys[i]].idx < c.index[keys[j]].idx
	})
	buf := make([]byte, 4*c.dim)
	v := make([]float32, c.dim)
	for _, k := range keys {
		l := c.index[k]
		if _, err := c.segs[l.seg].ReadAt(buf, headerSize+int64(l.idx)*int64(4*c.dim)); err != nil {
			w.abort()
			return fmt.Errorf("embedding cache: merging: %w", err)
		}
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		if _, err := w.add(k, v); err != nil {
			w.abort()
			return err
		}
	}
	if err := w.finish(); err != nil {
		w.abort()
		return err
	}
	w.vf.Close()
	for _, p := range old {
		if p != w.kpath && p != w.vpath {
			os.Remove(p)
		}
	}
	return nil
}

// segWriter appends to one segment.
type segWriter struct {
	seg          int
	kpath, vpath string
	kf, vf       *os.File
	kw, vw       *bufio.Writer
	n, flushed   int
	buf          []byte
}

func newSegWriter(dir string, dim, seg int) (*segWriter, error) {
	var r [4]byte
	rand.Read(r[:])
	base := filepath.Join(dir, "seg-"+time.Now().UTC().Format("20060102T150405.000000000")+"-"+hex.EncodeToString(r[:]))
	w := &segWriter{seg: seg, kpath: base + ".keys", vpath: base + ".vecs"}
	var err error
	if w.vf, err = os.OpenFile(w.vpath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		return nil, err
	}
	if w.kf, err = os.OpenFile(w.kpath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		w.vf.Close()
		os.Remove(w.vpath)
		return nil, err
	}
	w.kw, w.vw = bufio.NewWriterSize(w.kf, 64<<10), bufio.NewWriterSize(w.vf, 64<<10)
	var h [headerSize]byte
	binary.LittleEndian.PutUint32(h[8:12], uint32(dim))
	copy(h[:8], vecsMagic)
	w.vw.Write(h[:])
	copy(h[:8], keysMagic)
	w.kw.Write(h[:])
	return w, w.flush()
}

func (w *segWriter) add(k Key, v []float32) (int, error) {
	w.buf = w.buf[:0]
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(x))
	}
	if _, err := w.vw.Write(w.buf); err != nil {
		return 0, err
	}
	if _, err := w.kw.Write(k[:]); err != nil {
		return 0, err
	}
	w.n++
	return w.n - 1, nil
}

// flush writes the buffered entries: vectors before keys, so a key on disk
// always has its vector.
func (w *segWriter) flush() error {
	if err := w.vw.Flush(); err != nil {
		return err
	}
	if err := w.kw.Flush(); err != nil {
		return err
	}
	w.flushed = w.n
	return nil
}

func (w *segWriter) finish() error {
	err := w.flush()
	if err == nil {
		err = w.vf.Sync()
	}
	if err == nil {
		err = w.kf.Sync()
	}
	if cerr := w.kf.Close(); err == nil {
		err = cerr
	}
	return err // the .vecs stays open for reads; Close closes it
}

func (w *segWriter) abort() {
	w.kf.Close()
	w.vf.Close()
	os.Remove(w.kpath)
	os.Remove(w.vpath)
}
