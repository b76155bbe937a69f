package query

import (
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/pos-lake/pos/internal/excerpt"
)

// table prints the collected rows as aligned columns, cut to the width.
// Numbers and times are never cut: a table whose other columns cannot make
// room for them is left wider than the width. A header given as
// "long|short" is shown short when the table does not fit whole with the
// long ones. While the table is cramped (see layout), the optional
// columns are left out, in their order.
func (w *Writer) table() {
	for {
		heads, widths, cut, cramped := w.layout()
		if cramped && w.dropOptional() {
			continue
		}
		w.printTable(heads, widths, cut)
		return
	}
}

// flexWant is the width under which a text column makes the optional
// columns give way: a model's full name (claude-sonnet-4-20250514) fits.
const flexWant = 24

// dropOptional leaves out the next optional column still shown, and
// reports whether there was one.
func (w *Writer) dropOptional() bool {
	for _, name := range w.opt.Optional {
		i := slices.IndexFunc(w.cols, func(c Column) bool { return c.Name == name })
		if i < 0 {
			continue
		}
		w.dropped = append(w.dropped, name)
		w.cols = slices.Delete(slices.Clone(w.cols), i, i+1)
		for j, r := range w.rows {
			w.rows[j] = slices.Delete(r, i, i+1)
		}
		return true
	}
	return false
}

// Dropped names the optional columns a table left out to fit its width
// (see WriterOptions.Optional), once Close has printed it.
func (w *Writer) Dropped() []string { return w.dropped }

// layout chooses the headers, the width of each column and how its cells
// are cut. cramped reports a table short of room: wider than the width,
// or with a text column cut under flexWant columns (or under its widest
// cell, if that is narrower).
func (w *Writer) layout() (heads []string, widths []int, cut []cutKind, cramped bool) {
	n := len(w.cols)
	long, short := make([]string, n), make([]string, n)
	cells := make([]int, n) // the widest cell of each column
	rigid, flex := make([]bool, n), make([]bool, n)
	for i, c := range w.cols {
		l, sh, ok := strings.Cut(c.Name, "|")
		if !ok {
			sh = l
		}
		long[i], short[i] = l, sh
		rigid[i] = numeric(c.Type) || temporal(c.Type)
		flex[i] = len(w.opt.Flexible) == 0 && !rigid[i] || slices.Contains(w.opt.Flexible, c.Name)
	}
	for _, r := range w.rows {
		for i, s := range r {
			cells[i] = max(cells[i], runewidth.StringWidth(s))
		}
	}
	cut = make([]cutKind, n)
	for i := range w.cols {
		cut[i] = w.cutOf(i, long[i])
	}
	widthsOf := func(heads []string) []int {
		out := make([]int, n)
		for i, h := range heads {
			out[i] = max(cells[i], runewidth.StringWidth(h))
		}
		return out
	}
	heads, widths = long, widthsOf(long)
	if w.opt.Width <= 0 {
		return heads, widths, cut, false
	}
	avail := w.opt.Width - 2*(n-1)
	if total(widths) <= avail {
		return heads, widths, cut, false
	}
	// Anything would be cut: short headers and ids shortened to the
	// prefixes that tell them apart leave more to the text.
	for i := range cut {
		if cut[i] == cutPrefix {
			cells[i] = min(cells[i], w.prefixWidth(i))
			rigid[i], flex[i] = true, false
		}
	}
	natural := widthsOf(short)
	heads, widths = short, fit(natural, flex, rigid, avail)
	// A path cut at a separator can be narrower than its column; the
	// other columns get the rest.
	again := false
	for i := range cut {
		if cut[i] != cutStart || widths[i] >= cells[i] {
			continue
		}
		nw := runewidth.StringWidth(short[i])
		for _, r := range w.rows {
			nw = max(nw, runewidth.StringWidth(cutCell(r[i], widths[i], cutStart)))
		}
		if nw < widths[i] {
			cells[i], rigid[i], flex[i], again = nw, true, false, true
		}
	}
	if again {
		widths = fit(widthsOf(short), flex, rigid, avail)
	}
	cramped = total(widths) > avail
	for i := range widths {
		if !rigid[i] && widths[i] < min(natural[i], flexWant) {
			cramped = true
		}
	}
	return heads, widths, cut, cramped
}

// printTable prints the header and the rows in the layout given.
func (w *Writer) printTable(heads []string, widths []int, cut []cutKind) {
	n := len(w.cols)
	line := func(cells []string) {
		var b strings.Builder
		for i, s := range cells {
			s = cutCell(s, widths[i], cut[i])
			pad := widths[i] - runewidth.StringWidth(s)
			if i > 0 {
				b.WriteString("  ")
			}
			if numeric(w.cols[i].Type) {
				b.WriteString(strings.Repeat(" ", pad))
				b.WriteString(s)
				continue
			}
			b.WriteString(s)
			if i < n-1 {
				b.WriteString(strings.Repeat(" ", pad))
			}
		}
		w.bw.WriteString(strings.TrimRight(b.String(), " "))
		w.bw.WriteByte('\n')
	}
	head := make([]string, n)
	for i, h := range heads {
		head[i] = strings.ToUpper(h)
	}
	line(head)
	for _, r := range w.rows {
		line(r)
	}
}

