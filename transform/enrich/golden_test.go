package enrich_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/testrec"

	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
)

var update = flag.Bool("update", false, "rewrite golden files")

// platforms are the adapters' fixture folders under testdata/ at the root.
var platforms = []string{"claude", "cline", "cursor", "codex", "gemini", "aider", "push"}

// TestGoldenPerPlatform runs normalize with every enrichment over each
// adapter's output on its fixture (testdata/<platform>/extract.golden.ndjson,
// which each adapter's own test keeps equal to what it extracts from
// testdata/<platform>) and compares what enrichment found (exchanges' tags,
// files and commits, file references, decisions) with
// testdata/<platform>.golden here. go test -update rewrites the goldens.
func TestGoldenPerPlatform(t *testing.T) {
	for _, p := range platforms {
		t.Run(p, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("..", "..", "testdata", p, "extract.golden.ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if _, err := normalize.Normalize(context.Background(), bytes.NewReader(in), &out,
				normalize.Options{Name: p, Enrich: enrich.All}); err != nil {
				t.Fatal(err)
			}
			got := Summary(testrec.Decode(t, &out))
			extracttest.Golden(t, filepath.Join("testdata", p+".golden"), got, *update)
		})
	}
}

// Summary renders what enrichment added to a normalized stream, one line
// per exchange, file reference and decision, in stream order.
func Summary(recs []*schema.Record) []byte {
	var b bytes.Buffer
	list := func(xs []string) string { return "[" + strings.Join(xs, " ") + "]" }
	for _, r := range recs {
		switch {
		case r.Kind == schema.KindExchange && r.Exchange != nil:
			fmt.Fprintf(&b, "exchange %s #%d tags=%s commits=%s files=%s\n", r.SessionID, r.Exchange.Number,
				list(r.Tags), list(r.Exchange.Commits), list(r.Files))
		case r.Kind == schema.KindFileRef && r.FileRef != nil:
			fmt.Fprintf(&b, "file_ref %s %s %s tool=%s message=%s\n", r.SessionID, r.FileRef.Action, r.FileRef.Path,
				r.FileRef.Tool, r.FileRef.MessageID)
		case r.Kind == schema.KindDecision && r.Decision != nil:
			fmt.Fprintf(&b, "decision %s %.2f %s %s %q\n", r.SessionID, r.Decision.Confidence, r.Decision.Status,
				list(r.Decision.Patterns), r.Text)
		}
	}
	return b.Bytes()
}
