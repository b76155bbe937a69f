package cmdio

import (
	"io/fs"
	"strings"

	"github.com/urfave/cli/v2"
)

// Help is a command's long text for --help, kept in its binary's
// help/NAME.txt (embedded in files) so that main.go holds the flags and
// the action only. The final newline is dropped, and each of vars' pairs
// replaces a placeholder ("{{platforms}}") with a value known at run time.
// A missing file is an empty text.
func Help(files fs.FS, name string, vars ...string) string {
	b, _ := fs.ReadFile(files, "help/"+name+".txt")
	return strings.NewReplacer(vars...).Replace(strings.TrimSuffix(string(b), "\n"))
}

// App fills in what app takes from its binary's help files (embedded in
// files): the long text of --help from help/NAME.txt, unless app has its
// own Description, and, for a binary whose exit codes differ from the
// others' (see ExitCodesHelp), help/exit-codes.txt, which then ends the
// --help of the app (see Run) and of each of its commands.
func App(files fs.FS, app *cli.App) *cli.App {
	if app.Description == "" {
		app.Description = Help(files, app.Name)
	}
	if codes := Help(files, "exit-codes"); codes != "" {
		if app.Metadata == nil {
			app.Metadata = map[string]any{}
		}
		app.Metadata[exitCodesKey] = codes
		for _, cmd := range app.Commands {
			cmd.CustomHelpTemplate = cli.CommandHelpTemplate + "\n" + codes + "\n"
		}
	}
	return app
}

// exitCodesKey holds, in an app's Metadata, the text of its exit codes
// when they differ from ExitCodesHelp.
const exitCodesKey = "exitCodes"
