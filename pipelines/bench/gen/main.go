// Command gen builds a synthetic Claude Code home for benchmarks. It copies
// real session files (--src) again and again with fresh ids and shifted
// timestamps into DIR/.claude/projects until the output reaches --size:
//
//	go run ./pipelines/bench/gen --src ../shared/corpus/claude --out DIR --size 500MB [--seed N]
//
// Each copy of the whole source tree is a replica. Inside a replica every
// id (UUIDs, toolu_/msg_/req_ ids, subagent ids, slugs) is replaced the same
// way in every file, so the links between lines, files and subagents hold,
// while two replicas share no id and are never taken for replays of each
// other. Timestamps of replica r are moved r*31 hours back. Ids are rewritten
// in the bytes, not by decoding JSON: every replacement has the length and
// the character class of what it replaces, so each line stays byte-for-byte
// valid JSON and the output is exactly as large as the input it copies.
//
// With --append, gen instead grows an existing home: it appends copies of
// existing lines (fresh ids, dated after the home's latest line) to some main session files,
// about --fraction of all their lines, to measure incremental runs.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dustin/go-humanize"
)

// replicaShift is how far back each replica's timestamps move, per replica.
const replicaShift = 31 * time.Hour

// planEvery: every planEvery-th replica also gets plan files for its slugs.
const planEvery = 5

type usageError struct{ error }

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("gen", flag.ContinueOnError)
	src := fl.String("src", "../shared/corpus/claude", "directory of real Claude Code .jsonl files to replicate")
	corpus := fl.String("corpus", "", "directory holding the other platforms' real files in <platform>/ (default: the parent of --src)")
	platforms := fl.String("platforms", strings.Join(supported(), ","), "platforms to generate, comma-separated ("+strings.Join(supported(), ", ")+")")
	out := fl.String("out", "", "directory to create the synthetic home in (DIR/.claude/...)")
	size := fl.String("size", "500MB", "stop once this much has been written (100MB, 1GB, 5GB, 2GiB)")
	seed := fl.Uint64("seed", 1, "seed: the same seed and source give the same bytes")
	jobs := fl.Int("jobs", runtime.GOMAXPROCS(0), "files written in parallel (output does not depend on it)")
	appendMode := fl.Bool("append", false, "grow the existing home in --out instead of generating one")
	fraction := fl.Float64("fraction", 0.01, "with --append: new lines as a fraction of the existing main-session lines")
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "usage: gen --src DIR --out DIR [--size 500MB] [--seed N]\n       gen --out DIR --append [--fraction 0.01] [--seed N]\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fl.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fl.Arg(0))}
	}
	if *out == "" {
		return usageError{errors.New("--out is required")}
	}
	if *appendMode {
		if *fraction <= 0 {
			return usageError{errors.New("--fraction must be positive")}
		}
		return grow(*out, *fraction, *seed, stdout)
	}
	limit, err := humanize.ParseBytes(*size)
	if err != nil || limit == 0 {
		return usageError{fmt.Errorf("--size %q: want a size such as 500MB or 5GB", *size)}
	}
	if *jobs < 1 {
		*jobs = 1
	}
	projects := filepath.Join(*out, ".claude", "projects")
	if _, err := os.Stat(projects); err == nil {
		return fmt.Errorf("%s already exists: remove it or choose another --out", projects)
	}
	start := time.Now()
	plats := map[string]bool{}
	for _, p := range strings.Split(*platforms, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, ok := otherPlatforms[p]; !ok && p != claudeCode {
			return usageError{fmt.Errorf("--platforms: unknown platform %q", p)}
		}
		plats[p] = true
	}
	s := &source{tokens: map[string]tokenKind{}, slugs: map[string][]string{}}
	if plats[claudeCode] {
		if s, err = load(*src); err != nil {
			return err
		}
	}
	if *corpus == "" {
		*corpus = filepath.Dir(filepath.Clean(*src))
	}
	for _, p := range slices.Sorted(maps.Keys(plats)) {
		if p != claudeCode {
			if err := loadOther(s, *corpus, p); err != nil {
				return err
			}
		}
	}
	if len(s.files) == 0 {
		return fmt.Errorf("nothing to replicate for --platforms %s", *platforms)
	}
	st, err := generate(s, *out, int64(limit), *seed, *jobs)
	if err != nil {
		return err
	}
	el := time.Since(start)
	var per []string
	for _, p := range slices.Sorted(maps.Keys(st.platform)) {
		per = append(per, fmt.Sprintf("%s %s", p, humanize.Bytes(uint64(st.platform[p]))))
	}
	fmt.Fprintf(stdout, "gen: wrote %s (%d bytes) in %d files (%d transcripts, %d plans) to %s: %d replicas of %d files (%s); %s; %.1fs, %.0f MB/s\n",
		humanize.Bytes(uint64(st.bytes)), st.bytes, st.files, st.files-st.plans, st.plans, *out,
		st.replicas, len(s.files), humanize.Bytes(uint64(s.bytes)), strings.Join(per, ", "), el.Seconds(), float64(st.bytes)/1e6/el.Seconds())
	return nil
}

