package embed

import (
	"unicode/utf8"
)

type wordLevel struct {
	vocab map[string]int
	unk   int
}

func (m *wordLevel) tokenize(w string, out []int) []int {
	if id, ok := m.vocab[w]; ok {
		return append(out, id)
	}
	if m.unk >= 0 {
		return append(out, m.unk)
	}
	return out
}

// wordPiece is greedy longest-match-first: a word that cannot be covered
// by the vocabulary is one unknown token.
type wordPiece struct {
	vocab    map[string]int
	unk      int
	prefix   string
	maxChars int
}

func (m *wordPiece) tokenize(w string, out []int) []int {
	n := len(out)
	unk := func() []int {
		out = out[:n]
		if m.unk >= 0 {
			return append(out, m.unk)
		}
		return out
	}
	if utf8.RuneCountInString(w) > m.maxChars {
		return unk()
	}
	for start := 0; start < len(w); {
		end := len(w)
		found := -1
		for end > start {
			sub := w[start:end]
			if start > 0 {
				sub = m.prefix + sub
			}
			if id, ok := m.vocab[sub]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(w[start:end])
			end -= size
		}
		if found < 0 {
			return unk()
		}
		out = append(out, found)
		start = end
	}
	return out
}

// unigram segments a word into the pieces whose scores (log
// probabilities) sum highest (Viterbi), as tokenizers' Unigram does; a
// character no piece covers is the unknown token (scored as the lowest
// piece less 10), or its bytes' <0xNN> pieces with byte_fallback.
type unigram struct {
	trie         map[uint64]int32 // (node << 8 | byte) -> child node
	pieceID      map[int32]int    // node -> id of the piece ending there
	scores       []float64        // by id
	nodes        int32
	unk          int
	minScore     float64
	byteFallback bool
	bytes        []int
}

func (u *unigram) add(tok string, id int, score float64) {
	for len(u.scores) <= id {
		u.scores = append(u.scores, 0)
	}
	u.scores[id] = score
	if tok == "" {
		return
	}
	var node int32
	for i := 0; i < len(tok); i++ {
		k := uint64(node)<<8 | uint64(tok[i])
		next, ok := u.trie[k]
		if !ok {
			u.nodes++
			next = u.nodes
			u.trie[k] = next
		}
		node = next
	}
	if _, dup := u.pieceID[node]; !dup {
		u.pieceID[node] = id
	}
}

const unkPenalty = 10.0

func (u *unigram) tokenize(w string, out []int) []int {
	n := len(w)
	type best struct {
		score float64
		start int // where the piece ending here starts; -1: unreached
		id    int // its id; -1: unknown
	}
	lat := make([]best, n+1)
	for i := 1; i <= n; i++ {
		lat[i].start = -1
	}
	unkScore := u.minScore - unkPenalty
	for i := 0; i < n; i++ {
		if lat[i].start < 0 && i > 0 {
			continue
		}
		if !utf8.RuneStart(w[i]) {
			continue
		}
		_, size := utf8.DecodeRuneInString(w[i:])
		single := false
		var node int32
		for j := i; j < n; j++ {
			next, ok := u.trie[uint64(node)<<8|uint64(w[j])]
			if !ok {
				break
			}
			node = next
			if id, ok := u.pieceID[node]; ok && (j+1 == n || utf8.RuneStart(w[j+1])) {
				s := lat[i].score + u.scores[id]
				if j+1 == i+size {
					single = true
				}
				if e := &lat[j+1]; e.start < 0 || s > e.score {
					*e = best{score: s, start: i, id: id}
				}
			}
		}
		if !single {
			s := lat[i].score + unkScore
			if e := &lat[i+size]; e.start < 0 || s > e.score {
				*e = best{score: s, start: i, id: -1}
			}
		}
	}
	var rev []best
	var ends []int
	for i := n; i > 0; i = lat[i].start {
		rev = append(rev, lat[i])
		ends = append(ends, i)
	}
	var lastUnk bool
	for k := len(rev) - 1; k >= 0; k-- {
		b := rev[k]
		if b.id >= 0 {
			out = append(out, b.id)
			lastUnk = false
			continue
		}
		if u.byteFallback && u.bytes != nil {
			ok := true
			var ids []int
			for _, c := range []byte(w[b.start:ends[k]]) {
				if u.bytes[c] < 0 {
					ok = false
					break
				}
				ids = append(ids, u.bytes[c])
			}
			if ok {
				out = append(out, ids...)
				lastUnk = false
				continue
			}
		}
		// Consecutive unknown characters are one unknown token (fuse_unk).
		if u.unk >= 0 && !lastUnk {
			out = append(out, u.unk)
		}
		lastUnk = true
	}
	return out
}
