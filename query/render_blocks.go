package query

import (
	"bufio"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/termsafe"
)

// A search result or a turn on a terminal is a block, not a table row: a
// snippet of 32 words or a prompt does not fit a column. Its first line
// has aligned fields (a search hit's score, time, type and whole session
// id, to paste into recent or context) and a title; its texts follow,
// wrapped and indented, **words** in bold (ANSI) on a terminal, between
// ** elsewhere.

// Block is one result as printed: Head's fields, then Title and Texts.
type Block struct {
	Head  []string
	Title string
	Texts []Para
}

// Para is a paragraph of a block: each of its lines starts with Prefix
// (hitIndent when empty); at most Max lines (0: all), the last ending in
// "…" when cut.
type Para struct {
	Prefix, S string
	Max       int
}

// hitIndent is how far the title (when it needs its own line) and the
// snippet are indented.
const hitIndent = "    "

// minTitle is the narrowest a title is shown on the first line; a narrower
// room puts it on a line of its own.
const minTitle = 16

// The ANSI styles the blocks carry themselves: bold on and off. A writer
// that escapes terminal control characters lets these two through.
const BoldOn, BoldOff = "\x1b[1m", "\x1b[22m"

// BlockOptions tune WriteBlocks.
type BlockOptions struct {
	// Width is the width the lines are wrapped to; a head is never cut.
	Width int
	// Bold renders **word** in ANSI bold; otherwise the markers stay.
	Bold bool
	// Raw keeps the terminal control characters of the texts; by default
	// they are shown as escapes, before the lines are wrapped so that
	// they fit.
	Raw bool
}

// WriteBlocks prints the blocks, a blank line between them, within
// opt.Width columns.
func WriteBlocks(w io.Writer, blocks []Block, opt BlockOptions) error {
	if !opt.Raw {
		for i := range blocks {
			b := &blocks[i]
			for j := range b.Head {
				b.Head[j] = termsafe.String(b.Head[j])
			}
			b.Title = termsafe.String(b.Title)
			for j := range b.Texts {
				b.Texts[j].S = termsafe.String(b.Texts[j].S)
			}
		}
	}
	return writeBlocks(w, blocks, opt.Width, opt.Bold)
}

// writeBlocks prints the blocks as they are, within width columns. bold
// renders **word** in ANSI bold.
func writeBlocks(w io.Writer, blocks []Block, width int, bold bool) error {
	bw := bufio.NewWriter(w)
	// The head's fields are aligned across blocks.
	var widths []int
	for _, b := range blocks {
		for i, f := range b.Head {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], runewidth.StringWidth(f))
		}
	}
	for n, b := range blocks {
		if n > 0 {
			bw.WriteByte('\n')
		}
		var head strings.Builder
		for i, f := range b.Head {
			if i > 0 {
				head.WriteString("  ")
			}
			head.WriteString(f)
			if pad := widths[i] - runewidth.StringWidth(f); pad > 0 && (i < len(b.Head)-1 || b.Title != "") {
				head.WriteString(strings.Repeat(" ", pad))
			}
		}
		used := runewidth.StringWidth(head.String())
		title := OneLine(b.Title)
		switch room := width - used - 2; {
		case title == "":
		case runewidth.StringWidth(title) <= room || room >= minTitle:
			head.WriteString("  ")
			head.WriteString(excerpt.Width(title, room, "…"))
			title = ""
		}
		bw.WriteString(strings.TrimRight(head.String(), " "))
		bw.WriteByte('\n')
		if title != "" {
			bw.WriteString(hitIndent)
			bw.WriteString(excerpt.Width(title, max(width-len(hitIndent), minTitle), "…"))
			bw.WriteByte('\n')
		}
		for _, t := range b.Texts {
			prefix := t.Prefix
			if prefix == "" {
				prefix = hitIndent
			}
			lines := wrapWords(OneLine(t.S), max(width-runewidth.StringWidth(prefix), minTitle), bold)
			if t.Max > 0 && len(lines) > t.Max {
				lines = lines[:t.Max]
				lines[t.Max-1] += " …"
			}
			for _, l := range lines {
				bw.WriteString(prefix)
				bw.WriteString(emphasis(l, bold))
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}

// wrapWords breaks s at spaces into lines of at most width columns; a
// longer word is a line of its own. ** markers count unless they are to
// become bold.
func wrapWords(s string, width int, bold bool) []string {
	var lines []string
	var cur strings.Builder
	curW := 0
	for _, word := range strings.Fields(s) {
		shown := word
		if bold {
			shown = strings.ReplaceAll(word, "**", "")
		}
		ww := runewidth.StringWidth(shown)
		if curW > 0 && curW+1+ww > width {
			lines = append(lines, cur.String())
			cur.Reset()
			curW = 0
		}
		if curW > 0 {
			cur.WriteByte(' ')
			curW++
		}
		cur.WriteString(word)
		curW += ww
	}
	if curW > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// emphasis renders a line's **word** markers as ANSI bold, or keeps them.
// A word's markers come in pairs (the snippet bolds words whole); a line
// with an odd count keeps them all.
func emphasis(line string, bold bool) string {
	if !bold || strings.Count(line, "**")%2 != 0 {
		return line
	}
	var b strings.Builder
	on := false
	for {
		i := strings.Index(line, "**")
		if i < 0 {
			b.WriteString(line)
			break
		}
		b.WriteString(line[:i])
		if on {
			b.WriteString(BoldOff)
		} else {
			b.WriteString(BoldOn)
		}
		on = !on
		line = line[i+2:]
	}
	return b.String()
}
