package searchindex

import (
	"encoding/binary"
	"strings"
	"testing"
)

func metaRows() []RowMeta {
	return []RowMeta{
		{ID: "a", Platform: "claude_code", SessionID: "s1", Tool: "Bash", ChunkIndex: 0, Text: strings.Repeat("go test ./... failed\n", 200)},
		{ID: "b", Platform: "codex", SessionID: "s2", ChunkIndex: 1, Text: "short"},
		{ID: "c", Platform: "codex", SessionID: "s2", ChunkIndex: 2, Text: ""},
	}
}

// parsedMeta is metaRows, their encoded metadata section and the section
// parsed.
func parsedMeta(t *testing.T) ([]RowMeta, []byte, *sidecarMeta) {
	t.Helper()
	rows := metaRows()
	b := encodeMeta(rows)
	m, err := parseMeta(b, len(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rows, b, m
}

// readAll reads every row of an encoded metadata section with its text.
func readAll(b []byte, rows int) ([]RowMeta, error) {
	m, err := parseMeta(b, rows)
	if err != nil {
		return nil, err
	}
	blocks := map[int][]byte{}
	var out []RowMeta
	for r := range rows {
		row, err := m.row(r, true, blocks)
		if err != nil {
			return out, err
		}
		out = append(out, row)
	}
	return out, nil
}

func TestSidecarMetaRoundTrip(t *testing.T) {
	rows := metaRows()
	got, err := readAll(encodeMeta(rows), len(rows))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if got[i] != rows[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], rows[i])
		}
	}
}

// A text block that decompresses to more than its rows say is refused, not
// decompressed: the sizes in a damaged sidecar are not to be trusted.
func TestSidecarMetaBlockLargerThanItsRows(t *testing.T) {
	rows, _, m := parsedMeta(t)
	// Every row's end says 10 bytes: the block holds thousands.
	for r := range rows {
		binary.LittleEndian.PutUint32(m.end[4*r:], 10)
		binary.LittleEndian.PutUint32(m.start[4*r:], 0)
	}
	if _, err := m.row(0, true, map[int][]byte{}); err == nil || !strings.Contains(err.Error(), "bad metadata") {
		t.Fatalf("a block larger than its rows' ends was read: err %v", err)
	}
}

// FuzzSidecarMeta reads arbitrary bytes as a metadata section: an error or
// rows, never a panic, and never more text than the section's rows say.
func FuzzSidecarMeta(f *testing.F) {
	rows := metaRows()
	f.Add(encodeMeta(rows), len(rows))
	f.Add(encodeMeta(rows[1:]), 2)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1<<12 {
			return
		}
		got, _ := readAll(b, n)
		for _, r := range got {
			if len(r.Text) > len(b)*1024+1<<16 {
				t.Fatalf("a text of %d bytes from %d bytes of input", len(r.Text), len(b))
			}
		}
	})
}

// A metadata section read in part (up to its text blocks) parses as the
// whole one does; bytes that end before the text blocks say they were cut
// short, and the text blocks are then read on demand.
func TestSidecarMetaHead(t *testing.T) {
	rows, b, whole := parsedMeta(t)
	dataAt := len(b) - len(whole.data)
	for n := range dataAt {
		if _, _, err := parseMetaHead(b[:n], len(rows), len(b)); err != errShortMeta {
			t.Fatalf("%d of the %d bytes before the text: %v", n, dataAt, err)
		}
	}
	m, p, err := parseMetaHead(b[:dataAt], len(rows), len(b))
	if err != nil || p != dataAt {
		t.Fatalf("the bytes before the text: %v, text at %d", err, p)
	}
	reads := 0
	m.dataAt, m.readAt = int64(p), func(dst []byte, off int64) error {
		reads++
		copy(dst, b[off:])
		return nil
	}
	blocks := map[int][]byte{}
	for r := range rows {
		got, err := m.row(r, true, blocks)
		if err != nil || got != rows[r] {
			t.Fatalf("row %d: %+v %v", r, got, err)
		}
	}
	if reads == 0 || reads > m.blocks {
		t.Fatalf("%d reads of %d text blocks", reads, m.blocks)
	}
	// A section whose sizes are wrong is bad, not short.
	if _, _, err := parseMetaHead(b[:dataAt], len(rows)+5, len(b)); err == nil || err == errShortMeta {
		t.Fatalf("more rows than the section has: %v", err)
	}
}
