package query

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/internal/termsafe"
)

// Format is an output format.
type Format string

// The output formats.
const (
	FormatTable  Format = "table"  // aligned columns for people: relative times, 1,234 numbers, text cut to the width
	FormatJSON   Format = "json"   // one JSON array of objects
	FormatNDJSON Format = "ndjson" // one JSON object per line
	FormatCSV    Format = "csv"    // RFC 4180 with a header line
)

// Formats lists the output formats.
var Formats = []Format{FormatTable, FormatJSON, FormatNDJSON, FormatCSV}

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", argErrorf("unknown format %q (use table, json, ndjson or csv)", s)
}

// WriterOptions tune a Writer.
type WriterOptions struct {
	// Width is the table's width in columns; text is cut to fit. 0 means
	// no limit.
	Width int
	// Now is the time relative times in tables are counted from (default:
	// the time the Writer is made). Its zone is the one tables show the
	// date and time of a TIMESTAMP WITH TIME ZONE in.
	Now time.Time
	// TimesIn, when set, is the zone json, ndjson and csv give times in:
	// RFC 3339 with its offset. nil: UTC ("Z").
	TimesIn *time.Location
	// Flexible names the table columns that give up width first when the
	// table is too wide (free text such as titles and prompts). Empty: all.
	Flexible []string
	// Optional names table columns that may be left out, in this order,
	// while the table is short of room: wider than Width, or with a text
	// column cut under 24 columns (Dropped tells which were).
	Optional []string
	// FlushEach flushes after every row (for a terminal).
	FlushEach bool
	// Raw keeps the terminal control characters of text in table and csv
	// cells; by default they are shown as escapes (see termsafe), so that
	// text from a history never drives the terminal that shows it.
	Raw bool
}

// Writer prints a result in one Format. Times are RFC 3339 in json,
// ndjson and csv (UTC, or in WriterOptions.TimesIn), and in tables the
// date and time in Now's zone followed by the relative time
// ("2025-03-04 14:05 (3 days ago)"); numbers get thousands separators in
// tables only. Call Close to finish the output:
// a table is printed only then, as its column widths depend on every row.
type Writer struct {
	f    Format
	opt  WriterOptions
	bw   *bufio.Writer
	cols []Column
	n    int
	csv  *csv.Writer
	rows [][]string // table cells
	// dropped names the optional columns the table left out.
	dropped []string
	buf     bytes.Buffer
}

// NewWriter makes a Writer printing to w.
func NewWriter(w io.Writer, f Format, opt WriterOptions) *Writer {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	wr := &Writer{f: f, opt: opt, bw: bufio.NewWriterSize(w, 64<<10)}
	if f == FormatCSV {
		wr.csv = csv.NewWriter(wr.bw)
	}
	return wr
}

// Write prints a whole table to w.
func Write(w io.Writer, f Format, t *Table, opt WriterOptions) error {
	wr := NewWriter(w, f, opt)
	if err := t.Write(wr); err != nil {
		return err
	}
	return wr.Close()
}

// Begin implements RowWriter.
func (w *Writer) Begin(cols []Column) error {
	w.cols = cols
	switch w.f {
	case FormatTable:
		w.cols = slices.Clone(cols)
		for i := range w.cols {
			w.cols[i].Name = w.safe(w.cols[i].Name)
		}
	case FormatCSV:
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = w.safe(c.Name)
		}
		w.csv.Write(names)
		return w.flushRow()
	case FormatJSON:
		_, err := w.bw.WriteString("[")
		return err
	}
	return nil
}

// Row implements RowWriter.
func (w *Writer) Row(vals []any) error {
	w.n++
	switch w.f {
	case FormatTable:
		cells := make([]string, len(vals))
		for i, v := range vals {
			if t, ok := v.(time.Time); ok && i < len(w.cols) {
				cells[i] = w.timeCell(t, w.cols[i].Type)
				continue
			}
			cells[i] = w.safe(w.cell(v))
		}
		w.rows = append(w.rows, cells)
		return nil
	}
	if w.opt.TimesIn != nil {
		vals = zoned(vals, w.opt.TimesIn)
	}
	switch w.f {
	case FormatCSV:
		rec := make([]string, len(vals))
		for i, v := range vals {
			rec[i] = w.safe(csvValue(v))
		}
		w.csv.Write(rec)
		return w.flushRow()
	case FormatJSON:
		if w.n > 1 {
			w.bw.WriteString(",")
		}
		w.bw.WriteString("\n")
		w.object(vals)
		return w.flushRow()
	default:
		w.object(vals)
		w.bw.WriteString("\n")
		return w.flushRow()
	}
}

