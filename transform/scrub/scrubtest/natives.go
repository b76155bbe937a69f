package scrubtest

import (
	aider "github.com/pos-lake/pos/extract/aider/about"
	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	cline "github.com/pos-lake/pos/extract/cline/about"
	codex "github.com/pos-lake/pos/extract/codex/about"
	cursor "github.com/pos-lake/pos/extract/cursor/about"
	gemini "github.com/pos-lake/pos/extract/gemini/about"
	push "github.com/pos-lake/pos/extract/push/about"
)

// natives are the platforms a home is written for, each with the writer of
// its native format, in the order snippets are dealt to them. Cursor comes
// last: without a SQLite driver its database is not written, and the deal
// goes round the others alone.
var natives = []struct {
	platform string
	write    func(w *writer, n int, items []Planted, sqlite SQLiteWriter) error
}{
	{claudecode.Name, func(w *writer, n int, items []Planted, _ SQLiteWriter) error { return w.claude(n, items) }},
	{codex.Name, func(w *writer, n int, items []Planted, _ SQLiteWriter) error { return w.codex(n, items) }},
	{gemini.Name, func(w *writer, n int, items []Planted, _ SQLiteWriter) error { return w.gemini(n, items) }},
	{cline.Name, func(w *writer, n int, items []Planted, _ SQLiteWriter) error { return w.cline(n, items) }},
	{push.Name, func(w *writer, n int, items []Planted, _ SQLiteWriter) error { return w.push(n, items) }},
	{aider.Name, func(w *writer, n int, items []Planted, _ SQLiteWriter) error { return w.aider(n, items) }},
	{cursor.Name, (*writer).cursor},
}
