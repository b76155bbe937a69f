package query

import (
	"strings"
	"unicode"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/transform/embed"
)

// Near duplicates. The same text comes back in many places: a prompt
// repeated in session after session, the same failing build in every
// exchange that ran it, a summary copied into a resumed session. Listed
// one by one they fill the first results with one thing; folded, the
// first k results are k different things, and the hit kept says how many
// others it stands for.

// maxSimilar bounds the units a hit lists as folded into it.
const maxSimilar = 10

// nearDuplicate is the least resemblance (Jaccard similarity of the word
// 3-shingles) at which two chunks count as the same text: the same output
// with another duration, path or line number, a prompt with a word added.
const nearDuplicate = 0.8

// shingleWords is how many words make a shingle.
const shingleWords = 3

// collapse returns the first k of the described hits (in rank order) that
// are neither an exchange already listed nor a near duplicate of a hit
// already listed; a near duplicate, even past the first k, is folded into
// the hit it repeats (Duplicates, Similar). Text is compared within what
// was said (prompts, replies, summaries) and within what tools did, not
// across: a reply that quotes an error is not the error.
func collapse(hits []SearchHit, k int) []SearchHit {
	var out []SearchHit
	var prints []fingerprint
	seen := map[string]bool{}
	for _, h := range hits {
		if h.ExchangeID != "" && seen[h.ExchangeID] {
			continue
		}
		fp := fingerprintOf(&h)
		folded := false
		for i := range prints {
			if prints[i].same(&fp) {
				o := &out[i]
				o.Duplicates++
				if len(o.Similar) < maxSimilar {
					o.Similar = append(o.Similar, HitRef{Platform: h.Platform, SessionID: h.SessionID, ExchangeID: h.ExchangeID,
						ChunkID: h.ChunkID, ContentType: h.ContentType, TS: h.TS})
				}
				folded = true
				break
			}
		}
		if folded || len(out) == k {
			continue
		}
		if h.ExchangeID != "" {
			seen[h.ExchangeID] = true
		}
		h.Rank = len(out) + 1
		out = append(out, h)
		prints = append(prints, fp)
	}
	return out
}

// fingerprint is what near duplicates are told by: a chunk's words
// normalized (lowercase, every run of digits one 0) and their shingles.
type fingerprint struct {
	tool     bool
	norm     string
	shingles map[uint64]struct{}
}

func fingerprintOf(h *SearchHit) fingerprint {
	text := h.text
	if text == "" {
		text = h.Snippet
	}
	words := normWords(text)
	fp := fingerprint{tool: embed.IsToolType(h.ContentType), norm: strings.Join(words, " ")}
	if len(words) >= shingleWords {
		fp.shingles = make(map[uint64]struct{}, len(words))
		for i := 0; i+shingleWords <= len(words); i++ {
			fp.shingles[xxhash.Sum64String(strings.Join(words[i:i+shingleWords], " "))] = struct{}{}
		}
	}
	return fp
}

// same reports whether two chunks are near duplicates: of the same side
// (said or done), with the same normalized words or shingles that mostly
// agree.
func (a *fingerprint) same(b *fingerprint) bool {
	if a.tool != b.tool || a.norm == "" || b.norm == "" {
		return false
	}
	if a.norm == b.norm {
		return true
	}
	if len(a.shingles) == 0 || len(b.shingles) == 0 {
		return false
	}
	small, large := a.shingles, b.shingles
	if len(small) > len(large) {
		small, large = large, small
	}
	// Jaccard ≥ t needs |small| ≥ t·|large|.
	if float64(len(small)) < nearDuplicate*float64(len(large)) {
		return false
	}
	common := 0
	for s := range small {
		if _, ok := large[s]; ok {
			common++
		}
	}
	return float64(common) >= nearDuplicate*float64(len(small)+len(large)-common)
}

// normWords splits text into lowercase words of letters and digits, each
// run of digits written 0: two runs of a build that differ only by their
// timings, line numbers or ids read the same.
func normWords(text string) []string {
	var words []string
	var b strings.Builder
	digits := false
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
		digits = false
	}
	for _, r := range text {
		switch {
		case unicode.IsDigit(r):
			if !digits {
				b.WriteByte('0')
				digits = true
			}
		case unicode.IsLetter(r):
			b.WriteRune(unicode.ToLower(r))
			digits = false
		default:
			flush()
		}
	}
	flush()
	return words
}
