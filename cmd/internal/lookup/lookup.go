// Package lookup is what pos-query's commands share to look things up in
// the lake and print them: the flags of the time window, platform, project,
// session, limit and output, opening the lake with them, and the output in
// the format asked for.
package lookup

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/term"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

// RawFlag turns off the escaping of terminal control characters.
func RawFlag() cli.Flag {
	return &cli.BoolFlag{Name: "raw", Usage: "print text from the histories as stored, terminal control characters included " +
		`(by default they are shown as escapes such as \u001b, whatever the output)`}
}

// FormatFlag is --format: table, json, ndjson or csv.
func FormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Aliases: []string{"f"},
		Usage: "output format: table, json, ndjson or csv (default: table on a terminal, else ndjson)"}
}

// WidthFlag is --width, of a table.
func WidthFlag() cli.Flag {
	return &cli.IntFlag{Name: "width", Usage: "table width in columns (default: the terminal's, else $COLUMNS, else 120)"}
}

// SinceFlag and UntilFlag bound the time window.
func SinceFlag() cli.Flag {
	return &cli.StringFlag{Name: "since", Usage: "from this time: a duration back from now (36h, 7d, 2w), a date (2026-01-31) or RFC 3339"}
}

func UntilFlag() cli.Flag {
	return &cli.StringFlag{Name: "until", Usage: "before this time (same forms as --since)"}
}

// TimezoneFlag is --timezone: the zone of days, weeks and months, of the
// dates --since and --until name, and of the times tables show.
func TimezoneFlag() cli.Flag {
	return &cli.StringFlag{Name: "timezone", Aliases: []string{"z"},
		Usage: "time zone of days, weeks, months, --since/--until dates and table times: an IANA name (Europe/Paris) or UTC " +
			"(default: the machine's, $TZ); json, ndjson and csv then give times with its offset instead of in UTC"}
}

// Zone is the zone --timezone names, or the machine's (time.Local, which
// follows $TZ) when it is not given; explicit says it was given.
func Zone(c *cli.Context) (loc *time.Location, explicit bool, err error) {
	name := strings.TrimSpace(c.String("timezone"))
	if name == "" {
		return time.Local, false, nil
	}
	// A name such as "../x" is read as a path under the zoneinfo
	// directory; only zone names are accepted.
	if strings.HasPrefix(name, "/") || strings.Contains(name, "..") || strings.EqualFold(name, "local") {
		return nil, false, cmdio.Usagef("--timezone: unknown time zone %q (use an IANA name such as Europe/Paris, or UTC)", name)
	}
	loc, err = time.LoadLocation(name)
	if err != nil {
		return nil, false, cmdio.Usagef("--timezone: unknown time zone %q (use an IANA name such as Europe/Paris, or UTC)", name)
	}
	return loc, true, nil
}

// PlatformFlag keeps one platform.
func PlatformFlag() cli.Flag {
	return &cli.StringFlag{Name: "platform", Usage: "only this platform (" + strings.Join(platforms.Names(), ", ") + ")"}
}

// ProjectFlag keeps the projects whose path contains a text.
func ProjectFlag() cli.Flag {
	return &cli.StringFlag{Name: "project", Usage: "only projects whose path contains this"}
}

// SessionFlag names a session; usage says what for.
func SessionFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: usage}
}

// LimitFlag caps the results at def by default.
func LimitFlag(def int, what string) cli.Flag {
	return &cli.IntFlag{Name: "limit", Value: def, Usage: "at most this many " + what + " (0: all)"}
}

// TableFlags are the flags of every command that reads the lake and prints
// a table.
func TableFlags(more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{cmdio.LakeFlag(), FormatFlag(), WidthFlag()}, more...)
}

// Env is what an action needs: the lake, the window and the output.
type Env struct {
	C            *cli.Context
	DB           *query.DB
	Out          *query.Output
	Since, Until time.Time
	Platform     string // canonical name, aliases resolved
	// Zone is the zone of days, weeks and months (--timezone, else the
	// machine's); UTC for a command without --timezone.
	Zone *time.Location
}

