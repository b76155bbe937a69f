// Package peakmem measures the most memory a piece of code needs, for the
// benchmarks that show pos's memory bounds (a 50 MB record through a
// stage).
package peakmem

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// heapMetric is the memory of heap objects, live or not yet swept: what a
// stage holds, without the garbage collector's slack.
const heapMetric = "/memory/classes/heap/objects:bytes"

// Start collects garbage, then samples the heap every millisecond until
// the returned function is called, which returns the largest sample less
// the heap at the start (what the code measured added), in bytes.
func Start() (stop func() uint64) {
	runtime.GC()
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := []metrics.Sample{{Name: heapMetric}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value; v.Kind() == metrics.KindUint64 {
			mu.Lock()
			peak = max(peak, v.Uint64())
			mu.Unlock()
		}
	}
	read()
	base := peak
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		read()
		mu.Lock()
		defer mu.Unlock()
		return peak - base
	}
}
