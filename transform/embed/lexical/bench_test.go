package lexical

import (
	"strings"
	"testing"
)

// benchText is prose with code, a path, an error and a version, as an
// exchange has them.
var benchText = strings.Repeat(`The tests were failing because parseConfig read src/query/search.go before
the cache was warm; error[E0308]: mismatched types in pkg.ParseConfig. We bumped the client to v1.2.3,
reran go test ./... and the HTTP 404 from the fetcher went away. Wir haben auch die Fehler behoben. `, 8)

// BenchmarkTerms is the tokenizer on pos-load's and pos-embed's path:
// version 1 (as it was) against the current one.
func BenchmarkTerms(b *testing.B) {
	for _, v := range Versions {
		tok, _ := For(v)
		b.Run("v"+string(rune('0'+v)), func(b *testing.B) {
			b.SetBytes(int64(len(benchText)))
			for b.Loop() {
				tok.Scan(benchText, func(int, int, []string) {})
			}
		})
	}
}

// BenchmarkTermsCorpus is the tokenizer on the texts of the corpus's
// sessions (the first MiB of those of 32 bytes or more): messages, tool
// inputs and outputs, as pos-embed and pos-load meet them.
func BenchmarkTermsCorpus(b *testing.B) {
	var texts []string
	size := 0
	corpusTexts(b, func(s string) {
		if len(s) >= 32 && size < 1<<20 {
			texts = append(texts, s)
			size += len(s)
		}
	})
	for _, v := range Versions {
		tok, _ := For(v)
		b.Run("v"+string(rune('0'+v)), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, s := range texts {
					tok.Scan(s, func(int, int, []string) {})
				}
			}
		})
	}
}