// Setup parses the shared flags and opens the lake.
func Setup(c *cli.Context, args bool) (*Env, error) {
	if !args && c.NArg() > 0 {
		return nil, cmdio.Usagef("unexpected argument %q", c.Args().First())
	}
	now := time.Now()
	format, err := OutputFormat(c)
	if err != nil {
		return nil, err
	}
	e := &Env{C: c, Out: Output(c, format, now), Zone: time.UTC}
	if hasFlag(c, "timezone") {
		zone, explicit, err := Zone(c)
		if err != nil {
			return nil, err
		}
		e.Zone = zone
		e.Out.Now = now.In(zone)
		if explicit {
			e.Out.TimesIn = zone
		}
	}
	for _, t := range []struct {
		flag string
		dst  *time.Time
	}{{"since", &e.Since}, {"until", &e.Until}} {
		if *t.dst, err = cmdio.ParseTimeIn(c.String(t.flag), now, e.Zone); err != nil {
			return nil, cmdio.Usagef("--%s: %v", t.flag, err)
		}
	}
	if !e.Since.IsZero() && !e.Until.IsZero() && !e.Since.Before(e.Until) {
		return nil, cmdio.Usagef("--since must be before --until")
	}
	if p := c.String("platform"); p != "" {
		var ok bool
		if e.Platform, ok = platforms.Canonical(p); !ok {
			return nil, cmdio.Usagef("unknown platform %q (known: %s)", p, strings.Join(platforms.Names(), ", "))
		}
	}
	// Each lookup defines the views it reads.
	if e.DB, err = query.Open(c.Context, c.String("lake"), query.LazyViews()); err != nil {
		return nil, err
	}
	e.Out.ScrubWarning(e.DB.ScrubStatus())
	return e, nil
}

// hasFlag reports whether the command defines the flag name.
func hasFlag(c *cli.Context, name string) bool {
	if c.Command == nil {
		return false
	}
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// OutputFormat is --format, or by default table on a terminal, else ndjson.
func OutputFormat(c *cli.Context) (query.Format, error) {
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

// Output is where a command prints: stdout in format, within the table
// width (--width, the terminal's, $COLUMNS, or 120), notes on stderr.
func Output(c *cli.Context, format query.Format, now time.Time) *query.Output {
	w := c.App.Writer
	return &query.Output{W: w, Err: c.App.ErrWriter, Name: c.App.Name, Format: format, Now: now,
		Width:     term.Width(c.Int("width"), w, os.Getenv("COLUMNS")),
		FlushEach: format != query.FormatTable && cmdio.IsTerminal(w),
		Raw:       c.Bool("raw"),
		Color:     term.Color(w, os.Getenv("NO_COLOR"), os.Getenv("TERM")),
		FitHint:   "(--width N or --format csv shows them)",
	}
}

// Resolve is the id of the session --session names ("" when not given).
func (e *Env) Resolve() (string, error) {
	id := e.C.String("session")
	if id == "" {
		return "", nil
	}
	ref, err := e.DB.ResolveSession(e.C.Context, id, e.Platform, "")
	return ref.SessionID, err
}

// LimitNote notes msg (with the limit) when a default --limit cut the
// result at n.
func (e *Env) LimitNote(n int, msg string) {
	if l := e.C.Int("limit"); l > 0 && n == l && !e.C.IsSet("limit") {
		e.Out.Note(msg, l)
	}
}

// WithLake runs fn with the shared flags parsed and the lake open; args
// says whether the command takes arguments.
func WithLake(c *cli.Context, args bool, fn func(*Env) error) error {
	e, err := Setup(c, args)
	if err != nil {
		return err
	}
	defer e.DB.Close()
	return fn(e)
}

// Show is an action that looks a result up in the open lake (args: whether
// the command takes arguments), prints it, then calls each of after.
func Show[T any](args bool, get func(*Env) (T, error), print func(*query.Output, T) error, after ...func(*Env, T)) cli.ActionFunc {
	return func(c *cli.Context) error {
		return WithLake(c, args, func(e *Env) error {
			v, err := get(e)
			if err != nil {
				return err
			}
			if err := print(e.Out, v); err != nil {
				return err
			}
			for _, f := range after {
				f(e, v)
			}
			return nil
		})
	}
}
