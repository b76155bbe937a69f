package ccusage_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
)

// tolerance is the largest relative cost difference accepted, as for the
// daily parity (parity.sh's PARITY_TOLERANCE).
const tolerance = 0.005

// ccusageBin installs ccusage 20.0.24 as parity.sh does (once, into the
// user's cache) and returns its native binary, or skips.
func ccusageBin(t *testing.T) string {
	t.Helper()
	if os.Getenv("CCUSAGE_BIN") == "" {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("skipped: npm is not installed, so ccusage cannot be installed (apt-get install npm, or set CCUSAGE_BIN)")
		}
	}
	out, err := exec.Command("bash", "install.sh").Output()
	if err != nil {
		t.Skipf("skipped: ccusage could not be installed from the npm registry: %v", err)
	}
	return strings.TrimSpace(string(out))
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// posBin builds pos-extract, pos-normalize, pos-load and pos-query once
// for the tests of this file.
func posBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "pos-blocks-bin")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+"/", "../../cmd/pos-extract", "../../cmd/pos-normalize", "../../cmd/pos-load", "../../cmd/pos-query")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			binErr = err
			t.Log(out.String())
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// claudeConfig makes a CLAUDE_CONFIG_DIR of a corpus folder, as
// parity.sh does: the folder is one project.
func claudeConfig(t *testing.T, dir string) string {
	t.Helper()
	cfg := t.TempDir()
	if err := os.CopyFS(filepath.Join(cfg, "projects", filepath.Base(dir)), os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// loadLake builds a lake of the Claude Code folder cfg with pos's
// pipeline.
func loadLake(t *testing.T, bin, cfg string) string {
	t.Helper()
	lake := filepath.Join(t.TempDir(), "lake")
	cmd := exec.Command("bash", "-o", "pipefail", "-c", `"$B/pos-extract" --platform claude_code --root "$CFG/projects" --full -q | "$B/pos-normalize" -q | "$B/pos-load" --lake "$LAKE" -q`)
	cmd.Env = append(os.Environ(), "B="+bin, "CFG="+cfg, "LAKE="+lake)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("loading %s: %v\n%s", cfg, err, out)
	}
	return lake
}

type jsonBlock struct {
	ID          string  `json:"id"`
	StartTime   string  `json:"startTime"`
	EndTime     string  `json:"endTime"`
	IsActive    bool    `json:"isActive"`
	IsGap       bool    `json:"isGap"`
	TotalTokens int64   `json:"totalTokens"`
	CostUSD     float64 `json:"costUSD"`
	TokenCounts struct {
		Input         int64 `json:"inputTokens"`
		Output        int64 `json:"outputTokens"`
		CacheCreation int64 `json:"cacheCreationInputTokens"`
		CacheRead     int64 `json:"cacheReadInputTokens"`
	} `json:"tokenCounts"`
	BurnRate *struct {
		CostPerHour     float64 `json:"costPerHour"`
		TokensPerMinute float64 `json:"tokensPerMinute"`
	} `json:"burnRate"`
	Projection *struct {
		TotalTokens      int64   `json:"totalTokens"`
		TotalCost        float64 `json:"totalCost"`
		RemainingMinutes int64   `json:"remainingMinutes"`
	} `json:"projection"`
}

func runBlocks(t *testing.T, cmd *exec.Cmd) []jsonBlock {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
	}
	var doc struct{ Blocks []jsonBlock }
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return doc.Blocks
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) < 1e-9
}

func parseJSTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// compareBlocks requires the same blocks: each block's start and end
// equal, its tokens equal and its cost within tolerance. A gap's bounds
// are a message's time plus 5 hours and the next message's time: pos
// times a message by its first line, ccusage by the line whose usage it
// keeps (the last), so a gap's bounds may differ by the seconds a
// message took to write; one minute is allowed.
func compareBlocks(t *testing.T, name string, cc, pos []jsonBlock) {
	t.Helper()
	if len(cc) != len(pos) {
		t.Fatalf("%s: ccusage has %d blocks, pos %d", name, len(cc), len(pos))
	}
	for i, c := range cc {
		p := pos[i]
		if c.IsGap != p.IsGap || c.IsActive != p.IsActive {
			t.Errorf("%s: block %d: ccusage gap=%v active=%v, pos gap=%v active=%v", name, i, c.IsGap, c.IsActive, p.IsGap, p.IsActive)
			continue
		}
		slack := time.Duration(0)
		if c.IsGap {
			slack = time.Minute
		}
		for _, b := range []struct{ what, c, p string }{{"start", c.StartTime, p.StartTime}, {"end", c.EndTime, p.EndTime}} {
			if d := parseJSTime(t, b.c).Sub(parseJSTime(t, b.p)).Abs(); d > slack {
				t.Errorf("%s: block %d: %s %s (ccusage) against %s (pos)", name, i, b.what, b.c, b.p)
			}
		}
		if c.TokenCounts != p.TokenCounts || c.TotalTokens != p.TotalTokens {
			t.Errorf("%s: block %s: tokens %+v (ccusage) against %+v (pos)", name, c.ID, c.TokenCounts, p.TokenCounts)
		}
		if !near(c.CostUSD, p.CostUSD, tolerance) {
			t.Errorf("%s: block %s: cost %.6f (ccusage) against %.6f (pos)", name, c.ID, c.CostUSD, p.CostUSD)
		}
	}
}