// ---------------------------------------------------------------------------
// The source tree

type source struct {
	files []*srcFile
	bytes int64
	// tokens are the word-character runs rewritten by name: subagent ids
	// (tokAgent) and the first words of slugs (tokSlug).
	tokens  map[string]tokenKind
	slugs   map[string][]string // first word -> slugs starting with it
	lenMask uint64              // bit n set: some token has length n
}

type tokenKind uint8

const (
	tokAgent tokenKind = 1 << iota
	tokSlug
)

type srcFile struct {
	platform string // "" for Claude Code
	// unit groups files that are written together: a replica never ends
	// between a session and its subagents' transcripts, or an Aider chat
	// history and its input history.
	unit string
	// out names the file in the home from its rewritten bytes (platforms
	// other than Claude Code), relative to --out; r is the replica.
	out     func(data []byte, r int) (string, error)
	rel     string // path under --src
	data    []byte
	project string // projects/<project>/ directory it is copied into
	rest    string // path under the project directory, before rewriting
	cwd     string
	session string // first sessionId in the file
	lastTS  time.Time
	slugs   []string
}

func load(dir string) (*source, error) {
	s := &source{tokens: map[string]tokenKind{}, slugs: map[string][]string{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		s.files = append(s.files, &srcFile{rel: filepath.ToSlash(rel), data: b})
		s.bytes += int64(len(b))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.files) == 0 {
		return nil, fmt.Errorf("no .jsonl files under %s", dir)
	}
	// "X.jsonl" sorts before "X/subagents/...": sessions come before their subagents.
	slices.SortFunc(s.files, func(a, b *srcFile) int { return strings.Compare(a.rel, b.rel) })
	byRel := map[string]*srcFile{}
	for _, f := range s.files {
		byRel[f.rel] = f
		f.cwd = firstValue(f.data, `"cwd":"`)
		f.session = firstValue(f.data, `"sessionId":"`)
		f.lastTS = lastTimestamp(f.data)
		for _, v := range allValues(f.data, `"slug":"`) {
			if isSlug(v) && !slices.Contains(f.slugs, v) {
				f.slugs = append(f.slugs, v)
			}
		}
		for _, v := range allValues(f.data, `"agentId":"`) {
			s.addAgentID(v)
		}
	}
	taken := map[string]bool{} // output paths (project/rest) of replica templates
	for _, f := range s.files {
		base := strings.TrimSuffix(path.Base(f.rel), ".jsonl")
		dir := path.Dir(f.rel)
		anchor := f
		switch {
		case path.Base(dir) == "subagents" && isUUID(path.Base(path.Dir(dir))):
			// v2.1: <session>/subagents/agent-<id>.jsonl
			sess := path.Base(path.Dir(dir))
			if a := byRel[path.Join(path.Dir(path.Dir(dir)), sess+".jsonl")]; a != nil {
				anchor = a
			}
			f.rest = sess + "/subagents/" + base + ".jsonl"
			s.addAgentID(strings.TrimPrefix(base, "agent-"))
		case strings.HasPrefix(base, "agent-"):
			// v2.0: agent-<id>.jsonl next to the sessions
			f.rest = base + ".jsonl"
			s.addAgentID(strings.TrimPrefix(base, "agent-"))
		case isUUID(base):
			f.rest = base + ".jsonl"
		default:
			// Not named after its session (a fixture): name it so.
			f.rest = f.session + ".jsonl"
			if !isUUID(f.session) || byRel[path.Join(dir, f.session+".jsonl")] != nil {
				f.rest = fakeUUID(f.rel) + ".jsonl"
			}
		}
		f.project = projectDir(anchor.cwd, f.rel)
		f.unit = "claude_code/" + anchor.rel
		key := f.project + "/" + f.rest
		if taken[key] {
			return nil, fmt.Errorf("%s: two source files would be copied to %s", f.rel, key)
		}
		taken[key] = true
	}
	for _, f := range s.files {
		for _, sl := range f.slugs {
			w := sl[:strings.IndexByte(sl, '-')]
			if !slices.Contains(s.slugs[w], sl) {
				s.slugs[w] = append(s.slugs[w], sl)
				s.addToken(w, tokSlug)
			}
		}
	}
	return s, nil
}

// addAgentID registers the id-like parts of a subagent id ("a881341",
// "acompact-fffbd0" -> "fffbd0") for rewriting. Only lowercase hex runs of
// 5+ characters are ids; words such as "acompact" are kept.
func (s *source) addAgentID(id string) {
	for _, part := range strings.Split(id, "-") {
		if len(part) >= 5 && len(part) < 64 && allHex(part) {
			s.addToken(part, tokAgent)
		}
	}
}

func (s *source) addToken(t string, k tokenKind) {
	s.tokens[t] |= k
	s.lenMask |= 1 << uint(len(t))
}

// projectDir names a project directory as Claude Code does: the working
// directory with every character but letters and digits replaced by '-'.
func projectDir(cwd, rel string) string {
	if cwd == "" {
		cwd = "/bench/" + strings.SplitN(rel, "/", 2)[0]
	}
	b := []byte(cwd)
	for i, c := range b {
		if !isWord[c] {
			b[i] = '-'
		}
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// Generation

type stats struct {
	bytes, files, plans int64
	replicas            int
	platform            map[string]int64 // bytes written per platform
}

type job struct {
	path  string   // "" when src.out names the file
	data  []byte   // written as is (plans), or
	src   *srcFile // rewritten with rw
	rw    rewriter
	r     int
	mtime time.Time
}

func generate(s *source, out string, limit int64, seed uint64, jobs int) (stats, error) {
	st := stats{platform: map[string]int64{}}
	ch := make(chan job, 2*jobs)
	var (
		wg       sync.WaitGroup
		firstErr error
		errOnce  sync.Once
		failed   atomic.Bool
		written  atomic.Int64
	)
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			dirs := map[string]bool{}
			for j := range ch {
				if failed.Load() {
					continue
				}
				data := j.data
				if j.src != nil {
					buf = append(buf[:0], j.src.data...)
					j.rw.rewrite(buf)
					data = buf
					if j.path == "" {
						rel, err := j.src.out(data, j.r)
						if err != nil {
							errOnce.Do(func() { firstErr = fmt.Errorf("%s: %w", j.src.rel, err) })
							failed.Store(true)
							continue
						}
						j.path = filepath.Join(out, rel)
					}
				}
				if err := writeFile(j.path, data, j.mtime, dirs); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
				}
				written.Add(int64(len(data)))
			}
		}()
	}
	taken := map[string]bool{}
	var total int64
	root := filepath.Join(out, ".claude")
dispatch:
	for r := 0; ; r++ {
		if total >= limit || failed.Load() {
			break
		}
		st.replicas++
		rw, paths := replicaPaths(s, root, seed, r, taken)
		var slugFiles []*srcFile
		for i, f := range s.files {
			if total >= limit && (i == 0 || f.unit != s.files[i-1].unit) {
				break dispatch
			}
			ch <- job{path: paths[i], src: f, rw: rw, r: r, mtime: f.lastTS.Add(rw.shift)}
			total += int64(len(f.data))
			st.platform[cmp.Or(f.platform, claudeCode)] += int64(len(f.data))
			st.files++
			if len(f.slugs) > 0 {
				slugFiles = append(slugFiles, f)
			}
			if r%planEvery == 0 && i == len(s.files)-1 {
				for _, p := range plans(s, rw, root, r, slugFiles) {
					if total >= limit {
						break dispatch
					}
					if taken[p.path] {
						continue
					}
					taken[p.path] = true
					ch <- p
					total += int64(len(p.data))
					st.files++
					st.plans++
				}
			}
		}
	}
	close(ch)
	wg.Wait()
	st.bytes = written.Load()
	if firstErr != nil {
		return st, firstErr
	}
	if st.bytes != total {
		return st, fmt.Errorf("internal error: wrote %d bytes, expected %d", st.bytes, total)
	}
	return st, nil
}

