package main

import (
	"bytes"
	"time"

	"github.com/cespare/xxhash/v2"
)

// ---------------------------------------------------------------------------
// The byte-level rewriter

// rewriter replaces ids and shifts timestamps in place. The replacement of
// an id is a hash of the id and salt, so the same id becomes the same new
// id wherever it occurs under one salt (one replica).
type rewriter struct {
	src      *source
	salt     uint64
	shift    time.Duration
	keep     map[string]bool   // UUIDs left alone
	override map[string]string // UUIDs replaced by given ones
}

var isWord, isHex [256]bool

func init() {
	for c := '0'; c <= '9'; c++ {
		isWord[c], isHex[c] = true, true
	}
	for c := 'a'; c <= 'z'; c++ {
		isWord[c] = true
		isWord[c-'a'+'A'] = true
	}
	for c := 'a'; c <= 'f'; c++ {
		isHex[c] = true
	}
}

// rewrite scans b for runs of letters and digits and looks at what follows
// each run: "-" may end the first group of a UUID or the year of a
// timestamp, "_" may end the prefix of a toolu_/msg_/req_ id; the run itself
// may be a known subagent id or the first word of a known slug.
func (rw *rewriter) rewrite(b []byte) {
	n := len(b)
	for i := 0; i < n; {
		if !isWord[b[i]] {
			i++
			continue
		}
		j := i + 1
		for j < n && isWord[b[j]] {
			j++
		}
		if j < n {
			switch b[j] {
			case '-':
				if j-i >= 8 && isUUIDAt(b, j-8) {
					rw.uuid(b[j-8 : j+28])
					i = j + 28
					continue
				}
				if j-i >= 4 && rw.shift != 0 && isTimestampAt(b, j-4) {
					rw.timestamp(b[j-4 : j+9])
					i = j + 9
					continue
				}
			case '_':
				if k := idSuffixEnd(b, i, j); k > 0 {
					rw.fill(b[j+3:k], b[j+1:k], alnum, 0)
					i = k
					continue
				}
			}
		}
		if l := j - i; l < 64 && rw.src != nil && rw.src.lenMask&(1<<uint(l)) != 0 {
			if k, ok := rw.src.tokens[string(b[i:j])]; ok {
				if k&tokSlug != 0 {
					if e := rw.slug(b, i, j); e > 0 {
						i = e
						continue
					}
				}
				if k&tokAgent != 0 {
					rw.agentID(b[i:j])
				}
			}
		}
		i = j
	}
}

const (
	hexDigits = "0123456789abcdef"
	alnum     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	digits    = "0123456789"
)

// fill overwrites dst with characters from alphabet drawn from a stream
// seeded by the hash of key.
func (rw *rewriter) fill(dst, key []byte, alphabet string, tag uint64) {
	st := xxhash.Sum64(key) ^ rw.salt ^ tag
	for i := range dst {
		dst[i] = alphabet[splitmix(&st)%uint64(len(alphabet))]
	}
}

func (rw *rewriter) uuid(u []byte) {
	if rw.keep[string(u)] {
		return
	}
	if o, ok := rw.override[string(u)]; ok {
		copy(u, o)
		return
	}
	st := xxhash.Sum64(u) ^ rw.salt
	var x uint64
	nibbles := 0
	for i := range u {
		if u[i] == '-' {
			continue
		}
		if nibbles%16 == 0 {
			x = splitmix(&st)
		}
		u[i] = hexDigits[x&15]
		x >>= 4
		nibbles++
	}
	u[14] = '4'                       // version 4
	u[19] = "89ab"[xxhash.Sum64(u)&3] // RFC 4122 variant
}

// agentID replaces a subagent id, keeping its first character ('a' in
// v2.1 ids) and, when it is all digits, keeping it all digits so that it
// stays valid wherever it occurs.
func (rw *rewriter) agentID(t []byte) {
	alphabet := hexDigits
	if allDigits(t) {
		alphabet = digits
	}
	rw.fill(t[1:], t, alphabet, 0xa9e4)
}