// TestBlocksParity runs `ccusage claude blocks --json --offline` and
// `pos-query blocks --json` on every Claude folder of the corpus, each
// alone and all together, and requires the same blocks.
func TestBlocksParity(t *testing.T) {
	cc := ccusageBin(t)
	corpus.Platform(t, claudecode.Name)
	bin := posBin(t)
	root := filepath.Join(corpus.Path(), "claude")
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	cfgs := map[string]string{}
	for _, d := range dirs {
		cfgs["claude/"+filepath.Base(d)] = claudeConfig(t, d)
	}
	all := t.TempDir()
	for _, d := range dirs {
		if err := os.CopyFS(filepath.Join(all, "projects", filepath.Base(d)), os.DirFS(d)); err != nil {
			t.Fatal(err)
		}
	}
	cfgs["claude"] = all
	total := 0
	for name, cfg := range cfgs {
		ccCmd := exec.Command(cc, "claude", "blocks", "--json", "--offline")
		ccCmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+cfg)
		want := runBlocks(t, ccCmd)
		got := runBlocks(t, exec.Command(filepath.Join(bin, "pos-query"), "blocks", "--json", "--lake", loadLake(t, bin, cfg)))
		compareBlocks(t, name, want, got)
		if name == "claude" {
			total = len(want)
		}
	}
	if total < 10 {
		t.Errorf("the whole corpus makes %d blocks; the test means little under 10", total)
	}
}

var timestampRE = regexp.MustCompile(`"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"`)

