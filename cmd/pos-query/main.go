// Command pos-query looks things up in the pos lake: the sessions, the last
// turns of a session, a timeline of exchanges, token statistics, and
// arbitrary SQL over the lake's views.
package main

import (
	"embed"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/term"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

func main() {
	cmdio.FirstGCPercent = 400 // most lookups end before a collection would pay off
	os.Exit(cmdio.Main(newApp()))
}

// exitCodes ends every --help: this binary's codes differ from the others'.
var exitCodes = cmdio.Help(helpFiles, "exit-codes")

// The descriptions in --help, one file a command (help/pos-query.txt: the
// app's own).
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is the description of a command in --help ("" without a file).
func help(name string) string {
	return cmdio.Help(helpFiles, name, "{{keys}}", strings.Join(query.StatsKeys, ", "))
}

func newApp() *cli.App {
	return &cli.App{
		Name:        "pos-query",
		Metadata:    map[string]any{"exitCodes": exitCodes},
		Usage:       "look up sessions, recent turns, timelines and token stats in the pos lake, or run SQL on it",
		UsageText:   "pos-query COMMAND [OPTIONS]",
		Description: help("pos-query"),
		Commands: []*cli.Command{sqlCmd(), sessionsCmd(), searchCmd(), recentCmd(), timelineCmd(), statsCmd(), filesCmd(),
			decisionsCmd(), contextCmd(), summarizeCmd(), capabilitiesCmd(), statusCmd()},
		Action: func(c *cli.Context) error {
			var names []string
			for _, cmd := range c.App.Commands {
				names = append(names, cmd.Name)
			}
			if c.NArg() == 0 {
				return cmdio.Usagef("no command given (%s)", strings.Join(names, ", "))
			}
			return cmdio.Usagef("unknown command %q (%s)", c.Args().First(), strings.Join(names, ", "))
		},
	}
}

// command fills in what every subcommand shares: its description and the
// exit codes in --help, --raw, and usage errors for the library's
// complaints about arguments (cmdio names the command in their hint).
func command(cmd *cli.Command) *cli.Command {
	if cmd.Description == "" {
		cmd.Description = help(cmd.Name)
	}
	cmd.HideHelpCommand = true
	cmd.CustomHelpTemplate = cli.CommandHelpTemplate + "\n" + exitCodes + "\n"
	cmd.Flags = append(cmd.Flags, rawFlag())
	if action := cmd.Action; action != nil {
		cmd.Action = func(c *cli.Context) error {
			// Text from histories never drives the terminal (see
			// term.Guard); the bold of search hits is the program's own.
			out, errw := c.App.Writer, c.App.ErrWriter
			g := term.NewGuard(out, errw, c.Bool("raw"), query.BoldOn, query.BoldOff)
			c.App.Writer, c.App.ErrWriter = g.Out, g.Err
			defer func() {
				g.Flush()
				c.App.Writer, c.App.ErrWriter = out, errw
			}()
			err := action(c)
			if g.Out.N == 0 && query.FileVanished(err) {
				// A load compacted a partition between the query's listing
				// of its files and their reading: the files are there
				// again, merged, for the same query.
				err = action(c)
			}
			var ae *query.ArgError
			if _, ok := err.(cmdio.UsageError); !ok && errors.As(err, &ae) {
				// The library's complaints about arguments are usage errors.
				err = cmdio.UsageError{Err: err}
			}
			return term.SafeError(err)
		}
	}
	return cmd
}

// rawFlag turns off the escaping of terminal control characters.
func rawFlag() cli.Flag {
	return &cli.BoolFlag{Name: "raw", Usage: "print text from the histories as stored, terminal control characters included " +
		`(by default they are shown as escapes such as \u001b, whatever the output)`}
}

func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Aliases: []string{"f"},
		Usage: "output format: table, json, ndjson or csv (default: table on a terminal, else ndjson)"}
}

func widthFlag() cli.Flag {
	return &cli.IntFlag{Name: "width", Usage: "table width in columns (default: the terminal's, else $COLUMNS, else 120)"}
}

func sinceFlag() cli.Flag {
	return &cli.StringFlag{Name: "since", Usage: "from this time: a duration back from now (36h, 7d, 2w), a date (2026-01-31) or RFC 3339"}
}

func untilFlag() cli.Flag {
	return &cli.StringFlag{Name: "until", Usage: "before this time (same forms as --since)"}
}

func platformFlag() cli.Flag {
	return &cli.StringFlag{Name: "platform", Usage: "only this platform (" + strings.Join(platforms.Names(), ", ") + ")"}
}

