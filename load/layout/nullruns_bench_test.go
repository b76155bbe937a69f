package layout

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// BenchmarkWriteRows writes raw rows (1 KB lines, optional fields mostly
// set) 128 at a time, as pos-load does: "runs" through WriteRows, "pairs"
// two rows per Write as before WriteRows split by runs.
func BenchmarkWriteRows(b *testing.B) {
	rows := make([]RawRow, 128)
	line := `{"type":"assistant","message":{"content":"` + strings.Repeat("lorem ipsum ", 80) + `"}}`
	for i := range rows {
		rows[i] = RawRow{
			ID: fmt.Sprintf("id-%d", i), Platform: "claude_code", SessionID: "s", TS: time.Unix(int64(i), 0), TSPrecision: "ms",
			NativeType: "assistant", NativeID: fmt.Sprint(i), Project: "p", SourcePath: "/a/b.jsonl", SourceLine: int64(i + 1),
			Adapter: "claude_code", AdapterVer: "1", IngestedAt: time.Unix(1, 0), ContentHash: "h", Raw: line,
		}
		if i%7 == 3 {
			rows[i].NativeID = ""
		}
	}
	for _, mode := range []string{"runs", "pairs"} {
		b.Run(mode, func(b *testing.B) {
			w := parquet.NewGenericWriter[RawRow](io.Discard, WriterOptions(parquet.SchemaOf(new(RawRow)), parquet.PageBufferSize(PageBytes))...)
			b.SetBytes(int64(len(rows) * len(line)))
			for b.Loop() {
				var err error
				if mode == "runs" {
					err = WriteRows(w, rows)
				} else {
					for i := 0; i < len(rows) && err == nil; i += 2 {
						_, err = w.Write(rows[i:min(i+2, len(rows))])
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			w.Close()
		})
	}
}
