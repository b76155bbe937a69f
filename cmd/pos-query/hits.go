package main

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/mattn/go-runewidth"
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/termsafe"
	"github.com/pos-lake/pos/query"
)

// A search result or a turn on a terminal is a block, not a table row: a
// snippet of 32 words or a prompt does not fit a column. Its first line
// has aligned fields (a search hit's score, time, type and whole session
// id, to paste into recent or context) and a title; its texts follow,
// wrapped and indented, **words** in bold (ANSI) on a terminal, between
// ** elsewhere.

// hitBlock is one result as printed: head's fields, then title and texts.
type hitBlock struct {
	head  []string
	title string
	texts []para
}

// para is a paragraph of a block: each of its lines starts with prefix
// (hitIndent when empty); at most max lines (0: all), the last ending in
// "…" when cut.
type para struct {
	prefix, s string
	max       int
}

// hitIndent is how far the title (when it needs its own line) and the
// snippet are indented.
const hitIndent = "    "

// minTitle is the narrowest a title is shown on the first line; a narrower
// room puts it on a line of its own.
const minTitle = 16

// writeHits prints the blocks, a blank line between them, within width
// columns. bold renders **word** in ANSI bold.
func writeHits(w io.Writer, blocks []hitBlock, width int, bold bool) error {
	bw := bufio.NewWriter(w)
	// The head's fields are aligned across blocks.
	var widths []int
	for _, b := range blocks {
		for i, f := range b.head {
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
		for i, f := range b.head {
			if i > 0 {
				head.WriteString("  ")
			}
			head.WriteString(f)
			if pad := widths[i] - runewidth.StringWidth(f); pad > 0 && (i < len(b.head)-1 || b.title != "") {
				head.WriteString(strings.Repeat(" ", pad))
			}
		}
		used := runewidth.StringWidth(head.String())
		title := query.OneLine(b.title)
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
		for _, t := range b.texts {
			prefix := t.prefix
			if prefix == "" {
				prefix = hitIndent
			}
			lines := wrapWords(query.OneLine(t.s), max(width-runewidth.StringWidth(prefix), minTitle), bold)
			if t.max > 0 && len(lines) > t.max {
				lines = lines[:t.max]
				lines[t.max-1] += " …"
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

// The ANSI styles pos-query writes itself: bold on and off.
const boldOn, boldOff = "\x1b[1m", "\x1b[22m"

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
			b.WriteString(boldOff)
		} else {
			b.WriteString(boldOn)
		}
		on = !on
		line = line[i+2:]
	}
	return b.String()
}

// blocks prints blocks within the table width, in bold where the output
// may carry styles.
func (e *env) blocks(blocks []hitBlock) error {
	w := e.c.App.Writer
	if !e.c.Bool("raw") {
		// Escaped before the lines are wrapped, so that they fit.
		for i := range blocks {
			b := &blocks[i]
			for j := range b.head {
				b.head[j] = termsafe.String(b.head[j])
			}
			b.title = termsafe.String(b.title)
			for j := range b.texts {
				b.texts[j].s = termsafe.String(b.texts[j].s)
			}
		}
	}
	return writeHits(w, blocks, width(e.c), colorOK(w))
}

// colorOK reports whether the output may carry ANSI styles: a terminal,
// NO_COLOR unset or empty (no-color.org), and TERM not "dumb".
func colorOK(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && cmdio.IsTerminal(w)
}

// relTime is a time as tables show it ("3 days ago").
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return humanize.RelTime(t, now, "ago", "from now")
}

// score is a score as tables show it, to two decimals.
func score(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
