package cmdio

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var sink [][]byte

// watchAllocs calls its function once the process has allocated the bytes
// asked for, looking after collections, and not before.
func TestWatchAllocs(t *testing.T) {
	called := make(chan uint64, 2)
	want := allocated() + 32<<20
	watchAllocs(want, func() { called <- allocated() })
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	select {
	case n := <-called:
		t.Fatalf("called at %d bytes, before %d", n, want)
	default:
	}
	for i := 0; i < 64; i++ {
		sink = append(sink[:0], make([]byte, 1<<20))
	}
	deadline := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case n := <-called:
			if n < want {
				t.Fatalf("called at %d bytes, before %d", n, want)
			}
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
			if len(called) != 0 {
				t.Fatal("called more than once")
			}
			return
		case <-deadline:
			t.Fatal("not called after 64 MB and collections")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// gcPercent reads the collector's target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// With FirstGCPercent the target is that until a collection, then the
// binary's own.
func TestFirstGCPercent(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())
	defer func(p int) { FirstGCPercent = p }(FirstGCPercent)
	FirstGCPercent = 400
	setGC(70)
	if p := gcPercent(); p != 400 {
		t.Fatalf("target before the first collection %d, want 400", p)
	}
	deadline := time.After(5 * time.Second)
	for gcPercent() != 70 {
		runtime.GC()
		select {
		case <-deadline:
			t.Fatalf("target after collections %d, want 70", gcPercent())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
