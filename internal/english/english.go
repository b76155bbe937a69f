// Package english words the counts in pos's summaries and messages.
package english

import "strconv"

// Plural counts n of noun in words: "1 file", "2 files", "0 files". Nouns
// take a plain s; pos names none that would want another ending.
func Plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
}
