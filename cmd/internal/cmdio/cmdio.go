// Package cmdio is what every pos binary shares: running a urfave/cli app
// against injected stdio, signal handling, the one map from errors to exit
// codes, the one place that prints errors (with the usage hint naming the
// command), the bad-input counter, the flags every pipeline stage has, and
// the --help texts kept beside each binary.
package cmdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/schema"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Version is set at build time with -ldflags "-X …/cmdio.Version=…".
var Version = "dev"

// Exit codes, the same for every pos binary.
const (
	OK          = 0   // success
	Failure     = 1   // I/O, network, database: a retry may help
	Usage       = 2   // bad flags or arguments
	DataError   = 3   // bad input records: skipped (and counted), or fatal under --strict
	Interrupted = 130 // SIGINT / SIGTERM
	BrokenPipe  = 141 // stdout's reader went away (quietly)
)

// ExitCodesHelp is appended to every command's --help.
const ExitCodesHelp = `EXIT CODES:
   0    success
   1    failure: I/O, network or database error (a retry may help)
   2    usage error: bad flags or arguments
   3    bad input: records were skipped (each reported on stderr as path:line: reason);
        with --strict the run stopped at the first one
   130  interrupted (Ctrl-C, SIGTERM)
   141  stdout closed by the reader (e.g. "| head"): output ended quietly`

// UsageError marks an error in how the command was called. Cmd names the
// subcommand, when there is one, for the hint.
type UsageError struct {
	Err error
	Cmd string
}

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{Err: fmt.Errorf(format, args...)}
}

// SkippedError is returned by a run that completed but skipped bad input.
type SkippedError struct{ N int64 }

func (e SkippedError) Error() string {
	return fmt.Sprintf("%d bad input record(s) skipped", e.N)
}

// ReportedError ends a run whose messages were written already (by the
// process that ran it for this one): only its exit code is left to give.
type ReportedError struct{ Code int }

func (e ReportedError) Error() string { return fmt.Sprintf("exit code %d", e.Code) }

// GCPercent is the garbage collector's target for this binary once it has
// allocated a few hundred MB (GOGC wins when set; see setGC). The filters
// allocate a record per line and keep little, so collecting less often
// buys throughput with a bounded amount of memory; pos-load, which holds
// row groups, sets a lower value.
var GCPercent = 400

// ownProcess is set by Main: the process is the command's own, which
// ExitWhenStuck may end.
var ownProcess bool

