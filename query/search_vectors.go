package query

import (
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pos-lake/pos/internal/rabitq"
	"github.com/pos-lake/pos/load/searchindex"
)

// scanVectors scores the rows of the chunks files' vector sidecars against
// the query: the query's exact vector times each row's quantized one
// (scale × codes), within about 1% of the exact inner product. Rows outside
// the window, of another model, or not in keep (when the search has
// filters DuckDB answers) are passed over, and so are scores below minSim.
// It returns the best depth, and the files that have no sidecar, for
// DuckDB to score.
//
// A sidecar with sign codes (searchindex.SignCodes) is scanned in two steps
// per row: its code gives an estimate of the score and a bound on the
// estimate's error (internal/rabitq), and the exact score is computed only
// when the estimate plus its bound reaches the score the row must beat
// (minSim, or the worst of the best depth so far). Most rows are passed
// over on their code, an eighth of the bytes of their quantized vector.
func (d *DB) scanVectors(ctx context.Context, files []string, model string, q []float32, opt SearchOptions,
	keep map[int64]bool, depth int, minSim float64) ([]scored, []string, scanCounts, error) {
	since, until := msWindow(opt)
	windowed := !opt.Since.IsZero() || !opt.Until.IsZero()
	ix := d.searchIndex()
	bq := rabitq.NewRotation(len(q)).NewQuery(q)
	floor := newScoreFloor()
	workers := min(runtime.GOMAXPROCS(0), max(1, len(files)/4))
	jobs := make(chan string)
	type result struct {
		top     topScores
		missing []string
		n       scanCounts
		err     error
	}
	results := make([]result, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			var buf []byte
			var rows searchindex.SignRows
			for f := range jobs {
				if r.err != nil || ctx.Err() != nil {
					continue
				}
				if !d.exactScan {
					sc, err := ix.ReadSignCodes(f, windowed, keep != nil, buf)
					if err == nil {
						buf = sc.Buffer()
						r.err = scanSignCodes(sc, f, model, q, bq, since, until, windowed, keep, depth, minSim, floor, &rows, &r.top, &r.n)
						sc.Close()
						continue
					}
					if !errors.Is(err, searchindex.ErrNoSignCodes) {
						// None, or an older build's: DuckDB scores the file.
						r.missing = append(r.missing, f)
						continue
					}
				}
				v, err := ix.ReadVectors(f, true)
				if err != nil {
					r.missing = append(r.missing, f)
					continue
				}
				if v.Dim != len(q) {
					continue
				}
				m := slices.Index(v.Models, model)
				if m < 0 {
					continue
				}
				for i := range v.Rows {
					if int(v.Model[i]) != m || v.ScaleAt(i) == 0 {
						continue
					}
					if ts := v.TS[i]; ts < since || ts >= until {
						continue
					}
					if keep != nil && !keep[v.Keys[i]] {
						continue
					}
					r.n.Rows++
					r.n.Exact++
					s := float64(v.ScaleAt(i) * dotCodes(q, v.Codes[i*v.Dim:(i+1)*v.Dim]))
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
	var n scanCounts
	for _, r := range results {
		if r.err != nil {
			return nil, nil, n, r.err
		}
		n.Rows, n.Exact = n.Rows+r.n.Rows, n.Exact+r.n.Exact
		for _, s := range r.top {
			all.offer(s, depth)
		}
		missing = append(missing, r.missing...)
	}
	return all.sorted(), missing, n, ctx.Err()
}

// scanSignCodes scans a sidecar's rows by their sign codes (see
// scanVectors), offering the rows it scores exactly to top. The rows whose
// estimate cannot rule them out are read together, in one span of the
// sidecar, after their estimates.
func scanSignCodes(sc *searchindex.SignCodes, f, model string, q []float32, bq *rabitq.Query, since, until int64, windowed bool,
	keep map[int64]bool, depth int, minSim float64, floor *scoreFloor, rows *searchindex.SignRows, top *topScores, n *scanCounts) error {
	codeBytes := rabitq.CodeBytes(len(q))
	m := slices.Index(sc.Models, model)
	if sc.Dim != len(q) || m < 0 || sc.Version != rabitq.Version || sc.Stride != codeBytes+8 {
		return nil // another model's vectors, or codes of another version: none of this search's
	}
	le := binary.LittleEndian
	must := max(minSim, floor.get())
	if len(*top) >= depth {
		must = max(must, (*top)[0].score)
	}
	var cands []int
	for i := range sc.Rows {
		e := sc.Bits[i*sc.Stride : (i+1)*sc.Stride]
		mult := math.Float32frombits(le.Uint32(e[codeBytes:]))
		if mult == 0 || sc.Model != nil && int(sc.Model[i]) != m {
			continue // no vector, or another model's
		}
		if windowed {
			if ts := sc.TS[i]; ts < since || ts >= until {
				continue
			}
		}
		if keep != nil && !keep[sc.Keys[i]] {
			continue
		}
		n.Rows++
		bound := math.Float32frombits(le.Uint32(e[codeBytes+4:]))
		if float64(bq.Dot(e[:codeBytes], mult)+rabitq.Eps*bound)+1e-6 >= must {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	n.Exact += len(cands)
	if err := sc.ReadRows(rows, cands[0], cands[len(cands)-1]+1); err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	for _, i := range cands {
		key, scale, codes := rows.Row(i)
		if s := float64(scale * dotCodes(q, codes)); s >= minSim {
			top.offer(scored{key: key, file: f, score: s}, depth)
		}
	}
	if len(*top) >= depth {
		floor.raise((*top)[0].score)
	}
	return nil
}

// scoreFloor is the least score a row must reach to be among a scan's
// best, shared by its workers: each one's worst of its best depth, when
// it has that many, for the scan's best depth are at least as good.
type scoreFloor struct{ bits atomic.Uint64 }

func newScoreFloor() *scoreFloor {
	f := &scoreFloor{}
	f.bits.Store(math.Float64bits(math.Inf(-1)))
	return f
}

func (f *scoreFloor) get() float64 { return math.Float64frombits(f.bits.Load()) }

func (f *scoreFloor) raise(s float64) {
	for {
		old := f.bits.Load()
		if math.Float64frombits(old) >= s || f.bits.CompareAndSwap(old, math.Float64bits(s)) {
			return
		}
	}
}

// scanCounts are the rows a vector scan compared with the query, and of
// them the rows it scored exactly.
type scanCounts struct{ Rows, Exact int }

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