func projectFlag() cli.Flag {
	return &cli.StringFlag{Name: "project", Usage: "only projects whose path contains this"}
}

func sessionFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: usage}
}

func limitFlag(def int, what string) cli.Flag {
	return &cli.IntFlag{Name: "limit", Value: def, Usage: "at most this many " + what + " (0: all)"}
}

// tableFlags are the flags of every command that reads the lake and prints
// a table.
func tableFlags(more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag()}, more...)
}

// env is what an action needs: the lake, the window and the output.
type env struct {
	c            *cli.Context
	db           *query.DB
	out          *query.Output
	since, until time.Time
	platform     string // canonical name, aliases resolved
}

// setup parses the shared flags and opens the lake.
func setup(c *cli.Context, args bool) (*env, error) {
	if !args && c.NArg() > 0 {
		return nil, cmdio.Usagef("unexpected argument %q", c.Args().First())
	}
	now := time.Now()
	format, err := outputFormat(c)
	if err != nil {
		return nil, err
	}
	e := &env{c: c, out: output(c, format, now)}
	for _, t := range []struct {
		flag string
		dst  *time.Time
	}{{"since", &e.since}, {"until", &e.until}} {
		if *t.dst, err = cmdio.ParseTime(c.String(t.flag), now); err != nil {
			return nil, cmdio.Usagef("--%s: %v", t.flag, err)
		}
	}
	if !e.since.IsZero() && !e.until.IsZero() && !e.since.Before(e.until) {
		return nil, cmdio.Usagef("--since must be before --until")
	}
	if p := c.String("platform"); p != "" {
		var ok bool
		if e.platform, ok = platforms.Canonical(p); !ok {
			return nil, cmdio.Usagef("unknown platform %q (known: %s)", p, strings.Join(platforms.Names(), ", "))
		}
	}
	// Each lookup defines the views it reads.
	if e.db, err = query.Open(c.Context, c.String("lake"), query.LazyViews()); err != nil {
		return nil, err
	}
	e.out.ScrubWarning(e.db.ScrubStatus())
	return e, nil
}

func outputFormat(c *cli.Context) (query.Format, error) {
	s := c.String("format")
	if s == "" {
		if cmdio.IsTerminal(c.App.Writer) {
			return query.FormatTable, nil
		}
		return query.FormatNDJSON, nil
	}
	f, err := query.ParseFormat(s)
	if err != nil {
		return "", cmdio.Usagef("--format: %w", err)
	}
	return f, nil
}

// output is where a command prints: stdout in format, within the table
// width (--width, the terminal's, $COLUMNS, or 120), notes on stderr.
func output(c *cli.Context, format query.Format, now time.Time) *query.Output {
	w := c.App.Writer
	return &query.Output{W: w, Err: c.App.ErrWriter, Name: c.App.Name, Format: format, Now: now,
		Width:     term.Width(c.Int("width"), w, os.Getenv("COLUMNS")),
		FlushEach: format != query.FormatTable && cmdio.IsTerminal(w),
		Raw:       c.Bool("raw"),
		Color:     term.Color(w, os.Getenv("NO_COLOR"), os.Getenv("TERM")),
		FitHint:   "(--width N or --format csv shows them)",
	}
}

// resolve is the id of the session --session names ("" when not given).
func (e *env) resolve() (string, error) {
	id := e.c.String("session")
	if id == "" {
		return "", nil
	}
	ref, err := e.db.ResolveSession(e.c.Context, id, e.platform, "")
	return ref.SessionID, err
}

// limitNote notes msg (with the limit) when a default --limit cut the
// result at n.
func (e *env) limitNote(n int, msg string) {
	if l := e.c.Int("limit"); l > 0 && n == l && !e.c.IsSet("limit") {
		e.out.Note(msg, l)
	}
}

// withLake runs fn with the shared flags parsed and the lake open; args
// says whether the command takes arguments.
func withLake(c *cli.Context, args bool, fn func(*env) error) error {
	e, err := setup(c, args)
	if err != nil {
		return err
	}
	defer e.db.Close()
	return fn(e)
}

// show is an action that looks a result up in the open lake (args: whether
// the command takes arguments), prints it, then calls each of after.
func show[T any](args bool, get func(*env) (T, error), print func(*query.Output, T) error, after ...func(*env, T)) cli.ActionFunc {
	return func(c *cli.Context) error {
		return withLake(c, args, func(e *env) error {
			v, err := get(e)
			if err != nil {
				return err
			}
			if err := print(e.out, v); err != nil {
				return err
			}
			for _, f := range after {
				f(e, v)
			}
			return nil
		})
	}
}