// shiftedSession copies a corpus session and its subagents into a new
// Claude folder, every timestamp moved so that its last message was
// written ago before now: then it has an active block, and today's cost.
func shiftedSession(t *testing.T, session string, ago time.Duration) string {
	t.Helper()
	src := filepath.Join(corpus.Path(), "claude", "spotter")
	files, _ := filepath.Glob(filepath.Join(src, session, "subagents", "*.jsonl"))
	files = append(files, filepath.Join(src, session+".jsonl"))
	var last time.Time
	texts := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = b
		for _, m := range timestampRE.FindAllSubmatch(b, -1) {
			if ts := parseJSTime(t, string(m[1])); ts.After(last) {
				last = ts
			}
		}
	}
	delta := time.Now().Add(-ago).Sub(last).Truncate(time.Millisecond)
	cfg := t.TempDir()
	for f, b := range texts {
		rel, _ := filepath.Rel(src, f)
		dst := filepath.Join(cfg, "projects", "p", rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		out := timestampRE.ReplaceAllFunc(b, func(m []byte) []byte {
			ts := parseJSTime(t, string(timestampRE.FindSubmatch(m)[1])).Add(delta)
			return []byte(`"timestamp":"` + ts.UTC().Format("2006-01-02T15:04:05.000Z") + `"`)
		})
		if err := os.WriteFile(dst, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// statuslineRE reads the figures of a status line.
var statuslineRE = regexp.MustCompile(`^🤖 (.*) \| 💰 (\S+) session / \$(\S+) today / (?:\$(\S+) block \((?:(\d+)h )?(\d+)m left\)|No active block)(?: \| 🔥 \$(\S+)/hr)? \| 🧠 (.*)\n$`)

// TestStatuslineParity gives `ccusage statusline` and `pos-query
// statusline` the same statusline JSON, on a corpus session moved to end
// 20 minutes ago (so it has an active block and costs today), and
// requires the same figures: model, session, today's and the block's
// costs, minutes left, burn rate and context.
func TestStatuslineParity(t *testing.T) {
	cc := ccusageBin(t)
	corpus.Platform(t, claudecode.Name)
	bin := posBin(t)
	const session = "258c7280-ae70-4798-800f-63464d01a85d"
	cfg := shiftedSession(t, session, 20*time.Minute)
	lake := loadLake(t, bin, cfg)
	transcript := filepath.Join(cfg, "projects", "p", session+".jsonl")
	for _, in := range []string{
		`{"session_id":"` + session + `","transcript_path":"` + transcript + `","cwd":"/tmp","model":{"id":"claude-opus-4-6","display_name":"Opus 4.6"},"workspace":{"current_dir":"/tmp","project_dir":"/tmp"},"version":"2.1.39","context_window":{"total_input_tokens":50000,"context_window_size":200000}}`,
		`{"session_id":"` + session + `","transcript_path":"` + transcript + `","model":{"id":"claude-opus-4-6","display_name":"Opus"},"cost":{"total_cost_usd":1.234},"context_window":{"total_input_tokens":123456,"context_window_size":1000000}}`,
		`{"session_id":"another","transcript_path":"/nonexistent.jsonl","model":{"id":"claude-opus-4-6","display_name":"Opus"},"context_window":{"total_input_tokens":0,"context_window_size":200000}}`,
	} {
		run := func(cmd *exec.Cmd) []string {
			cmd.Stdin = strings.NewReader(in)
			cmd.Env = append(os.Environ(), "TZ=UTC", "CLAUDE_CONFIG_DIR="+cfg)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
			}
			m := statuslineRE.FindStringSubmatch(string(out))
			if m == nil {
				t.Fatalf("%s: unexpected line %q", cmd, out)
			}
			return m[1:]
		}
		want := run(exec.Command(cc, "statusline", "--offline", "--no-cache"))
		got := run(exec.Command(filepath.Join(bin, "pos-query"), "statusline", "--lake", lake))
		t.Logf("ccusage: %q\npos:     %q", want, got)
		names := []string{"model", "session", "today", "block", "hours left", "minutes left", "burn rate", "context"}
		for i := range want {
			w, g := want[i], got[i]
			switch names[i] {
			case "session", "today", "block", "burn rate":
				wv, _ := strconv.ParseFloat(strings.TrimPrefix(w, "$"), 64)
				gv, _ := strconv.ParseFloat(strings.TrimPrefix(g, "$"), 64)
				// Figures print to the cent: allow a cent beside the tolerance.
				if (w == "") != (g == "") || !near(wv, gv, tolerance) && math.Abs(wv-gv) > 0.011 {
					t.Errorf("%s: ccusage %q, pos %q", names[i], w, g)
				}
			case "minutes left":
				wv, _ := strconv.Atoi(w)
				gv, _ := strconv.Atoi(g)
				if (w == "") != (g == "") || abs(wv-gv) > 1 && abs(wv-gv) != 59 {
					t.Errorf("%s: ccusage %q, pos %q", names[i], w, g)
				}
			case "hours left":
				// The two run a few seconds apart: an hour can turn between.
				wv, _ := strconv.Atoi(w)
				gv, _ := strconv.Atoi(g)
				if abs(wv-gv) > 1 {
					t.Errorf("%s: ccusage %q, pos %q", names[i], w, g)
				}
			default:
				if w != g {
					t.Errorf("%s: ccusage %q, pos %q", names[i], w, g)
				}
			}
		}
		if want[3] == "" {
			t.Errorf("no active block on the shifted session: the test means little")
		}
	}
	// The active block, in blocks --json too.
	ccCmd := exec.Command(cc, "claude", "blocks", "--json", "--offline", "--active")
	ccCmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+cfg)
	want := runBlocks(t, ccCmd)
	got := runBlocks(t, exec.Command(filepath.Join(bin, "pos-query"), "blocks", "--json", "--active", "--lake", lake))
	compareBlocks(t, "active", want, got)
	if len(want) == 1 && len(got) == 1 {
		w, g := want[0], got[0]
		if w.BurnRate == nil || g.BurnRate == nil || !near(w.BurnRate.CostPerHour, g.BurnRate.CostPerHour, tolerance) ||
			w.Projection == nil || g.Projection == nil || !near(float64(w.Projection.TotalTokens), float64(g.Projection.TotalTokens), tolerance) {
			t.Errorf("active block: burn rate or projection differ: ccusage %+v %+v, pos %+v %+v", w.BurnRate, w.Projection, g.BurnRate, g.Projection)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
