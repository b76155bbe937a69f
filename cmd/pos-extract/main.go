// Command pos-extract reads the session histories AI coding agents leave on
// disk and writes them as canonical pos NDJSON on stdout: one record per
// native line or row, with its raw JSON and where it came from.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all" // every platform adapter
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/schema"
	_ "github.com/pos-lake/pos/schema/fastjson" // sonic for bulk decoding
	"github.com/urfave/cli/v2"
)

func main() {
	cmdio.Batch = true // a stage of the pipeline
	exitWhenStuck = true
	os.Exit(cmdio.Main(newApp()))
}

// exitWhenStuck makes an interrupted run that has not ended after
// stuckAfter exit the process (see run): set by main, never by tests, which
// run the command inside the test binary.
var exitWhenStuck bool

const stuckAfter = 3 * time.Second

func platformNames() []string {
	var names []string
	for _, a := range extract.Adapters() {
		names = append(names, a.Platform())
	}
	return names
}

func newApp() *cli.App {
	return &cli.App{
		Name:      "pos-extract",
		Usage:     "read agent session histories into canonical NDJSON",
		UsageText: "pos-extract [--platform NAME] [--root DIR]... [--since WHEN] [--state DIR | --full] > records.ndjson",
		Description: `Reads each platform's native storage from its default location (or --root)
and writes one record per native line with its raw JSON and provenance.

Incremental by default: watermarks in --state (default LAKE/_state) say how
far each file was read; only appended bytes are read again. The watermarks
of this run travel down the pipeline as checkpoint records and pos-load
commits them once the data is in the lake, so a failed load never loses
data: to the --state directory they were read from, or to the lake's
_state. pos-load refuses watermarks read from another lake's _state (give
both the same --lake). Use --commit-state when pos-extract is not followed
by pos-load.

Symbolic links below the folders searched are not followed: each one named
like a history file is reported as skipped (--follow-links reads them). So
is every entry named like one that is not a regular file (a directory, a
named pipe, a socket, a device), or that cannot be read; the run goes on
with the others and exits 3.

Platforms: ` + strings.Join(platformNames(), ", ") + `, all.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "platform", Aliases: []string{"p"}, Value: cli.NewStringSlice("all"), Usage: "platform(s) to read, or all"},
			&cli.StringSliceFlag{Name: "root", Usage: "read this directory or file instead of the default locations (repeatable)"},
			&cli.StringFlag{Name: "since", Usage: "only records newer than this: 7d, 36h, 2026-01-31, RFC 3339"},
			cmdio.LakeFlag(),
			&cli.StringFlag{Name: "state", Usage: "watermark directory (default: LAKE/_state)"},
			&cli.BoolFlag{Name: "full", Usage: "ignore watermarks: read every file from the start"},
			&cli.BoolFlag{Name: "commit-state", Usage: "write the new watermarks to --state at the end of a successful run"},
			&cli.BoolFlag{Name: "follow-links", Usage: "read what symbolic links below the folders searched point to (files, and directories that do not loop)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write to this file (.zst: compressed) instead of stdout"},
			&cli.IntFlag{Name: "workers", Usage: "files read at once (default: one per CPU); the output order does not depend on it"},
			&cli.StringFlag{Name: "user", Usage: "user name stamped on records (default: the login name)"},
			&cli.StringFlag{Name: "machine", Usage: "machine name stamped on records (default: the host name)"},
			&cli.BoolFlag{Name: "list", Usage: "list where each platform's history is looked for, whether it exists and how many files it holds, then exit"},
			&cli.BoolFlag{Name: "capabilities", Usage: "print what each platform's data supports (the capability matrix), then exit"},
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "with --capabilities: markdown or json"},
			cmdio.StrictFlag,
			cmdio.QuietFlag,
		},
		Action: run,
	}
}

func run(c *cli.Context) error {
	if c.NArg() > 0 {
		return cmdio.Usagef("unexpected argument %q (files to read go in --root)", c.Args().First())
	}
	var chosen []extract.Adapter
	for _, p := range c.StringSlice("platform") {
		for _, name := range strings.Split(p, ",") {
			name = strings.TrimSpace(name)
			if p, ok := platforms.Canonical(name); ok {
				name = p
			}
			switch a, ok := extract.Lookup(name); {
			case name == "all":
				chosen = append(chosen, extract.Adapters()...)
			case ok:
				chosen = append(chosen, a)
			default:
				return cmdio.Usagef("unknown platform %q (known: %s, all)", name, strings.Join(platformNames(), ", "))
			}
		}
	}
	now := time.Now()
	since, err := cmdio.ParseTime(c.String("since"), now)
	if err != nil {
		return cmdio.UsageError{Err: err}
	}
	home, _ := os.UserHomeDir()
	opt := extract.Options{
		Roots:   c.StringSlice("root"),
		Home:    home,
		Env:     os.Getenv,
		Since:   since,
		User:    c.String("user"),
		Machine: c.String("machine"),
		Now:     func() time.Time { return now },
		Stats:   &extract.Stats{},
		Workers: c.Int("workers"),

		FollowLinks: c.Bool("follow-links"),
	}
	if opt.User == "" {
		opt.User = cmdio.UserName()
	}
	if opt.Machine == "" {
		opt.Machine, _ = os.Hostname()
	}
	skips := cmdio.NewSkips(c)
	opt.OnSkip, opt.OnWarn = onceEach(skips.Skip), skips.Warn
	stateDir := c.String("state")
	// Where this run's watermarks belong, said by each checkpoint so that
	// pos-load commits them there (or refuses another lake's): the --state
	// directory, else the lake whose _state is read. A --full run reads
	// none: its watermarks go to the lake loaded.
	var cpState, cpLake string
	switch {
	case stateDir != "":
		cpState, err = filepath.Abs(stateDir)
	case !c.Bool("full"):
		cpLake, err = filepath.Abs(c.String("lake"))
	}
	if err != nil {
		return err
	}
	if stateDir == "" {
		stateDir = filepath.Join(c.String("lake"), "_state")
	}
	if c.Bool("full") {
		// Every file from the start; the new watermarks still go down the
		// pipe, so the next run is incremental again.
		opt.State = extract.NewState()
	} else if opt.State, err = extract.LoadState(stateDir); err != nil {
		return err
	}
	if c.Bool("list") {
		return list(c, chosen, opt)
	}
	if c.Bool("capabilities") {
		return capabilities(c, chosen)
	}
	commit := c.Bool("commit-state")
	newMarks := extract.NewState()

	out, err := schema.Create(c.String("output"), c.App.Writer)
	if err != nil {
		return err
	}
	enc := schema.NewEncoder(out)
	enc.FlushEach = c.String("output") == "-" && cmdio.IsTerminal(c.App.Writer)
	emit := func(r *schema.Record) error {
		if r.Kind == schema.KindCheckpoint {
			if commit {
				newMarks.Put(r.Checkpoint)
			}
			r.Checkpoint.State, r.Checkpoint.Lake = cpState, cpLake
		}
		return enc.Encode(r)
	}
	if exitWhenStuck {
		// Every wait of the run (walking, opening, reading, a cancelled
		// database read) ends at a signal, and the output then ends at a
		// record's end. A write to a reader that stopped reading does not:
		// after stuckAfter the process exits (130) all the same.
		defer whenStuck(c.Context, stuckAfter, func() {
			fmt.Fprintf(c.App.ErrWriter, "pos-extract: interrupted while the output was blocked; exiting\n")
			os.Exit(cmdio.Interrupted)
		})()
	}
	start := time.Now()
	stopProgress := cmdio.Progress(c, "pos-extract: reading", opt.Stats.Bytes.Load)
	for _, a := range chosen {
		if locs := a.Locations(opt); !anyExists(locs) {
			if !c.Bool("quiet") {
				if len(locs) == 0 {
					fmt.Fprintf(c.App.ErrWriter, "pos-extract: %s: no default location; name one with --root\n", a.Platform())
				} else {
					fmt.Fprintf(c.App.ErrWriter, "pos-extract: %s: no history found (looked in %s)\n", a.Platform(), lookedIn(locs))
				}
			}
			continue
		}
		if err = a.Extract(c.Context, opt, emit); err != nil {
			break
		}
	}
	err = cmdio.Join(err, enc.Flush(), out.Close())
	stopProgress()
	st := opt.Stats
	elapsed := time.Since(start)
	cmdio.Summary(c, "%s read (%s unchanged), %s, %s, %s emitted, %s skipped, %s kept with warnings, %s left for the next run; %.1f MB/s",
		cmdio.Plural(st.Files.Load(), "file"), fmt.Sprint(st.Unchanged.Load()),
		cmdio.HumanBytes(st.Bytes.Load()), cmdio.Plural(st.Lines.Load(), "line"),
		cmdio.Plural(st.Records.Load(), "record"), fmt.Sprint(skips.N()), fmt.Sprint(skips.Warnings()),
		cmdio.Plural(st.Partial.Load(), "partial line"),
		float64(st.Bytes.Load())/1e6/max(elapsed.Seconds(), 1e-3))
	if err != nil {
		return err
	}
	if commit && newMarks.Len() > 0 {
		if opt.State == nil {
			opt.State = extract.NewState()
		}
		if err := extract.MergeState(stateDir, newMarks); err != nil {
			return fmt.Errorf("saving watermarks: %w", err)
		}
	}
	return skips.Err()
}

// onceEach reports each file-level skip (no line, no key) once: several
// adapters may pass over the same entry of a root they share (a named pipe
// named *.jsonl is no file for Claude Code, Codex or the push adapter).
func onceEach(skip schema.SkipFunc) schema.SkipFunc {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(b *schema.BadInput) error {
		if b.Line == 0 && b.Key == "" {
			k := b.Error()
			mu.Lock()
			dup := seen[k]
			seen[k] = true
			mu.Unlock()
			if dup {
				return nil
			}
		}
		return skip(b)
	}
}

// whenStuck calls stuck if ctx is done and the returned function has not
// been called within d.
func whenStuck(ctx context.Context, d time.Duration, stuck func()) func() {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			stuck()
		}
	})
	return func() {
		stop()
		close(done)
	}
}

// list prints, per platform, each location searched, whether it exists and
// how many files are under it: "platform<TAB>path<TAB>files" (files is -1
// for a location that does not exist).
func list(c *cli.Context, chosen []extract.Adapter, opt extract.Options) error {
	w := c.App.Writer
	for _, a := range chosen {
		for _, loc := range a.Locations(opt) {
			n := int64(-1)
			if fi, err := os.Stat(loc); err == nil {
				n = 0
				if fi.IsDir() {
					filepath.WalkDir(loc, func(_ string, d os.DirEntry, err error) error {
						if err == nil && !d.IsDir() {
							n++
						}
						return nil
					})
				} else {
					n = 1
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%d\n", a.Platform(), loc, n)
		}
	}
	return nil
}

func anyExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// capabilities prints the declared capability matrix.
func capabilities(c *cli.Context, chosen []extract.Adapter) error {
	var caps []extract.Capabilities
	for _, a := range chosen {
		caps = append(caps, a.Capabilities())
	}
	switch c.String("format") {
	case "json":
		b, err := json.MarshalIndent(caps, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.App.Writer, "%s\n", b)
		return err
	case "markdown", "md":
		_, err := io.WriteString(c.App.Writer, extract.Matrix(caps))
		return err
	}
	return cmdio.Usagef("--format: %q is not markdown or json", c.String("format"))
}

// lookedIn lists the places a platform was looked for, on one readable
// line: a platform with many (Cline: each fork under each editor) names
// the first few and points at --list for the rest.
func lookedIn(locs []string) string {
	const shown = 3
	if len(locs) <= shown+1 {
		return strings.Join(locs, ", ")
	}
	return fmt.Sprintf("%s and %d more; pos-extract --list shows them all", strings.Join(locs[:shown], ", "), len(locs)-shown)
}