// replicaPaths picks the salt of replica r and the output path of each
// source file. Should a path be taken already (two short subagent ids
// meeting by chance), the replica gets another salt, so ids stay consistent
// within it.
func replicaPaths(s *source, root string, seed uint64, r int, taken map[string]bool) (rewriter, []string) {
	for attempt := uint64(0); ; attempt++ {
		st := seed*0x9e3779b97f4a7c15 + uint64(r)<<20 + attempt
		rw := rewriter{src: s, salt: splitmix(&st), shift: -time.Duration(r) * replicaShift}
		paths := make([]string, len(s.files))
		ok := true
		seen := map[string]bool{}
		for i, f := range s.files {
			if f.out != nil {
				continue // named after rewriting, by fresh ids
			}
			rest := []byte(f.rest)
			rw.rewrite(rest)
			p := filepath.Join(root, "projects", f.project, filepath.FromSlash(string(rest)))
			if taken[p] || seen[p] {
				ok = false
				break
			}
			seen[p] = true
			paths[i] = p
		}
		if ok {
			for _, p := range paths {
				taken[p] = true
			}
			return rw, paths
		}
	}
}

// plans writes a plan file for each slug of the replica, and one for a
// subagent (<slug>-agent-<id>.md) in the first replica, as Claude Code does
// in ~/.claude/plans.
func plans(s *source, rw rewriter, root string, r int, files []*srcFile) []job {
	var out []job
	done := map[string]bool{}
	agentDone := r != 0
	for _, f := range files {
		for _, sl := range f.slugs {
			name := sl
			isAgent := false
			if done[sl] {
				base := strings.TrimSuffix(path.Base(f.rel), ".jsonl")
				if agentDone || !strings.HasPrefix(base, "agent-") {
					continue
				}
				name, isAgent, agentDone = sl+"-"+base, true, true
			}
			done[sl] = true
			b := []byte(name)
			rw.rewrite(b)
			newSlug := []byte(sl)
			rw.rewrite(newSlug)
			out = append(out, job{
				path:  filepath.Join(root, "plans", string(b)+".md"),
				data:  planText(string(newSlug), f.cwd, isAgent, rw.salt),
				mtime: f.lastTS.Add(rw.shift),
			})
		}
	}
	return out
}

