package query

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Output is where and how a command prints its results: the data on W in
// Format, notes for a person on Err. It carries no flags: a command fills
// it in from its own.
type Output struct {
	W, Err io.Writer
	// Name prefixes the notes on Err ("pos-query: …").
	Name   string
	Format Format
	// Width is the width of tables and blocks, in columns.
	Width int
	// Now is the time relative times are counted from; tables and blocks
	// show dates and times in its zone.
	Now time.Time
	// TimesIn, when set, is the zone json, ndjson and csv give times in
	// (see WriterOptions.TimesIn); nil: UTC.
	TimesIn *time.Location
	// FlushEach flushes after every row (json, ndjson or csv on a terminal).
	FlushEach bool
	// Raw keeps terminal control characters in text; see WriterOptions.
	Raw bool
	// Color lets blocks carry ANSI bold.
	Color bool
	// FitHint ends the note that names the columns a table left out to
	// fit Width: how to see them.
	FitHint string
}

// Note tells the user something on Err, in a table's company only: other
// formats are read by programs.
func (o *Output) Note(format string, args ...any) {
	if o.Format == FormatTable {
		o.Notef(format, args...)
	}
}

// Notef tells the user something on Err, whatever the format.
func (o *Output) Notef(format string, args ...any) {
	fmt.Fprintf(o.Err, "%s: %s\n", o.Name, fmt.Sprintf(format, args...))
}

// Writer makes a Writer on W; flexible names the table columns cut first
// when the table is too wide, optional those that may be left out.
func (o *Output) Writer(flexible, optional []string) *Writer {
	return NewWriter(o.W, o.Format, WriterOptions{
		Width:     o.Width,
		Now:       o.Now,
		TimesIn:   o.TimesIn,
		Flexible:  flexible,
		Optional:  optional,
		FlushEach: o.FlushEach,
		Raw:       o.Raw,
	})
}

// Table writes t. In a table only the columns in cols are shown (all if
// none), each given as "name" or "name:header"; a header "long|short"
// gives way to short when the table is narrow. flexible names the columns
// cut first when the table is too wide; optional the columns left out, in
// their order, while a flexible one would be cut short (a note on Err
// says which).
func (o *Output) Table(t *Table, cols, optional []string, flexible ...string) error {
	flexible, optional = slices.Clone(flexible), slices.Clone(optional)
	if o.Format == FormatTable && len(cols) > 0 {
		names := make([]string, len(cols))
		headers := map[string]string{}
		for i, c := range cols {
			n, h, ok := strings.Cut(c, ":")
			names[i] = n
			if ok {
				headers[n] = h
			}
		}
		t = t.Select(names...)
		rename := func(list []string, from, to string) {
			for j, f := range list {
				if f == from {
					list[j] = to
				}
			}
		}
		for i, c := range t.Columns {
			if h, ok := headers[c.Name]; ok {
				rename(flexible, c.Name, h)
				rename(optional, c.Name, h)
				t.Columns[i].Name = h
			}
		}
	}
	w := o.Writer(flexible, optional)
	if err := t.Write(w); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if d := w.Dropped(); len(d) > 0 {
		names := make([]string, len(d))
		for i, n := range d {
			long, _, _ := strings.Cut(n, "|")
			names[i] = long
		}
		msg := fmt.Sprintf("left out to fit %d columns: %s", o.Width, strings.Join(names, ", "))
		if o.FitHint != "" {
			msg += " " + o.FitHint
		}
		o.Note("%s", msg)
	}
	return nil
}

// Blocks writes blocks within Width, in bold where Color allows.
func (o *Output) Blocks(blocks []Block) error {
	return WriteBlocks(o.W, blocks, BlockOptions{Width: o.Width, Bold: o.Color, Raw: o.Raw})
}
