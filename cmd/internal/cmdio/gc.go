package cmdio

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The collector starts at gcStartPercent and moves to GCPercent once the
// process has allocated gcRampBytes. A short run (a hook's sync of a few
// MB) keeps little and ends before a higher target pays off: what it would
// save in collections it spends growing the heap, each new page a fault
// (~10 µs on a virtual machine). A long run, where the heap's size is paid
// once, gets the higher target's fewer collections. On a 17 MB incremental
// stream pos-normalize's peak RSS went 66 -> 38 MB and its time 0.21 ->
// 0.13 s; at 1 GB the ramp leaves both as they were.
const (
	gcStartPercent = 100
	gcRampBytes    = 256 << 20
)

// FirstGCPercent, when set, is the collector's target until its first
// collection, for a command whose usual run ends within tens of
// milliseconds: at 400 the heap reaches 16 MB before that collection
// instead of 4 MB, so a warm pos-query stats ends without one (a
// collection there cost ~3 ms of 50: waking the mark workers, sweeping,
// faulting in their pages). A run that gets that far collects and goes on
// with the usual targets.
var FirstGCPercent int

// setGC sets the collector's target to percent, after FirstGCPercent's
// first collection when set, and through the ramp when percent is above
// the start.
func setGC(percent int) {
	if FirstGCPercent > 0 {
		debug.SetGCPercent(FirstGCPercent)
		watchAllocs(0, func() { setTarget(percent) })
		return
	}
	setTarget(percent)
}

func setTarget(percent int) {
	if percent <= gcStartPercent {
		debug.SetGCPercent(percent)
		return
	}
	debug.SetGCPercent(gcStartPercent)
	watchAllocs(gcRampBytes, func() { debug.SetGCPercent(percent) })
}

// gcSentinel is an object whose only use is to be collected: its cleanup
// runs after each collection that finds it unreachable. Big enough not to
// share a block with other small objects (which would delay its cleanup).
type gcSentinel struct{ _ [64]byte }

// watchAllocs calls f once, after the first collection that ends with at
// least n bytes allocated since the process started. It looks after each
// collection and costs nothing in between.
func watchAllocs(n uint64, f func()) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	var arm func()
	check := func(struct{}) {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() >= n {
			f()
			return
		}
		arm()
	}
	arm = func() { runtime.AddCleanup(new(gcSentinel), check, struct{}{}) }
	arm()
}