// cutKind is how a table cell too wide for its column is cut.
type cutKind int

const (
	cutEnd    cutKind = iota // "a long title…"
	cutStart                 // "…/src/pos": a path's end tells it apart
	cutPrefix                // "f4ad6fac": an id's prefix, with no ellipsis, can be copied and passed back
)

// pathColumns and idColumns name the columns (by their long header) cut at
// their start and shortened to a prefix.
var (
	pathColumns = []string{"project", "cwd", "path", "paths", "source_path", "file", "repo"}
	idColumns   = []string{"session", "session_id", "id", "message_id", "exchange_id", "parent_id", "prompt_id", "native_id", "request_id"}
)

// minPrefix is the shortest an id is shown, as git shortens hashes.
const minPrefix = 8

// cutOf is how column i, headed name, is cut: an id column only when
// every cell looks like an id (no spaces), so a prefix of it means one.
func (w *Writer) cutOf(i int, name string) cutKind {
	name = strings.ToLower(name)
	if slices.Contains(pathColumns, name) {
		return cutStart
	}
	if !slices.Contains(idColumns, name) || numeric(w.cols[i].Type) {
		return cutEnd
	}
	for _, r := range w.rows {
		if strings.ContainsAny(r[i], " …") {
			return cutEnd
		}
	}
	return cutPrefix
}

// prefixWidth is the length of the shortest prefixes (at least minPrefix)
// that tell column i's distinct ids apart.
func (w *Writer) prefixWidth(i int) int {
	ids := make([]string, 0, len(w.rows))
	for _, r := range w.rows {
		ids = append(ids, r[i])
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	n := minPrefix
	for j := 1; j < len(ids); j++ {
		a, b := ids[j-1], ids[j]
		k := 0
		for k < len(a) && k < len(b) && a[k] == b[k] {
			k++
		}
		n = max(n, k+1)
	}
	return n
}

// cutCell cuts s to width columns the way kind says.
func cutCell(s string, width int, kind cutKind) string {
	sw := runewidth.StringWidth(s)
	if sw <= width {
		return s
	}
	switch kind {
	case cutPrefix:
		return excerpt.Width(s, width, "")
	case cutStart:
		if width > 1 {
			// The tail from a separator on ("…/spotter", not
			// "…ects/spotter"), when the cut falls inside a part. A wide
			// rune at the cut can leave the tail a column short; padding
			// makes up for it.
			tail := excerpt.WidthStart(s, sw-width+1)
			if j := strings.IndexAny(tail, `/\`); j > 0 {
				tail = tail[j:]
			}
			return "…" + tail
		}
	}
	return excerpt.Width(s, width, "…")
}

// temporal reports whether a column holds times, shown as "3 days ago".
func temporal(typ string) bool {
	return typ == "DATE" || strings.HasPrefix(typ, "TIME") // TIME, TIMESTAMP…
}

func total(widths []int) int {
	t := 0
	for _, w := range widths {
		t += w
	}
	return t
}

// minWidth is the narrowest a column is cut to.
const minWidth = 8

// fit narrows columns until their sum is at most avail: first the flexible
// ones, all to a common cap; if that is not enough, the flexible ones go to
// minWidth and the others are capped, except the rigid ones (numbers and
// times), which are never cut. A table that cannot fit even so is left
// wider than avail.
func fit(widths []int, flex, rigid []bool, avail int) []int {
	if total(widths) <= avail {
		return widths
	}
	if out := capWidths(widths, flex, avail); out != nil {
		return out
	}
	narrow := slices.Clone(widths)
	rest := make([]bool, len(widths))
	for i := range narrow {
		if flex[i] {
			narrow[i] = min(narrow[i], minWidth)
		}
		rest[i] = !flex[i] && !rigid[i]
	}
	if out := capWidths(narrow, rest, avail); out != nil {
		return out
	}
	for i := range narrow {
		if !rigid[i] {
			narrow[i] = min(narrow[i], minWidth)
		}
	}
	return narrow
}

// capWidths gives the columns in which the largest common cap (at least
// minWidth) that makes the widths sum to at most avail, or nil if there is
// none.
func capWidths(widths []int, which []bool, avail int) []int {
	sum := func(c int) int {
		s := 0
		for i, w := range widths {
			if which[i] {
				w = min(w, c)
			}
			s += w
		}
		return s
	}
	lo, hi := minWidth, minWidth
	for _, w := range widths {
		hi = max(hi, w)
	}
	if sum(lo) > avail {
		return nil
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if sum(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out := slices.Clone(widths)
	for i := range out {
		if which[i] {
			out[i] = min(out[i], lo)
		}
	}
	// Hand what a common cap leaves over to the columns it cut.
	spare := avail - sum(lo)
	for i := range out {
		if spare > 0 && which[i] && out[i] < widths[i] {
			out[i]++
			spare--
		}
	}
	return out
}
