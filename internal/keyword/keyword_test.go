package keyword

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestKeywords compares the prefilter with a plain search.
func TestKeywords(t *testing.T) {
	words := []string{"ey", "sk", "token", "api", "api-", "-----begin", "://", "q~", "password"}
	m, ids := New(words)
	r := rand.New(rand.NewPCG(1, 2))
	alpha := "aeiostkpny-:/~QEYSKTOKENAPI PASSWORD"
	for range 200 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		var got, want []string
		Each(m, b, func(pos, id int) { got = append(got, fmt.Sprint(pos, m.Words()[id])) })
		lb := strings.ToLower(string(b))
		for i := range lb {
			for _, w := range words {
				if strings.HasPrefix(lb[i:], w) {
					want = append(want, fmt.Sprint(i, w))
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q:\n got %v\nwant %v (%v)", b, got, want, ids)
		}
	}
}

// TestEachString finds the same occurrences in a string as in its bytes.
func TestEachString(t *testing.T) {
	m, _ := New([]string{"let's", "let’s", "decided", "do not"})
	text := "We DECIDED: Let’s ship; LET'S go. Do Not wait, do not."
	var b, s []string
	Each(m, []byte(text), func(pos, id int) { b = append(b, fmt.Sprint(pos, m.Words()[id])) })
	Each(m, text, func(pos, id int) { s = append(s, fmt.Sprint(pos, m.Words()[id])) })
	at := func(sub string, from int) int { return from + strings.Index(text[from:], sub) }
	want := fmt.Sprint([]string{
		fmt.Sprint(at("DECIDED", 0), "decided"), fmt.Sprint(at("Let’s", 0), "let’s"), fmt.Sprint(at("LET'S", 0), "let's"),
		fmt.Sprint(at("Do Not", 0), "do not"), fmt.Sprint(at("do not", 0), "do not"),
	})
	if fmt.Sprint(s) != want || fmt.Sprint(b) != want {
		t.Fatalf("string %v, bytes %v, want %s", s, b, want)
	}
}