// slug replaces a whole slug starting at b[i:j] (its first word) by
// pronounceable words of the same lengths; it returns the end, or 0 if no
// known slug starts there.
func (rw *rewriter) slug(b []byte, i, j int) int {
	for _, sl := range rw.src.slugs[string(b[i:j])] {
		e := i + len(sl)
		if e > len(b) || string(b[i:e]) != sl || (e < len(b) && isWord[b[e]]) {
			continue
		}
		st := xxhash.Sum64String(sl) ^ rw.salt ^ 0x5109
		vowel := splitmix(&st)&1 == 0
		for k := i; k < e; k++ {
			if b[k] == '-' {
				vowel = splitmix(&st)&1 == 0
				continue
			}
			x := splitmix(&st)
			if vowel {
				b[k] = "aeiou"[x%5]
			} else {
				b[k] = "bcdfghjklmnprstvwz"[x%18]
			}
			vowel = !vowel
		}
		return e
	}
	return 0
}

// timestamp shifts "YYYY-MM-DDTHH" by whole hours: minutes, seconds and
// fractions stay as they are.
func (rw *rewriter) timestamp(t []byte) {
	num := func(s []byte) int {
		v := 0
		for _, c := range s {
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h := num(t[0:4]), num(t[5:7]), num(t[8:10]), num(t[11:13])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 {
		return
	}
	tt := time.Date(y, time.Month(mo), d, h, 0, 0, 0, time.UTC).Add(rw.shift)
	if tt.Year() < 1000 || tt.Year() > 9999 {
		return
	}
	put := func(dst []byte, v int) {
		for k := len(dst) - 1; k >= 0; k-- {
			dst[k] = byte('0' + v%10)
			v /= 10
		}
	}
	put(t[0:4], tt.Year())
	put(t[5:7], int(tt.Month()))
	put(t[8:10], tt.Day())
	put(t[11:13], tt.Hour())
}

// isUUIDAt: b[p:] starts with a lowercase 8-4-4-4-12 UUID not followed by
// another letter or digit.
func isUUIDAt(b []byte, p int) bool {
	if p+36 > len(b) || (p+36 < len(b) && isWord[b[p+36]]) {
		return false
	}
	for k := range 36 {
		c := b[p+k]
		if k == 8 || k == 13 || k == 18 || k == 23 {
			if c != '-' {
				return false
			}
		} else if !isHex[c] {
			return false
		}
	}
	return true
}

// isTimestampAt: b[p:] starts with "dddd-dd-ddTdd:dd:dd", with a space
// instead of T (Aider's local times) or dashes instead of colons (Codex's
// and Gemini CLI's file names) allowed.
func isTimestampAt(b []byte, p int) bool {
	const pat = "dddd-dd-ddTdd:dd:dd"
	if p+len(pat) > len(b) {
		return false
	}
	for k := range len(pat) {
		c := b[p+k]
		switch {
		case pat[k] == 'd':
			if c < '0' || c > '9' {
				return false
			}
		case k == 10:
			if c != 'T' && c != ' ' {
				return false
			}
		case k == 16:
			if c != b[p+13] {
				return false
			}
		case k == 13:
			if c != ':' && c != '-' {
				return false
			}
		case c != pat[k]:
			return false
		}
	}
	return true
}

// idSuffixEnd: the run b[i:j] ends in toolu, msg or req, b[j] is '_' and
// a run of 16+ letters and digits follows; it returns the end of that run.
func idSuffixEnd(b []byte, i, j int) int {
	run := b[i:j]
	if !bytes.HasSuffix(run, []byte("toolu")) && !bytes.HasSuffix(run, []byte("msg")) && !bytes.HasSuffix(run, []byte("req")) {
		return 0
	}
	k := j + 1
	for k < len(b) && isWord[b[k]] {
		k++
	}
	if k-(j+1) < 16 {
		return 0
	}
	return k
}