// Main runs app on the process's stdio and returns the exit code.
func Main(app *cli.App) int {
	ownProcess = true
	if v, ok := os.LookupEnv("POS_LAKE"); ok && strings.TrimSpace(v) == "" {
		// POS_LAKE= means no lake named, as in the shell scripts
		// (${POS_LAKE:-…}): the default lake, not the working directory.
		os.Unsetenv("POS_LAKE")
	}
	if err := ApplyConfig(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", app.Name, err)
		return Usage
	}
	if isStage(app) {
		batchSchedule()
	}
	if os.Getenv("GOGC") == "" {
		setGC(GCPercent)
	}
	if p := os.Getenv("POS_CPUPROFILE"); p != "" {
		// For performance work: POS_CPUPROFILE=file writes a CPU profile.
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if p := os.Getenv("POS_MEMPROFILE"); p != "" {
		// POS_MEMPROFILE=file writes where the run allocated (go tool
		// pprof -sample_index=alloc_space).
		runtime.MemProfileRate = 64 << 10
		defer func() {
			if f, err := os.Create(p); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	growPipe(os.Stdin)
	growPipe(os.Stdout)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A second Ctrl-C kills at once: once ctx is done, stop restores the
	// default signal behaviour.
	context.AfterFunc(ctx, stop)
	return Run(ctx, app, os.Args, os.Stdin, os.Stdout, os.Stderr)
}

// NoCommand is the action of an app of commands only: no command, or one
// it does not have, is a usage error that lists them.
func NoCommand(c *cli.Context) error {
	var names []string
	for _, cmd := range c.App.Commands {
		names = append(names, cmd.Name)
	}
	if c.NArg() == 0 {
		return Usagef("no command given (%s)", strings.Join(names, ", "))
	}
	return Usagef("unknown command %q (%s)", c.Args().First(), strings.Join(names, ", "))
}

// Run runs app with the given arguments and stdio and returns the exit code.
// It is what tests call.
func Run(ctx context.Context, app *cli.App, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app.Reader, app.Writer, app.ErrWriter = stdin, stdout, stderr
	app.Version = Version
	app.ExitErrHandler = func(*cli.Context, error) {}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return UsageError{Err: err} }
	codes := ExitCodesHelp
	if c, ok := app.Metadata[exitCodesKey].(string); ok {
		codes = c // a binary whose exit codes differ says so
	}
	app.CustomAppHelpTemplate = cli.AppHelpTemplate + "\n" + codes + "\n"
	app.HideHelpCommand = true
	usageHints(app.Commands, "")
	// Help goes to stdout only when asked for; it is not data, but "--help"
	// was the request.
	err := app.RunContext(ctx, intersperse(app, args))
	code := Code(err)
	if err != nil && code != BrokenPipe {
		name := app.Name
		var (
			se SkippedError
			re ReportedError
		)
		if errors.As(err, &se) || errors.As(err, &re) {
			// The per-record diagnostics and the summary said it all.
		} else {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			// An error that knows its fix says it on a line of its own.
			var h interface{ Hint() string }
			if errors.As(err, &h) {
				fmt.Fprintf(stderr, "%s: hint: %s\n", name, h.Hint())
			}
		}
		if code == Usage && !errors.As(err, &re) {
			cmd := name
			var ue UsageError
			if errors.As(err, &ue) && ue.Cmd != "" {
				cmd += " " + ue.Cmd
			}
			fmt.Fprintf(stderr, "%s: hint: see '%s --help'\n", name, cmd)
		}
	}
	return code
}

// Code maps an error to an exit code. It is the only such mapping.
func Code(err error) int {
	var (
		ue  UsageError
		se  SkippedError
		bad *schema.BadInput
		syn *schema.SyntaxError
		re  ReportedError
	)
	switch {
	case err == nil:
		return OK
	case errors.As(err, &re):
		return re.Code
	case errors.Is(err, syscall.EPIPE):
		return BrokenPipe
	case errors.Is(err, context.Canceled):
		return Interrupted
	case errors.As(err, &ue):
		return Usage
	case errors.As(err, &se), errors.As(err, &bad), errors.As(err, &syn):
		return DataError
	default:
		return Failure
	}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr }) // an *os.File, or a writer around one
	return ok && term.IsTerminal(int(f.Fd()))
}

// Skips counts and reports skipped input records. Its Skip method is a
// schema.SkipFunc.
type Skips struct {
	Tool   string
	Out    io.Writer
	Strict bool
	// Max bounds how many diagnostics are printed; the count goes on.
	Max int64

	mu    sync.Mutex
	n     int64
	warns int64
}

// Skip prints "tool: path:line: reason" and counts it. Under Strict it
// returns the error, which stops the stage.
func (s *Skips) Skip(b *schema.BadInput) error {
	s.mu.Lock()
	s.n++
	printed := s.n + s.warns
	s.mu.Unlock()
	return s.report(b, printed)
}

// Warn is Skip for an input record that was kept, repaired or with a field
// not read: printed alike and counted apart (Warnings). Nothing was
// skipped, so it never stops the stage, not even under Strict.
func (s *Skips) Warn(b *schema.BadInput) error {
	s.mu.Lock()
	s.warns++
	printed := s.n + s.warns
	s.mu.Unlock()
	s.print(b, printed)
	return nil
}

// report prints the printed-th diagnostic, up to Max; under Strict it
// returns it instead, to stop the stage.
func (s *Skips) report(b *schema.BadInput, printed int64) error {
	if s.Strict {
		return b // printed once, as the run's error
	}
	s.print(b, printed)
	return nil
}

func (s *Skips) print(b *schema.BadInput, printed int64) {
	if s.Max == 0 || printed <= s.Max {
		fmt.Fprintf(s.Out, "%s: %v\n", s.Tool, b)
	} else if printed == s.Max+1 {
		fmt.Fprintf(s.Out, "%s: further bad records are counted, not printed\n", s.Tool)
	}
}

// Warnings is the number of records kept with a warning.
func (s *Skips) Warnings() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warns
}

// N is the number of records skipped.
func (s *Skips) N() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Err is the run's result for the skip count: nil or a SkippedError.
func (s *Skips) Err() error {
	if n := s.N(); n > 0 {
		return SkippedError{n}
	}
	return nil
}

