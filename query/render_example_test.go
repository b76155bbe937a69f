package query_test

import (
	"os"

	"github.com/pos-lake/pos/query"
)

// A block's head fields are aligned across blocks and its title cut to fit
// the first line; its paragraphs are wrapped to the width, a cut one
// ending in "…", and **words** stay marked where the output takes no bold.
func ExampleWriteBlocks() {
	blocks := []query.Block{
		{Head: []string{"0.91", "exchange"}, Title: "Add a retry to the fetcher",
			Texts: []query.Para{{S: "the **retry** loop backs off with exponential delays between attempts"}}},
		{Head: []string{"0.40", "plan"}, Texts: []query.Para{{Prefix: "  > ", S: "one two three four five six seven eight nine ten eleven twelve", Max: 1}}},
	}
	query.WriteBlocks(os.Stdout, blocks, query.BlockOptions{Width: 40})
	// Output:
	// 0.91  exchange  Add a retry to the fetc…
	//     the **retry** loop backs off with
	//     exponential delays between attempts
	//
	// 0.40  plan
	//   > one two three four five six seven …
}