var planSteps = []string{
	"Read the code paths involved and list the functions that change.",
	"Write a failing test that reproduces the problem.",
	"Change the parser so that it accepts both layouts.",
	"Move the shared logic into a small helper with its own tests.",
	"Update the command-line flags and their help text.",
	"Run the full test suite and the linters.",
	"Check the output against the golden files and update them on purpose only.",
	"Measure throughput before and after on the benchmark corpus.",
	"Document the behaviour change in the README.",
	"Ask for review and address comments.",
}

func planText(slug, cwd string, agent bool, salt uint64) []byte {
	st := salt ^ xxhash.Sum64String(slug)
	words := strings.Split(slug, "-")
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n", strings.Join(words, " "))
	if agent {
		b.WriteString("Subagent plan, written while exploring the code base.\n\n")
	}
	fmt.Fprintf(&b, "## Context\n\nWorking in `%s`. The current behaviour is wrong for some inputs; this plan fixes it without changing the public interface.\n\n## Steps\n\n", cwd)
	n := 3 + int(splitmix(&st)%6)
	for i := range n {
		fmt.Fprintf(&b, "%d. %s\n", i+1, planSteps[splitmix(&st)%uint64(len(planSteps))])
	}
	b.WriteString("\n## Verification\n\n- `go test ./...` passes\n- the benchmark shows no regression\n")
	return []byte(b.String())
}

func writeFile(p string, data []byte, mtime time.Time, dirs map[string]bool) error {
	if d := filepath.Dir(p); !dirs[d] {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		dirs[d] = true
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	if !mtime.IsZero() {
		return os.Chtimes(p, mtime, mtime)
	}
	return nil
}
