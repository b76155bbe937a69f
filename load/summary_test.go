package load

import (
	"errors"
	"strings"
	"testing"

	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
)

func TestStatsSummary(t *testing.T) {
	st := Stats{In: 9, Rows: map[string]int64{layout.TableMessages: 2, layout.TableRaw: 2}, Duplicates: 1, Files: 1, Checkpoints: 1, Compacted: 1, Merged: 8}
	if got, want := st.Summary(), "9 records in: messages 2, raw 2; 1 unchanged, 0 new versions; 1 file (1 partition compacted: 8 small files merged), 1 watermarks committed"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := (Stats{}).Summary(), "0 records in: no new rows; 0 unchanged, 0 new versions; 0 files, 0 watermarks committed"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	w := Stats{CatalogErr: errors.New("locked")}.Warnings()
	if len(w) != 2 || !strings.HasPrefix(w[0], "warning: "+catalog.CatalogFile+" not refreshed: locked") || !strings.HasPrefix(w[1], "hint: ") {
		t.Errorf("warnings: %q", w)
	}
}
