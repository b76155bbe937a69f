package cmdio

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the progress goroutine and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The rate counts from the start, not from the first update: 10 MB done
// at the first tick (200 ms) is at most 50 MB/s, never gigabytes.
func TestProgressRate(t *testing.T) {
	var out syncBuffer
	stop := progress(context.Background(), &out, "reading", func() int64 { return 10 << 20 })
	time.Sleep(500 * time.Millisecond)
	stop()
	rates := regexp.MustCompile(`\(([0-9.]+) (kB|MB|GB|TB)/s\)`).FindAllStringSubmatch(out.String(), -1)
	if len(rates) == 0 {
		t.Fatalf("no rate shown: %q", out.String())
	}
	for _, r := range rates {
		v, _ := strconv.ParseFloat(r[1], 64)
		if r[2] != "MB" && r[2] != "kB" || r[2] == "MB" && v > 60 {
			t.Errorf("rate %s %s/s for 10 MB over at least 200 ms", r[1], r[2])
		}
	}
}
