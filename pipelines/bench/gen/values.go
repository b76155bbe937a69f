package main

import (
	"bytes"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// ---------------------------------------------------------------------------
// Small helpers

func splitmix(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func isUUID(s string) bool { return len(s) == 36 && isUUIDAt([]byte(s), 0) }

// fakeUUID is a UUID for a source file whose session has none.
func fakeUUID(key string) string {
	u := []byte("00000000-0000-0000-0000-000000000000")
	rw := rewriter{salt: xxhash.Sum64String(key)}
	rw.uuid(u)
	return string(u)
}

func allHex(s string) bool {
	for i := range len(s) {
		if !isHex[s[i]] {
			return false
		}
	}
	return true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isSlug(s string) bool {
	if !strings.Contains(s, "-") || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") {
		return false
	}
	for i := range len(s) {
		if c := s[i]; c != '-' && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// firstValue returns the string after the first occurrence of key (which
// ends with an opening quote), up to the closing quote; escapes are kept.
func firstValue(b []byte, key string) string {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return ""
	}
	return valueAt(b, i+len(key))
}

func lastValue(b []byte, key string) string {
	i := bytes.LastIndex(b, []byte(key))
	if i < 0 {
		return ""
	}
	return valueAt(b, i+len(key))
}

func valueAt(b []byte, i int) string {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return string(b[i:j])
		case '\n':
			return ""
		}
	}
	return ""
}

func allValues(b []byte, key string) []string {
	var out []string
	seen := map[string]bool{}
	for {
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			return out
		}
		b = b[i+len(key):]
		if v := valueAt(b, 0); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
}

func timestamps(b []byte, f func(time.Time)) {
	const key = `"timestamp":"`
	for {
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			return
		}
		b = b[i+len(key):]
		if t, err := time.Parse(time.RFC3339Nano, valueAt(b, 0)); err == nil {
			f(t)
		}
	}
}

func lastTimestamp(b []byte) time.Time {
	var last time.Time
	timestamps(b, func(t time.Time) {
		if t.After(last) {
			last = t
		}
	})
	return last
}

func firstTimestamp(b []byte) time.Time {
	var first time.Time
	timestamps(b, func(t time.Time) {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	})
	return first
}