// NewSkips makes the counter for a command from its --strict flag.
func NewSkips(c *cli.Context) *Skips {
	return &Skips{Tool: c.App.Name, Out: c.App.ErrWriter, Strict: c.Bool("strict"), Max: 100}
}

// StrictFlag is the --strict flag every filter has.
var StrictFlag = &cli.BoolFlag{Name: "strict", Usage: "stop at the first bad input record (exit 3) instead of skipping it"}

// QuietFlag silences the run summary.
var QuietFlag = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "do not print the run summary on stderr"}

// LakeFlag is the --lake flag of every binary that touches the lake.
func LakeFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name:    "lake",
		Usage:   "lake directory",
		EnvVars: []string{"POS_LAKE"},
		Value:   DefaultLake(),
	}
}

// DefaultLake is $XDG_DATA_HOME/pos/lake, or ~/.local/share/pos/lake.
func DefaultLake() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "pos", "lake")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "pos", "lake")
	}
	return "pos-lake"
}

// Summary prints a one-line run summary on stderr unless --quiet.
func Summary(c *cli.Context, format string, args ...any) {
	if c.Bool("quiet") {
		return
	}
	fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", c.App.Name, fmt.Sprintf(format, args...))
}

// Inputs returns the command's file arguments, or "-" for stdin.
func Inputs(c *cli.Context) []string {
	if c.NArg() == 0 {
		return []string{"-"}
	}
	return c.Args().Slice()
}

// UserName is the login name, for the user stamped on records.
func UserName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// HumanBytes formats a byte count: 1.5 MB.
func HumanBytes(n int64) string {
	return humanize.Bytes(uint64(max(n, 0)))
}

// usageHints makes the usage errors of each command of cmds (named after
// parent) name it, so that the hint points at the command's own --help:
// a flag it does not know, and a UsageError its action returns.
func usageHints(cmds []*cli.Command, parent string) {
	for _, cmd := range cmds {
		path := strings.TrimPrefix(parent+" "+cmd.Name, " ")
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return UsageError{Err: err, Cmd: path} }
		if action := cmd.Action; action != nil {
			cmd.Action = func(c *cli.Context) error {
				err := action(c)
				if ue := (UsageError{}); errors.As(err, &ue) && ue.Cmd == "" {
					return UsageError{Err: err, Cmd: path}
				}
				return err
			}
		}
		usageHints(cmd.Subcommands, path)
	}
}

// intersperse moves flags before the arguments, so "pos-query files
// src/a.go --since 7d" and "pos-scrub in.ndjson -q" work as people type
// them (urfave/cli v2 stops reading flags at the first argument): the
// flags of the command named first, or else the app's own. A flag takes
// the next argument as its value unless it is a boolean flag or written
// --flag=value; "--" ends the flags.
func intersperse(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	flags, start := app.Flags, 1
	if cmd := command(app, args[1]); cmd != nil {
		if len(cmd.Subcommands) > 0 {
			// A command of commands (pos-embed model train --lake DIR): its
			// flags belong to the subcommand, after its name.
			return args
		}
		flags, start = cmd.Flags, 2
	} else if len(app.Flags) == 0 {
		return args // an app of commands only: an argument is a command's name
	}
	boolean := map[string]bool{"help": true, "h": true, "version": start == 1, "v": start == 1}
	for _, f := range flags {
		if _, ok := f.(*cli.BoolFlag); ok {
			for _, n := range f.Names() {
				boolean[n] = true
			}
		}
	}
	opts, rest := []string{}, []string{}
	for i := start; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-' && !isNumber(a):
			opts = append(opts, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && !boolean[name] && i+1 < len(args) {
				opts = append(opts, args[i+1])
				i++
			}
		default:
			rest = append(rest, a)
		}
	}
	if start == 1 && len(rest) > 0 && command(app, rest[0]) != nil {
		return args // the app's flags, then a command (pos-embed -q model list)
	}
	out := append(slices.Clip(args[:start]), opts...)
	if len(rest) > 0 {
		out = append(append(out, "--"), rest...)
	}
	return out
}

// command is the app's command called name, or nil.
func command(app *cli.App, name string) *cli.Command {
	for _, c := range app.Commands {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
