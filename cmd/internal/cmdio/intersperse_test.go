package cmdio

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Flags after arguments are moved before them, for a command's flags and
// for the app's own; flags before a command's name, and an app of
// commands only, are left to urfave/cli.
func TestIntersperse(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{QuietFlag, &cli.StringFlag{Name: "output", Aliases: []string{"o"}}},
		Commands: []*cli.Command{
			{Name: "files", Flags: []cli.Flag{&cli.StringFlag{Name: "since"}, &cli.BoolFlag{Name: "raw"}}},
			{Name: "model", Subcommands: []*cli.Command{{Name: "list"}}},
		},
	}
	for _, tc := range []struct{ in, want string }{
		{"x in.ndjson -q", "x -q -- in.ndjson"},
		{"x in.ndjson -o out.ndjson b", "x -o out.ndjson -- in.ndjson b"},
		{"x -q -- in.ndjson -o", "x -q -- in.ndjson -o"},
		{"x - -q", "x -q -- -"},
		{"x -q model list", "x -q model list"},
		{"x model list -q", "x model list -q"},
		{"x files a.go --since 7d --raw b", "x files --since 7d --raw -- a.go b"},
		{"x files a.go -1", "x files -- a.go -1"},
	} {
		if got := strings.Join(intersperse(app, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
	commandsOnly := &cli.App{Commands: app.Commands}
	if in := strings.Fields("x bogus -q"); !slices.Equal(intersperse(commandsOnly, in), in) {
		t.Errorf("an app of commands only: %q changed", in)
	}
}
