package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/internal/errjoin"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// PlatformNames are the registered platforms, in registry order.
func PlatformNames() []string {
	var names []string
	for _, a := range Adapters() {
		names = append(names, a.Platform())
	}
	return names
}

// ParsePlatforms resolves platform names (each may be a comma-separated
// list, an alias such as "claude", or "all") to their adapters.
func ParsePlatforms(specs []string) ([]Adapter, error) {
	var chosen []Adapter
	for _, p := range specs {
		for _, name := range strings.Split(p, ",") {
			name = strings.TrimSpace(name)
			if p, ok := platforms.Canonical(name); ok {
				name = p
			}
			switch a, ok := Lookup(name); {
			case name == "all":
				chosen = append(chosen, Adapters()...)
			case ok:
				chosen = append(chosen, a)
			default:
				return nil, fmt.Errorf("unknown platform %q (known: %s, all)", name, strings.Join(PlatformNames(), ", "))
			}
		}
	}
	return chosen, nil
}

// RunOptions configure Run: the adapters' Options, and where the run's
// watermarks come from and go.
type RunOptions struct {
	Options
	Adapters []Adapter
	// StateDir is where the watermarks were read (UseState) and where
	// Commit merges the run's.
	StateDir string
	// Commit merges the new watermarks into StateDir once the output is
	// complete; without it they only travel down the pipeline as
	// checkpoint records, for pos-load to commit.
	Commit bool
	// CheckpointState and CheckpointLake are stamped on every checkpoint
	// record: where its watermark belongs (see UseState).
	CheckpointState, CheckpointLake string
	// FlushEach flushes the output after every record (a terminal).
	FlushEach bool
	// Note, when set, is told of each platform with nothing to read.
	Note func(msg string)
	// ExtraRoots are more places to read, by platform, after its default
	// locations (RootsVar, the configuration file's [roots]); a run given
	// Roots reads those alone.
	ExtraRoots map[string][]string
}

// extraRoots are the extra roots a run reads of platform: none when the
// run was given its roots.
func (o *RunOptions) extraRoots(platform string) []string {
	if len(o.Roots) > 0 {
		return nil
	}
	return o.ExtraRoots[platform]
}

// UseState reads the watermarks: from stateDir, else from the lake's
// _state, or none at all when full (every file from the start; the new
// watermarks still go down the pipe, so the next run is incremental
// again). It says on each checkpoint where its watermark belongs, so that
// pos-load commits it there (or refuses another lake's): the state
// directory given, else the lake whose _state was read; a full run's go to
// the lake loaded.
func (o *RunOptions) UseState(stateDir, lake string, full bool) error {
	var err error
	switch {
	case stateDir != "":
		o.CheckpointState, err = filepath.Abs(stateDir)
	case !full:
		o.CheckpointLake, err = filepath.Abs(lake)
	}
	if err != nil {
		return err
	}
	if stateDir == "" {
		stateDir = filepath.Join(lake, "_state")
	}
	o.StateDir = stateDir
	if full {
		o.State = watermark.NewState()
		return nil
	}
	o.State, err = watermark.LoadState(stateDir)
	return err
}

// Run extracts every chosen platform's history as NDJSON records to out,
// which it closes; with Commit it then saves the run's watermarks. The
// output ends at a record's end whatever stops the run.
func Run(ctx context.Context, out io.WriteCloser, opt RunOptions) error {
	newMarks := watermark.NewState()
	enc := schema.NewEncoder(out)
	enc.FlushEach = opt.FlushEach
	emit := func(r *schema.Record) error {
		if r.Kind == schema.KindCheckpoint {
			if opt.Commit {
				newMarks.Put(r.Checkpoint)
			}
			r.Checkpoint.State, r.Checkpoint.Lake = opt.CheckpointState, opt.CheckpointLake
		}
		return enc.Encode(r)
	}
	var err error
	for _, a := range opt.Adapters {
		if err = extractAll(ctx, a, &opt, emit); err != nil {
			break
		}
	}
	if err = errjoin.Join(err, enc.Flush(), out.Close()); err != nil {
		return err
	}
	if opt.Commit && newMarks.Len() > 0 {
		if err := watermark.MergeState(opt.StateDir, newMarks); err != nil {
			return fmt.Errorf("saving watermarks: %w", err)
		}
	}
	return nil
}