// zoned is vals with their times as RFC 3339 text in loc.
func zoned(vals []any, loc *time.Location) []any {
	var out []any
	for i, v := range vals {
		if t, ok := v.(time.Time); ok {
			if out == nil {
				out = slices.Clone(vals)
			}
			out[i] = t.In(loc).Format(time.RFC3339Nano)
		}
	}
	if out == nil {
		return vals
	}
	return out
}

// timeCell is a time as a table shows it, by its column's type: a
// TIMESTAMP WITH TIME ZONE as the date and time in Now's zone and how long
// ago it was; a DATE as the date; a TIMESTAMP (no zone) as the date and
// time it holds.
func (w *Writer) timeCell(t time.Time, typ string) string {
	rel := humanize.RelTime(t, w.opt.Now, "ago", "from now")
	switch {
	case typ == "DATE":
		return t.UTC().Format(time.DateOnly)
	case strings.HasPrefix(typ, "TIMESTAMP WITH TIME ZONE") || strings.HasPrefix(typ, "TIMESTAMPTZ"):
		return t.In(w.opt.Now.Location()).Format("2006-01-02 15:04") + " (" + rel + ")"
	case strings.HasPrefix(typ, "TIMESTAMP"):
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	return rel
}

// safe is text as a cell shows it: its control characters escaped
// unless the output is raw.
func (w *Writer) safe(s string) string {
	if w.opt.Raw {
		return s
	}
	return termsafe.String(s)
}

func (w *Writer) flushRow() error {
	if w.csv != nil {
		w.csv.Flush()
		if err := w.csv.Error(); err != nil {
			return err
		}
	}
	if w.opt.FlushEach {
		return w.bw.Flush()
	}
	// A failed write (a closed pipe) is remembered by bufio: stop at it.
	_, err := w.bw.Write(nil)
	return err
}

// Close finishes the output and flushes it.
func (w *Writer) Close() error {
	switch w.f {
	case FormatTable:
		if w.cols != nil {
			w.table()
		}
	case FormatJSON:
		if w.cols == nil {
			w.bw.WriteString("[")
		}
		if w.n > 0 {
			w.bw.WriteString("\n")
		}
		w.bw.WriteString("]\n")
	case FormatCSV:
		w.csv.Flush()
		if err := w.csv.Error(); err != nil {
			return err
		}
	}
	return w.bw.Flush()
}

// object writes one row as a JSON object with the columns in order.
func (w *Writer) object(vals []any) {
	w.bw.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			w.bw.WriteByte(',')
		}
		w.bw.Write(jsonValue(&w.buf, w.cols[i].Name))
		w.bw.WriteByte(':')
		w.bw.Write(jsonValue(&w.buf, v))
	}
	w.bw.WriteByte('}')
}

// jsonValue encodes v without HTML escaping; times are RFC 3339 UTC and
// non-finite floats strings.
func jsonValue(buf *bytes.Buffer, v any) []byte {
	switch x := v.(type) {
	case nil:
		return []byte("null")
	case time.Time:
		return strconv.AppendQuote(nil, x.UTC().Format(time.RFC3339Nano))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.AppendQuote(nil, strconv.FormatFloat(x, 'g', -1, 64))
		}
	case []byte:
		v = bytesString(x)
	}
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		enc.Encode(fmt.Sprint(v))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return string(x)
	case *big.Int:
		return x.String()
	case []byte:
		return bytesString(x)
	}
	var buf bytes.Buffer
	return string(jsonValue(&buf, v))
}

// cell formats a value for a table.
func (w *Writer) cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return OneLine(x)
	case time.Time:
		return humanize.RelTime(x, w.opt.Now, "ago", "from now")
	case int64:
		return humanize.Comma(x)
	case *big.Int:
		return humanize.BigComma(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return humanize.Commaf(math.Round(x*100) / 100)
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return OneLine(bytesString(x))
	case fmt.Stringer:
		return OneLine(x.String())
	case json.RawMessage:
		return OneLine(string(x))
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice {
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = w.cell(rv.Index(i).Interface())
		}
		return strings.Join(parts, ", ")
	}
	var buf bytes.Buffer
	return OneLine(string(jsonValue(&buf, v)))
}

// OneLine folds runs of white space (newlines included) into one space.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t\v\f") && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

func isUTF8(b []byte) bool { return utf8.Valid(b) }

var numericTypes = []string{"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
	"UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL"}

func numeric(typ string) bool {
	base, _, _ := strings.Cut(typ, "(")
	return slices.Contains(numericTypes, base)
}
