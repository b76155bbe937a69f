// Package joinstr joins pieces of text that may be empty (a message's
// parts, a tool's outputs) without stray separators.
package joinstr

// NonEmpty joins a and b with sep between them, or returns the one of them
// that is not empty.
func NonEmpty(a, b, sep string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + sep + b
}
