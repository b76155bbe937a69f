// Package jsonesc holds what the readers of JSON strings that decode
// escapes themselves, rather than through encoding/json, share: the bytes
// JSON's two-character escapes stand for.
package jsonesc

// Simple returns the byte the escape \c stands for, for each of JSON's
// two-character escapes (\" \\ \/ \b \f \n \r \t); \u and anything else
// are not one.
func Simple(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
