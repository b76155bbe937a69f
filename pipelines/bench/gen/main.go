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
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
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

	"github.com/pos-lake/pos/extract/claudecode"
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
	platforms := fl.String("platforms", "claude_code,codex,gemini,aider", "platforms to generate, comma-separated (claude_code, codex, gemini, aider)")
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
		if _, ok := otherPlatforms[p]; !ok && p != "claude_code" {
			return usageError{fmt.Errorf("--platforms: unknown platform %q", p)}
		}
		plats[p] = true
	}
	s := &source{tokens: map[string]tokenKind{}, slugs: map[string][]string{}}
	if plats["claude_code"] {
		if s, err = load(*src); err != nil {
			return err
		}
	}
	if *corpus == "" {
		*corpus = filepath.Dir(filepath.Clean(*src))
	}
	for _, p := range slices.Sorted(maps.Keys(plats)) {
		if p != "claude_code" {
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
			st.platform[cmp.Or(f.platform, "claude_code")] += int64(len(f.data))
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

// ---------------------------------------------------------------------------
// The byte-level rewriter

// rewriter replaces ids and shifts timestamps in place. The replacement of
// an id is a hash of the id and salt, so the same id becomes the same new
// id wherever it occurs under one salt (one replica).
type rewriter struct {
	src      *source
	salt     uint64
	shift    time.Duration
	keep     map[string]bool   // UUIDs left alone
	override map[string]string // UUIDs replaced by given ones
}

var isWord, isHex [256]bool

func init() {
	for c := '0'; c <= '9'; c++ {
		isWord[c], isHex[c] = true, true
	}
	for c := 'a'; c <= 'z'; c++ {
		isWord[c] = true
		isWord[c-'a'+'A'] = true
	}
	for c := 'a'; c <= 'f'; c++ {
		isHex[c] = true
	}
}

// rewrite scans b for runs of letters and digits and looks at what follows
// each run: "-" may end the first group of a UUID or the year of a
// timestamp, "_" may end the prefix of a toolu_/msg_/req_ id; the run itself
// may be a known subagent id or the first word of a known slug.
func (rw *rewriter) rewrite(b []byte) {
	n := len(b)
	for i := 0; i < n; {
		if !isWord[b[i]] {
			i++
			continue
		}
		j := i + 1
		for j < n && isWord[b[j]] {
			j++
		}
		if j < n {
			switch b[j] {
			case '-':
				if j-i >= 8 && isUUIDAt(b, j-8) {
					rw.uuid(b[j-8 : j+28])
					i = j + 28
					continue
				}
				if j-i >= 4 && rw.shift != 0 && isTimestampAt(b, j-4) {
					rw.timestamp(b[j-4 : j+9])
					i = j + 9
					continue
				}
			case '_':
				if k := idSuffixEnd(b, i, j); k > 0 {
					rw.fill(b[j+3:k], b[j+1:k], alnum, 0)
					i = k
					continue
				}
			}
		}
		if l := j - i; l < 64 && rw.src != nil && rw.src.lenMask&(1<<uint(l)) != 0 {
			if k, ok := rw.src.tokens[string(b[i:j])]; ok {
				if k&tokSlug != 0 {
					if e := rw.slug(b, i, j); e > 0 {
						i = e
						continue
					}
				}
				if k&tokAgent != 0 {
					rw.agentID(b[i:j])
				}
			}
		}
		i = j
	}
}

const (
	hexDigits = "0123456789abcdef"
	alnum     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	digits    = "0123456789"
)

// fill overwrites dst with characters from alphabet drawn from a stream
// seeded by the hash of key.
func (rw *rewriter) fill(dst, key []byte, alphabet string, tag uint64) {
	st := xxhash.Sum64(key) ^ rw.salt ^ tag
	for i := range dst {
		dst[i] = alphabet[splitmix(&st)%uint64(len(alphabet))]
	}
}

func (rw *rewriter) uuid(u []byte) {
	if rw.keep[string(u)] {
		return
	}
	if o, ok := rw.override[string(u)]; ok {
		copy(u, o)
		return
	}
	st := xxhash.Sum64(u) ^ rw.salt
	var x uint64
	nibbles := 0
	for i := range u {
		if u[i] == '-' {
			continue
		}
		if nibbles%16 == 0 {
			x = splitmix(&st)
		}
		u[i] = hexDigits[x&15]
		x >>= 4
		nibbles++
	}
	u[14] = '4'                       // version 4
	u[19] = "89ab"[xxhash.Sum64(u)&3] // RFC 4122 variant
}

// agentID replaces a subagent id, keeping its first character ('a' in
// v2.1 ids) and, when it is all digits, keeping it all digits so that it
// stays valid wherever it occurs.
func (rw *rewriter) agentID(t []byte) {
	alphabet := hexDigits
	if allDigits(t) {
		alphabet = digits
	}
	rw.fill(t[1:], t, alphabet, 0xa9e4)
}

// slug replaces a whole slug starting at b[i:j] (its first word) by
// pronounceable words of the same lengths; it returns the end, or 0 if no
// known slug starts there.
func (rw *rewriter) slug(b []byte, i, j int) int {
	for _, sl := range rw.src.slugs[string(b[i:j])] {
		e := i + len(sl)
		if e > len(b) || string(b[i:e]) != sl || (e < len(b) && isWord[b[e]]) {
			continue
		}
		st := xxhash.Sum64String(sl) ^ rw.salt ^ 0x5109
		vowel := splitmix(&st)&1 == 0
		for k := i; k < e; k++ {
			if b[k] == '-' {
				vowel = splitmix(&st)&1 == 0
				continue
			}
			x := splitmix(&st)
			if vowel {
				b[k] = "aeiou"[x%5]
			} else {
				b[k] = "bcdfghjklmnprstvwz"[x%18]
			}
			vowel = !vowel
		}
		return e
	}
	return 0
}

// timestamp shifts "YYYY-MM-DDTHH" by whole hours: minutes, seconds and
// fractions stay as they are.
func (rw *rewriter) timestamp(t []byte) {
	num := func(s []byte) int {
		v := 0
		for _, c := range s {
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h := num(t[0:4]), num(t[5:7]), num(t[8:10]), num(t[11:13])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 {
		return
	}
	tt := time.Date(y, time.Month(mo), d, h, 0, 0, 0, time.UTC).Add(rw.shift)
	if tt.Year() < 1000 || tt.Year() > 9999 {
		return
	}
	put := func(dst []byte, v int) {
		for k := len(dst) - 1; k >= 0; k-- {
			dst[k] = byte('0' + v%10)
			v /= 10
		}
	}
	put(t[0:4], tt.Year())
	put(t[5:7], int(tt.Month()))
	put(t[8:10], tt.Day())
	put(t[11:13], tt.Hour())
}

// isUUIDAt: b[p:] starts with a lowercase 8-4-4-4-12 UUID not followed by
// another letter or digit.
func isUUIDAt(b []byte, p int) bool {
	if p+36 > len(b) || (p+36 < len(b) && isWord[b[p+36]]) {
		return false
	}
	for k := range 36 {
		c := b[p+k]
		if k == 8 || k == 13 || k == 18 || k == 23 {
			if c != '-' {
				return false
			}
		} else if !isHex[c] {
			return false
		}
	}
	return true
}

// isTimestampAt: b[p:] starts with "dddd-dd-ddTdd:dd:dd", with a space
// instead of T (Aider's local times) or dashes instead of colons (Codex's
// and Gemini CLI's file names) allowed.
func isTimestampAt(b []byte, p int) bool {
	const pat = "dddd-dd-ddTdd:dd:dd"
	if p+len(pat) > len(b) {
		return false
	}
	for k := range len(pat) {
		c := b[p+k]
		switch {
		case pat[k] == 'd':
			if c < '0' || c > '9' {
				return false
			}
		case k == 10:
			if c != 'T' && c != ' ' {
				return false
			}
		case k == 16:
			if c != b[p+13] {
				return false
			}
		case k == 13:
			if c != ':' && c != '-' {
				return false
			}
		case c != pat[k]:
			return false
		}
	}
	return true
}

// idSuffixEnd: the run b[i:j] ends in toolu, msg or req, b[j] is '_' and
// a run of 16+ letters and digits follows; it returns the end of that run.
func idSuffixEnd(b []byte, i, j int) int {
	run := b[i:j]
	if !bytes.HasSuffix(run, []byte("toolu")) && !bytes.HasSuffix(run, []byte("msg")) && !bytes.HasSuffix(run, []byte("req")) {
		return 0
	}
	k := j + 1
	for k < len(b) && isWord[b[k]] {
		k++
	}
	if k-(j+1) < 16 {
		return 0
	}
	return k
}

// ---------------------------------------------------------------------------
// --append: grow an existing home

func grow(home string, fraction float64, seed uint64, stdout io.Writer) error {
	start := time.Now()
	projects := filepath.Join(home, ".claude", "projects")
	type sess struct {
		path  string
		lines int
	}
	var files []sess
	total := 0
	var now time.Time // the home's latest time: when the appended lines are written
	err := filepath.WalkDir(projects, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "subagents" {
				return filepath.SkipDir
			}
			return nil
		}
		if base := strings.TrimSuffix(d.Name(), ".jsonl"); base == d.Name() || !isUUID(base) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n := bytes.Count(b, []byte{'\n'})
		if n > 0 {
			files = append(files, sess{p, n})
			total += n
		}
		if last := lastTimestamp(b); last.After(now) {
			now = last
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no session files under %s", projects)
	}
	want := max(1, int(float64(total)*fraction+0.5))
	// About a tenth of the sessions grow, each by a tenth (scaled by
	// fraction) of its lines: most files stay unchanged, as in real use.
	per := min(1, fraction*10)
	rng := rand.New(rand.NewPCG(seed, 0x6170706e64))
	rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	added, grown, addedBytes := 0, 0, 0
	for pass := 0; added < want; pass++ {
		for _, f := range files {
			if added >= want {
				break
			}
			k := min(want-added, max(1, int(float64(f.lines)*per+0.5)))
			// Sessions resumed one after another, from an hour after the
			// home's latest line: new lines are dated when they are
			// written, whatever day their session started.
			n, err := appendLines(f.path, k, seed, pass, now.Add(time.Hour+time.Duration(grown)*2*time.Minute))
			if err != nil {
				return err
			}
			added += k
			addedBytes += n
			grown++
		}
	}
	fmt.Fprintf(stdout, "gen: appended %d lines (%s, %d bytes) to %d of %d session files (%d lines before); %.1fs\n",
		added, humanize.Bytes(uint64(addedBytes)), addedBytes, grown, len(files), total, time.Since(start).Seconds())
	return nil
}

// appendLines appends k lines copied from the file itself: a block starting
// at a prompt, with fresh ids except the session id, timestamps moved to
// start at at (at the hour; past the file's last one in any case), and its
// first line chained to the file's last line.
func appendLines(p string, k int, seed uint64, pass int, at time.Time) (int, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	lines := bytes.SplitAfter(b, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	k = min(k, len(lines))
	start := len(lines) - k
	for i := start; i >= 0; i-- {
		if claudecode.IsPrompt(lines[i]) {
			start = i
			break
		}
	}
	block := bytes.Clone(bytes.Join(lines[start:start+k], nil))
	if block[len(block)-1] != '\n' {
		block = append(block, '\n')
	}
	session := strings.TrimSuffix(filepath.Base(p), ".jsonl")
	st := seed ^ xxhash.Sum64String(p) ^ uint64(pass)<<32
	rw := rewriter{salt: splitmix(&st), keep: map[string]bool{session: true}, override: map[string]string{}}
	if parent := firstValue(lines[start], `"parentUuid":"`); isUUID(parent) {
		if last := lastValue(b, `"uuid":"`); isUUID(last) {
			rw.override[parent] = last
		}
	}
	last, first := lastTimestamp(b), firstTimestamp(block)
	if at.Before(last) {
		at = last
	}
	rw.shift = time.Hour
	if !first.IsZero() && at.After(first) {
		// Whole hours, as the rewriter moves times.
		rw.shift = at.Sub(first).Truncate(time.Hour) + time.Hour
	}
	rw.rewrite(block)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		block = append([]byte{'\n'}, block...)
	}
	_, err = f.Write(block)
	return len(block), errors.Join(err, f.Close())
}

// ---------------------------------------------------------------------------
// Small helpers

func splitmix(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func isUUID(s string) bool { return len(s) == 36 && isUUIDAt([]byte(s), 0) }

// fakeUUID is a UUID for a source file whose session has none.
func fakeUUID(key string) string {
	u := []byte("00000000-0000-0000-0000-000000000000")
	rw := rewriter{salt: xxhash.Sum64String(key)}
	rw.uuid(u)
	return string(u)
}

func allHex(s string) bool {
	for i := range len(s) {
		if !isHex[s[i]] {
			return false
		}
	}
	return true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isSlug(s string) bool {
	if !strings.Contains(s, "-") || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") {
		return false
	}
	for i := range len(s) {
		if c := s[i]; c != '-' && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// firstValue returns the string after the first occurrence of key (which
// ends with an opening quote), up to the closing quote; escapes are kept.
func firstValue(b []byte, key string) string {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return ""
	}
	return valueAt(b, i+len(key))
}

func lastValue(b []byte, key string) string {
	i := bytes.LastIndex(b, []byte(key))
	if i < 0 {
		return ""
	}
	return valueAt(b, i+len(key))
}

func valueAt(b []byte, i int) string {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return string(b[i:j])
		case '\n':
			return ""
		}
	}
	return ""
}

func allValues(b []byte, key string) []string {
	var out []string
	seen := map[string]bool{}
	for {
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			return out
		}
		b = b[i+len(key):]
		if v := valueAt(b, 0); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
}

func timestamps(b []byte, f func(time.Time)) {
	const key = `"timestamp":"`
	for {
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			return
		}
		b = b[i+len(key):]
		if t, err := time.Parse(time.RFC3339Nano, valueAt(b, 0)); err == nil {
			f(t)
		}
	}
}

func lastTimestamp(b []byte) time.Time {
	var last time.Time
	timestamps(b, func(t time.Time) {
		if t.After(last) {
			last = t
		}
	})
	return last
}

func firstTimestamp(b []byte) time.Time {
	var first time.Time
	timestamps(b, func(t time.Time) {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	})
	return first
}
