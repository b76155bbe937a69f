package embed

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
)

// ParseTypes reads a comma-separated list of content types to index; each
// must be one of Indexable.
func ParseTypes(list string) ([]string, error) {
	var types []string
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(Indexable, t) {
			return nil, fmt.Errorf("unknown content type %q (use %s)", t, strings.Join(Indexable, ", "))
		}
		types = append(types, t)
	}
	return types, nil
}

// DefaultWorkers is how many groups of records a provider embeds at once
// when not told: 4 requests in flight for openai, one per CPU for the
// local providers.
func DefaultWorkers(provider string) int {
	if provider == "openai" {
		return 4
	}
	return runtime.NumCPU()
}

// WriteModels writes the models as a table with a header line.
func WriteModels(w io.Writer, ms []PulledModel) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tDIM\tTOKENS\tDTYPE\tSIZE\tDIR")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", m.Name, m.Dim, m.Rows, m.DType, humanize.IBytes(uint64(m.Size)), m.Dir)
	}
	return tw.Flush()
}

// ModelSize is the size in bytes of the model files (StaticFiles) in dir.
func ModelSize(dir string) int64 {
	size := int64(0)
	for _, f := range StaticFiles {
		if st, err := os.Stat(dir + "/" + f); err == nil {
			size += st.Size()
		}
	}
	return size
}
