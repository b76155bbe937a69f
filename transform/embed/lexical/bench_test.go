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
