package embed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pos-lake/pos/transform/embed/lexical"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// termVectors counts the vocabulary's co-occurrences, weighs them by PPMI
// and returns the terms' vectors (row-major, Dim a term), each of unit
// length.
func (t *Trainer) termVectors(vocab []int32) ([]float64, error) {
	o := t.opt
	n := len(vocab)
	index := make([]int32, len(t.names))
	for i := range index {
		index[i] = -1
	}
	for i, id := range vocab {
		index[id] = int32(i)
	}
	// Co-occurrence counts, by the integer weight Window+1-distance (the
	// terms of one word count Window+1 together), so that the sums do
	// not depend on the order they are made in.
	co := make([]map[int32]int64, n)
	for i := range co {
		co[i] = map[int32]int64{}
	}
	var window [][]int32 // the last Window words' vocabulary terms
	var cur []int32
	add := func(a, b int32, w int64) {
		co[a][b] += w
		co[b][a] += w
	}
	for _, x := range t.seqs {
		switch {
		case x >= 0:
			if j := index[x]; j >= 0 {
				cur = append(cur, j)
			}
		case x == -1:
			if len(cur) == 0 {
				continue
			}
			for a := range cur {
				for b := a + 1; b < len(cur); b++ {
					add(cur[a], cur[b], int64(o.Window+1))
				}
			}
			for d, prev := range window {
				w := int64(o.Window + 1 - (len(window) - d))
				for _, a := range prev {
					for _, b := range cur {
						add(a, b, w)
					}
				}
			}
			if len(window) == o.Window {
				window = append(window[:0], window[1:]...)
			}
			window = append(window, cur)
			cur = nil
		case x == -2:
			window, cur = window[:0], nil
		}
	}
	// PPMI: log(P(a,b) / (P(a) P₀.₇₅(b))), kept where positive.
	rowSum := make([]float64, n)
	ctx := make([]float64, n)
	var total, ctxTotal float64
	for a, m := range co {
		for _, c := range m {
			rowSum[a] += float64(c)
		}
		total += rowSum[a]
	}
	for a := range ctx {
		ctx[a] = math.Pow(rowSum[a], 0.75)
		ctxTotal += ctx[a]
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: no two terms occur together", ErrNoTrainingText)
	}
	m := &csr{n: n, start: make([]int, n+1)}
	for a := range co {
		cols := make([]int32, 0, len(co[a]))
		for b := range co[a] {
			cols = append(cols, b)
		}
		slices.Sort(cols)
		for _, b := range cols {
			pmi := math.Log(float64(co[a][b]) * ctxTotal / (rowSum[a] * ctx[b]))
			if pmi > 0 {
				m.col = append(m.col, b)
				m.val = append(m.val, pmi)
			}
		}
		m.start[a+1] = len(m.col)
		co[a] = nil
	}
	u, s := randomizedSVD(m, o.Dim, rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)))
	out := make([]float64, n*o.Dim)
	for i := range n {
		v := out[i*o.Dim : (i+1)*o.Dim]
		for j := range o.Dim {
			v[j] = u.At(i, j) * math.Pow(s[j], o.Power)
		}
		unitRow(v)
	}
	if !o.NoCenter {
		weights := make([]float64, n)
		for i, id := range vocab {
			weights[i] = float64(t.counts[id])
		}
		center(out, o.Dim, weights, max(o.RemovePCs, 0))
	}
	return out, nil
}

// unitRow scales v to length 1 (a zero vector stays zero).
func unitRow(v []float64) {
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	if norm > 0 {
		inv := 1 / math.Sqrt(norm)
		for j := range v {
			v[j] *= inv
		}
	}
}

// center removes from the rows of vecs (row-major, dim a row) their mean,
// each row weighing as much as weights says (a term as often as it
// occurs), then the pcs leading principal components of the rows so
// weighed, and scales each row back to length 1. What every text shares
// — the mean, and the few directions common words all lean to — otherwise
// makes any two texts' vectors alike, and buries what tells them apart.
func center(vecs []float64, dim int, weights []float64, pcs int) {
	n := len(weights)
	mean := make([]float64, dim)
	var total float64
	for i, w := range weights {
		for j, x := range vecs[i*dim : (i+1)*dim] {
			mean[j] += w * x
		}
		total += w
	}
	if total == 0 {
		return
	}
	for j := range mean {
		mean[j] /= total
	}
	for i := range n {
		v := vecs[i*dim : (i+1)*dim]
		for j := range v {
			v[j] -= mean[j]
		}
	}
	if pcs > 0 {
		a := mat.NewDense(n, dim, nil)
		for i, w := range weights {
			sw := math.Sqrt(w / total)
			row := a.RawRowView(i)
			for j, x := range vecs[i*dim : (i+1)*dim] {
				row[j] = sw * x
			}
		}
		var svd mat.SVD
		if svd.Factorize(a, mat.SVDThinV) {
			var v mat.Dense
			svd.VTo(&v)
			for i := range n {
				row := vecs[i*dim : (i+1)*dim]
				for c := range pcs {
					var dot float64
					for j := range row {
						dot += row[j] * v.At(j, c)
					}
					for j := range row {
						row[j] -= dot * v.At(j, c)
					}
				}
			}
		}
	}
	for i := range n {
		unitRow(vecs[i*dim : (i+1)*dim])
	}
}

