// Package fsglob quotes a literal path for filepath.Glob, so that a
// directory whose name holds pattern characters ("[", "*", "?", "\") is
// searched as it is named instead of read as a pattern.
package fsglob

import (
	"path/filepath"
	"strings"
)

// Quote returns path with every character filepath.Match gives a meaning
// to made literal: filepath.Glob(filepath.Join(Quote(dir), "*.parquet"))
// lists dir's Parquet files whatever dir is called.
func Quote(path string) string {
	if !strings.ContainsAny(path, `*?[]\`) {
		return path
	}
	var b strings.Builder
	for _, r := range path {
		switch {
		case filepath.Separator == '\\' && r == '\\':
			b.WriteRune(r) // the separator, never escaped there
		case filepath.Separator == '\\' && (r == '[' || r == ']'):
			// No escape character on Windows: a bracket expression.
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
		case strings.ContainsRune(`*?[]\`, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
