package serve_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/testlake"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/serve"
)

var updateShot = flag.Bool("update-screenshot", false, "write the charts page's screenshot to docs/serve.png")

// chromium is the headless browser the page tests drive: $POS_CHROMIUM,
// else Debian's chromium on the PATH; the tests skip without one.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("POS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("skipped: no Chromium (apt-get install chromium, or set POS_CHROMIUM): the page tests need a real browser")
	return ""
}

// browser starts a headless Chromium for the rest of the test.
func browser(t *testing.T) context.Context {
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1200, 900), chromedp.Flag("lang", "en-US"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("skipped: Chromium at %s does not start: %v", path, err)
	}
	return ctx
}

// do runs steps in the browser, failing the test past a deadline.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// val runs an action in the browser and returns its value.
func val[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func css(s string) chromedp.CSS { return chromedp.CSS(s) }

var space = regexp.MustCompile(`\s+`)

func squash(s string) string { return strings.TrimSpace(space.ReplaceAllString(s, " ")) }

// visiblePrompts are the texts of the prompts a page shows: those laid
// out, not inside a closed <details>.
const visiblePrompts = `Array.from(document.querySelectorAll('.prompt .text'))
  .filter(e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')
  .map(e => e.innerText)`

// checkPrompts fails the test unless the page shows every prompt of
// want (texts compared with their white space squashed).
func checkPrompts(t *testing.T, ctx context.Context, page string, want []string) {
	t.Helper()
	do(t, ctx, chromedp.Navigate(page), chromedp.WaitReady(css("main")))
	shown := val(t, ctx, chromedp.Evaluate[[]string](visiblePrompts))
	seen := map[string]bool{}
	for _, s := range shown {
		seen[squash(s)] = true
	}
	for _, p := range want {
		if !seen[squash(p)] {
			t.Errorf("%s: the prompt %.80q is not shown", page, p)
		}
	}
}

// TestBrowser serves a lake of the real corpus's Claude Code sessions and
// reads its pages in headless Chromium: the list, every session's
// transcript (served, and exported as a file), search as you type and
// the charts, whose screenshot must not be blank.
func TestBrowser(t *testing.T) {
	dir := corpus.Platform(t, "claude_code")
	ctx := browser(t)
	lake := filepath.Join(t.TempDir(), "lake")
	start := time.Now()
	if err := testlake.Embedded(context.Background(), dir, lake, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus lake built in %v", time.Since(start).Round(time.Millisecond))
	db, err := query.Open(context.Background(), lake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := serve.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Serve(sctx, l, db, serve.Options{Platforms: platforms.Names()}) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + l.Addr().String()

	sessions, err := db.Sessions(context.Background(), query.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) < 3 {
		t.Fatalf("the corpus lake has %d sessions", len(sessions))
	}

	t.Run("list", func(t *testing.T) {
		const count = `document.querySelectorAll('#sessions tr.session').length`
		do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#sessions")))
		rows := val(t, ctx, chromedp.Evaluate[int](count))
		title := val(t, ctx, chromedp.Text(css("#sessions tr.session td:nth-child(2) a")))
		if rows != len(sessions) {
			t.Errorf("the list shows %d sessions, the lake has %d", rows, len(sessions))
		}
		if want := sessions[0].Title; want != "" && !strings.HasPrefix(want, strings.TrimSuffix(title, "…")) {
			t.Errorf("first title %q, want %q", title, want)
		}
		// A filter narrows the list.
		do(t, ctx, chromedp.Navigate(base+"/?project="+url.QueryEscape("spotter-gqc")), chromedp.WaitVisible(css("#sessions")))
		rows = val(t, ctx, chromedp.Evaluate[int](count))
		if rows < 1 || rows >= len(sessions) {
			t.Errorf("project spotter-gqc: %d sessions of %d", rows, len(sessions))
		}
	})

	t.Run("transcripts", func(t *testing.T) {
		files := t.TempDir()
		checked := 0
		for _, s := range sessions {
			tab, err := db.SQL(context.Background(), `SELECT prompt FROM exchanges WHERE platform = ? AND session_id = ? AND prompt <> '' ORDER BY ts`,
				s.Platform, s.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			var prompts []string
			for _, r := range tab.Rows {
				prompts = append(prompts, r[0].(string))
			}
			checked += len(prompts)
			checkPrompts(t, ctx, base+"/session/"+s.Platform+"/"+s.SessionID, prompts)

			// The same transcript exported as a file, opened offline.
			tr, err := db.Transcript(context.Background(), query.TranscriptOptions{Session: s.SessionID, Platform: s.Platform})
			if err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := query.TranscriptHTML(&page, query.TranscriptPage{T: tr}); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(files, s.SessionID+".html")
			if err := os.WriteFile(file, page.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			checkPrompts(t, ctx, "file://"+file, prompts)
		}
		if checked < 10 {
			t.Errorf("only %d prompts checked", checked)
		}
		t.Logf("%d prompts of %d sessions shown, served and exported", checked, len(sessions))
	})

	t.Run("search as you type", func(t *testing.T) {
		const word = "annotation"
		do(t, ctx, chromedp.Navigate(base+"/search"), chromedp.WaitVisible(css("#q")),
			chromedp.SendKeys(css("#q"), word)) // typed, never submitted
		// Each key may show the hits of the word so far: wait for the
		// whole word's, then read the page at once.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('hits').dataset.q === '`+word+
			`' && document.querySelectorAll('#hits .hit').length > 0`, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			t.Fatalf("no hits shown for %q as it was typed: %v", word, err)
		}
		type shown struct {
			Hits   int    `json:"hits"`
			Status string `json:"status"`
			First  string `json:"first"`
			Loc    string `json:"loc"`
		}
		got := val(t, ctx, chromedp.Evaluate[shown](`({hits: document.querySelectorAll('#hits .hit').length,
  status: document.getElementById('status').textContent, first: document.querySelector('#hits .hit mark').textContent,
  loc: location.href})`))
		hits, status, first, loc := got.Hits, got.Status, got.First, got.Loc
		if hits == 0 || status != fmt.Sprintf("%d hits", hits) {
			t.Errorf("%d hits, status %q", hits, status)
		}
		if !strings.Contains(strings.ToLower(first), word) {
			t.Errorf("the first hit marks %q", first)
		}
		if !strings.HasSuffix(loc, "/search?q="+word) {
			t.Errorf("location %s", loc)
		}
		// A hit opens its session's transcript.
		do(t, ctx, chromedp.Click(css("#hits .hit a")), chromedp.WaitVisible(css("#title")))
		h1 := val(t, ctx, chromedp.Text(css("#title")))
		if h1 == "" {
			t.Error("the hit's link opened no transcript")
		}
	})

	t.Run("charts", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(base+"/charts"), chromedp.WaitVisible(css("#per-platform svg")))
		bars := val(t, ctx, chromedp.Evaluate[map[string]int](
			`Object.fromEntries(Array.from(document.querySelectorAll('.chart')).map(c => [c.id, c.querySelectorAll('svg rect.bar').length]))`))
		shot := val(t, ctx, chromedp.CaptureScreenshot())
		for _, id := range []string{"tokens-per-day", "cost-per-day", "per-project", "per-platform"} {
			if bars[id] == 0 {
				t.Errorf("chart %s has no bars (%v)", id, bars)
			}
		}
		colours, share := pixels(t, shot)
		t.Logf("screenshot: %d bytes, %d colours, %.1f%% of its pixels not the background", len(shot), colours, 100*share)
		if colours < 64 || share < 0.10 {
			t.Errorf("the screenshot looks blank: %d colours, %.1f%% not the background", colours, 100*share)
		}
		// The chart of tokens per day alone: its bars are drawn.
		chart := val(t, ctx, chromedp.Screenshot(css("#tokens-per-day svg"), chromedp.NodeVisible))
		if colours, share := pixels(t, chart); colours < 8 || share < 0.02 {
			t.Errorf("the tokens chart looks empty: %d colours, %.1f%% drawn", colours, 100*share)
		}
		if *updateShot {
			if err := os.WriteFile(filepath.Join("..", "docs", "serve.png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// pixels decodes a PNG and counts its distinct colours and the share of
// its pixels that differ from the most common one (the background).
func pixels(t *testing.T, b []byte) (int, float64) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[color.RGBA]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	most, total := 0, r.Dx()*r.Dy()
	for _, n := range counts {
		most = max(most, n)
	}
	if total == 0 {
		return 0, 0
	}
	return len(counts), float64(total-most) / float64(total)
}
