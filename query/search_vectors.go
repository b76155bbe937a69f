package query

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
)

// scanVectors scores the rows of the chunks files' vector sidecars against
// the query: the query's exact vector times each row's quantized one
// (scale × codes), within about 1% of the exact inner product. Rows outside
// the window, of another model, or not in keep (when the search has
// filters DuckDB answers) are passed over, and so are scores below minSim.
// It returns the best depth, and
// the files that have no sidecar, for DuckDB to score.
func (d *DB) scanVectors(ctx context.Context, files []string, model string, q []float32, opt SearchOptions,
	keep map[int64]bool, depth int, minSim float64) ([]scored, []string, error) {
	since, until := msWindow(opt)
	ix := d.searchIndex()
	workers := min(runtime.GOMAXPROCS(0), max(1, len(files)/4))
	jobs := make(chan string)
	type result struct {
		top     topScores
		missing []string
		err     error
	}
	results := make([]result, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			for f := range jobs {
				if r.err != nil || ctx.Err() != nil {
					continue
				}
				v, err := ix.ReadVectors(f, true)
				if err != nil {
					// None, or an older build's: DuckDB scores the file.
					r.missing = append(r.missing, f)
					continue
				}
				if v.Dim != len(q) {
					continue
				}
				m := -1
				for i, name := range v.Models {
					if name == model {
						m = i
					}
				}
				if m < 0 {
					continue
				}
				for i := range v.Rows {
					if int(v.Model[i]) != m || v.Scale[i] == 0 {
						continue
					}
					if ts := v.TS[i]; ts < since || ts >= until {
						continue
					}
					if keep != nil && !keep[v.Keys[i]] {
						continue
					}
					s := float64(v.Scale[i] * dotCodes(q, v.Codes[i*v.Dim:(i+1)*v.Dim]))
					if s < minSim {
						continue
					}
					r.top.offer(scored{key: v.Keys[i], file: f, score: s}, depth)
				}
			}
		}()
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	var all topScores
	var missing []string
	for _, r := range results {
		if r.err != nil {
			return nil, nil, r.err
		}
		for _, s := range r.top {
			all.offer(s, depth)
		}
		missing = append(missing, r.missing...)
	}
	return all.sorted(), missing, ctx.Err()
}

// dotCodes is the inner product of a float vector and a quantized one.
func dotCodes(q []float32, c []int8) float32 {
	c = c[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	if n := len(q) &^ 15; dotCodesSIMD && n > 0 {
		s0, i = dotCodesAVX2(&q[0], &c[0], n), n
	}
	for ; i+3 < len(q); i += 4 {
		s0 += q[i] * float32(c[i])
		s1 += q[i+1] * float32(c[i+1])
		s2 += q[i+2] * float32(c[i+2])
		s3 += q[i+3] * float32(c[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(c[i])
	}
	return s0 + s1 + s2 + s3
}

// topScores keeps the best scores offered: a min-heap of at most depth.
type topScores []scored

func (t topScores) Len() int { return len(t) }
func (t topScores) Less(i, j int) bool {
	return t[i].score < t[j].score || t[i].score == t[j].score && t[i].key > t[j].key
}
func (t topScores) Swap(i, j int) { t[i], t[j] = t[j], t[i] }
func (t *topScores) Push(x any)   { *t = append(*t, x.(scored)) }
func (t *topScores) Pop() any {
	old := *t
	x := old[len(old)-1]
	*t = old[:len(old)-1]
	return x
}

func (t *topScores) offer(s scored, depth int) {
	if len(*t) < depth {
		heap.Push(t, s)
		return
	}
	if (*t)[0].score < s.score || (*t)[0].score == s.score && (*t)[0].key > s.key {
		(*t)[0] = s
		heap.Fix(t, 0)
	}
}

// sorted returns the scores best first (ties by key).
func (t topScores) sorted() []scored {
	out := make([]scored, 0, len(t))
	h := append(topScores(nil), t...)
	for h.Len() > 0 {
		out = append(out, heap.Pop(&h).(scored))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