// csr is a square sparse matrix in compressed rows.
type csr struct {
	n     int
	start []int
	col   []int32
	val   []float64
}

// mul returns M·X.
func (m *csr) mul(x *mat.Dense) *mat.Dense {
	_, k := x.Dims()
	y := mat.NewDense(m.n, k, nil)
	for i := range m.n {
		row := y.RawRowView(i)
		for p := m.start[i]; p < m.start[i+1]; p++ {
			v, xr := m.val[p], x.RawRowView(int(m.col[p]))
			for j := range row {
				row[j] += v * xr[j]
			}
		}
	}
	return y
}

// mulT returns Mᵀ·X.
func (m *csr) mulT(x *mat.Dense) *mat.Dense {
	_, k := x.Dims()
	y := mat.NewDense(m.n, k, nil)
	for i := range m.n {
		xr := x.RawRowView(i)
		for p := m.start[i]; p < m.start[i+1]; p++ {
			v, row := m.val[p], y.RawRowView(int(m.col[p]))
			for j := range row {
				row[j] += v * xr[j]
			}
		}
	}
	return y
}

// randomizedSVD returns the k leading left singular vectors of m (as
// columns) and their singular values, by Halko, Martinsson and Tropp's
// randomized range finder with power iterations.
func randomizedSVD(m *csr, k int, rng *rand.Rand) (*mat.Dense, []float64) {
	l := min(k+10, m.n)
	omega := mat.NewDense(m.n, l, nil)
	for i := range m.n {
		row := omega.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	q := orthonormal(m.mul(omega))
	for range 4 {
		q = orthonormal(m.mul(orthonormal(m.mulT(q))))
	}
	// B = Qᵀ M, l × n; its SVD, through Bᵀ = M ᵀQ (n × l).
	bt := m.mulT(q)
	var svd mat.SVD
	if !svd.Factorize(bt, mat.SVDThin) {
		return mat.NewDense(m.n, k, nil), make([]float64, k)
	}
	var v mat.Dense // Bᵀ = V Σ Wᵀ, so B = W Σ Vᵀ and M ≈ (Q W) Σ Vᵀ
	svd.VTo(&v)
	var u mat.Dense
	u.Mul(q, &v)
	s := svd.Values(nil)
	return mat.DenseCopyOf(u.Slice(0, m.n, 0, k)), s[:k]
}

// orthonormal returns an orthonormal basis of a's columns: the thin Q of
// its QR factorization (LAPACK's geqrf and orgqr), made in place.
func orthonormal(a *mat.Dense) *mat.Dense {
	g := a.RawMatrix()
	tau := make([]float64, min(g.Rows, g.Cols))
	work := make([]float64, 1)
	lapack64.Geqrf(g, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(g, tau, work, len(work))
	lapack64.Orgqr(g, tau, work[:1], -1)
	work = make([]float64, int(work[0]))
	lapack64.Orgqr(g, tau, work, len(work))
	return a
}

// rows builds the model's tokens (the unknown token, the words, then
// each word as a continuation), each token's row (mapping) and the rows.
func (t *Trainer) rows(words []string, termVec map[string][]float64) (tokens []string, mapping []int32, rows [][]float32) {
	o := t.opt
	sem, hsh := float32(math.Sqrt(o.SemanticShare)), float32(math.Sqrt(1-o.SemanticShare))
	var h *Hash
	if o.HashDim > 0 {
		h = NewHash(o.HashDim)
	}
	rows = append(rows, make([]float32, o.Dim+o.HashDim)) // unknown and stopwords
	tokens, mapping = append(tokens, learnedUnk), append(mapping, 0)
	var total float64
	for _, c := range t.words {
		total += float64(c)
	}
	for _, w := range words {
		row := make([]float32, o.Dim+o.HashDim)
		// The word's weight: a/(a+p) under SIF, 1 without.
		weight := float32(1)
		if o.SIF > 0 && total > 0 {
			weight = float32(o.SIF / (o.SIF + float64(t.words[w])/total))
		}
		var n int
		acc := make([]float64, o.Dim)
		for _, term := range lexical.Terms(w) {
			if v, ok := termVec[term]; ok {
				for j, x := range v {
					acc[j] += x
				}
				n++
			}
		}
		if n > 0 {
			var norm float64
			for _, x := range acc {
				norm += x * x
			}
			if norm > 0 {
				inv := 1 / math.Sqrt(norm)
				for j, x := range acc {
					row[j] = weight * sem * float32(x*inv)
				}
			}
		}
		if h != nil {
			for j, x := range h.Vector(w) {
				row[o.Dim+j] = weight * hsh * x
			}
		}
		r := int32(0)
		if !allZero(row) {
			r = int32(len(rows))
			rows = append(rows, row)
		}
		tokens, mapping = append(tokens, w), append(mapping, r)
	}
	for i, w := range words {
		tokens, mapping = append(tokens, learnedPrefix+w), append(mapping, mapping[1+i])
	}
	return tokens, mapping, rows
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
