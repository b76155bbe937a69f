package embed

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pos-lake/pos/internal/vectest"
)

func TestCacheRoundTrip(t *testing.T) {
	root := t.TempDir()
	c, err := OpenCache(root, "nomic-embed-text", 0)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHash(8)
	if _, ok := c.Get(KeyOf("a")); ok {
		t.Fatal("empty cache hit")
	}
	for _, s := range []string{"a", "b", "c"} {
		if err := c.Put(KeyOf(s), h.Vector(s+" word")); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := c.Get(KeyOf("b")); !ok || vectest.Dot(v, h.Vector("b word")) < 0.9999 {
		t.Fatalf("own segment: %v %v", v, ok)
	}
	c.Put(KeyOf("odd"), make([]float32, 3)) // another dimension: not kept
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err = OpenCache(root, "nomic-embed-text", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Len() != 3 || c.dim != 8 {
		t.Fatalf("reopened: %d entries, dim %d", c.Len(), c.dim)
	}
	for _, s := range []string{"a", "b", "c"} {
		if v, ok := c.Get(KeyOf(s)); !ok || vectest.Dot(v, h.Vector(s+" word")) < 0.9999 {
			t.Errorf("%s: %v", s, ok)
		}
	}
	// Another model or dimension is another cache.
	o, _ := OpenCache(root, "nomic-embed-text", 16)
	defer o.Close()
	if o.Len() != 0 {
		t.Error("dimensions share a cache")
	}
	if got := cacheName("a/b:c", 0); got == "a/b:c@default" || filepath.Base(got) != got {
		t.Errorf("unsafe name %q", got)
	}
}

func TestCacheTornTail(t *testing.T) {
	root := t.TempDir()
	c, _ := OpenCache(root, "m", 4)
	for _, s := range []string{"a", "b"} {
		c.Put(KeyOf(s), []float32{1, 2, 3, 4})
	}
	c.Close()
	// A killed run: a key without its vector, half a vector.
	keys, _ := filepath.Glob(filepath.Join(root, "m@4", "*.keys"))
	f, _ := os.OpenFile(keys[0], os.O_APPEND|os.O_WRONLY, 0)
	k := KeyOf("c")
	f.Write(k[:])
	f.Close()
	vecs, _ := filepath.Glob(filepath.Join(root, "m@4", "*.vecs"))
	f, _ = os.OpenFile(vecs[0], os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{1, 2, 3})
	f.Close()
	c, err := OpenCache(root, "m", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.Get(KeyOf("c")); ok || c.Len() != 2 {
		t.Errorf("torn entry read: len %d", c.Len())
	}
}

func TestCacheMerge(t *testing.T) {
	root := t.TempDir()
	for i := 0; i <= maxSegments+1; i++ {
		c, err := OpenCache(root, "m", 2)
		if err != nil {
			t.Fatal(err)
		}
		c.Put(KeyOf(string(rune('a'+i))), []float32{float32(i), 1})
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	segs, _ := filepath.Glob(filepath.Join(root, "m@2", "seg-*.keys"))
	if len(segs) > maxSegments {
		t.Errorf("%d segments after merging", len(segs))
	}
	c, _ := OpenCache(root, "m", 2)
	defer c.Close()
	if c.Len() != maxSegments+2 {
		t.Fatalf("%d entries", c.Len())
	}
	for i := 0; i <= maxSegments+1; i++ {
		if v, ok := c.Get(KeyOf(string(rune('a' + i)))); !ok || v[0] != float32(i) {
			t.Errorf("entry %d: %v", i, v)
		}
	}
}

func TestCacheConcurrent(t *testing.T) {
	c, _ := OpenCache(t.TempDir(), "m", 2)
	defer c.Close()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := KeyOf(string(rune(i)))
				c.Put(k, []float32{float32(i), 0})
				if v, ok := c.Get(k); !ok || v[0] != float32(i) {
					t.Errorf("get %d: %v", i, v)
					return
				}
			}
		}()
	}
	wg.Wait()
}