// extractAll reads a platform's default locations (or the run's roots),
// then its extra roots, each as a run of its own; a place with nothing to
// read is a note.
func extractAll(ctx context.Context, a Adapter, opt *RunOptions, emit Emit) error {
	if locs := a.Locations(opt.Options); !anyExists(locs) {
		if opt.Note != nil {
			switch {
			case len(locs) == 0 && len(opt.extraRoots(a.Platform())) > 0:
			case len(locs) == 0:
				opt.Note(fmt.Sprintf("%s: no default location; name one with --root", a.Platform()))
			default:
				opt.Note(fmt.Sprintf("%s: no history found (looked in %s)", a.Platform(), lookedIn(locs)))
			}
		}
	} else if err := a.Extract(ctx, opt.Options, emit); err != nil {
		return err
	}
	for _, root := range opt.extraRoots(a.Platform()) {
		if _, err := os.Stat(root); err != nil {
			if opt.Note != nil {
				opt.Note(fmt.Sprintf("%s: extra root %s (%s) not found", a.Platform(), root, RootsVar))
			}
			continue
		}
		o := opt.Options
		o.Roots = []string{root}
		if err := a.Extract(ctx, o, emit); err != nil {
			return err
		}
	}
	return nil
}

// Summary says what a run read and wrote, on one line, for a person
// (pos-extract prints it on stderr), with the bad records skipped and
// those kept with a warning.
func (st *Stats) Summary(skipped, warned int64, elapsed time.Duration) string {
	return fmt.Sprintf("%s read (%s unchanged), %s, %s, %s emitted, %s skipped, %s kept with warnings, %s left for the next run; %.1f MB/s",
		english.Plural(st.Files.Load(), "file"), fmt.Sprint(st.Unchanged.Load()),
		humanize.Bytes(uint64(max(st.Bytes.Load(), 0))), english.Plural(st.Lines.Load(), "line"),
		english.Plural(st.Records.Load(), "record"), fmt.Sprint(skipped), fmt.Sprint(warned),
		english.Plural(st.Partial.Load(), "partial line"),
		float64(st.Bytes.Load())/1e6/max(elapsed.Seconds(), 1e-3))
}

// OnceEach passes on each file-level skip (no line, no key) once: several
// adapters may pass over the same entry of a root they share (a named pipe
// named *.jsonl is no file for Claude Code, Codex or the push adapter).
func OnceEach(skip schema.SkipFunc) schema.SkipFunc {
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

// List writes a header line, then per platform each location searched
// (its defaults, or the roots given, then its extra roots), and how many
// files are under it or "not found": "platform<TAB>location<TAB>files".
func List(w io.Writer, chosen []Adapter, opt RunOptions) error {
	if _, err := fmt.Fprintf(w, "platform\tlocation\tfiles\n"); err != nil {
		return err
	}
	for _, a := range chosen {
		for _, loc := range append(a.Locations(opt.Options), opt.extraRoots(a.Platform())...) {
			n := "not found"
			if fi, err := os.Stat(loc); err == nil {
				files := 0
				if fi.IsDir() {
					filepath.WalkDir(loc, func(_ string, d os.DirEntry, err error) error {
						if err == nil && !d.IsDir() {
							files++
						}
						return nil
					})
				} else {
					files = 1
				}
				n = fmt.Sprint(files)
			}
			if _, err := fmt.Fprintf(w, "%s\t%s\t%s\n", a.Platform(), loc, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// ErrFormat is WriteCapabilities' error for a format it does not write.
var ErrFormat = errors.New("is not markdown or json")

// WriteCapabilities writes the declared capability matrix of the chosen
// platforms as markdown (or "md") or json.
func WriteCapabilities(w io.Writer, chosen []Adapter, format string) error {
	var caps []Capabilities
	for _, a := range chosen {
		c, _ := Declared(a.Platform())
		caps = append(caps, c)
	}
	switch format {
	case "json":
		b, err := json.MarshalIndent(caps, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "markdown", "md":
		_, err := io.WriteString(w, Matrix(caps))
		return err
	}
	return fmt.Errorf("%q %w", format, ErrFormat)
}

func anyExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
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

// plural formats a count with its noun (a noun whose plural takes an s).
