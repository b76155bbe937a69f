package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/urfave/cli/v2"
)

var lake string

// testDir holds the fixture lake and whatever else the tests build; it is
// removed at the end.
var testDir string

func TestMain(m *testing.M) { clitest.Main(m, "pos-query", main, fixtureLake) }

// fixtureLake builds the lake the tests read and returns what removes it.
func fixtureLake() func() {
	dir, err := os.MkdirTemp("", "pos-query-test-")
	if err != nil {
		panic(err)
	}
	testDir = dir
	if lake, err = querytest.FixtureLake(context.Background(), dir); err != nil {
		panic(err)
	}
	return func() { os.RemoveAll(dir) }
}

func run(stdin string, args ...string) (code int, stdout, stderr string) {
	return clitest.Call(newApp(), stdin, args...)
}

func TestCLI(t *testing.T) {
	const (
		a = "11111111-1111-4111-8111-111111111111"
		b = "22222222-2222-4222-8222-222222222222"
	)
	for _, tc := range []clitest.Case{
		{Name: "sessions ndjson by default when piped", Args: []string{"sessions", "--lake", lake},
			Stdout: `(?s)^\{"last_ts":"2026-03-03T12:00:03Z","first_ts":"2026-03-03T12:00:00Z","platform":"claude_code","session_id":"` + b +
				`","title":"Explain the build".*\n\{.*"session_id":"` + a + `".*\n\{.*\n$`},
		{Name: "sessions table", Args: []string{"sessions", "--lake", lake, "--format", "table", "--width", "140", "--project", "beta"},
			Stdout: `^LAST ACTIVE +SESSION +PLATFORM +TURNS +OUT TOKENS +PROJECT +TITLE\n[0-9-]{10} [0-9:]{5} \([0-9a-z ]+ ago\) +` + b + ` +claude_code +1 +200 +/home/dev/beta +Explain the build\n$`},
		{Name: "sessions limit asked for: no note", Args: []string{"sessions", "--lake", lake, "-f", "table", "--limit", "1"},
			Stderr: `^$`},
		{Name: "platform alias", Args: []string{"stats", "--lake", lake, "--platform", "claude", "--by", "platform", "-f", "csv"},
			Stdout: `claude_code,`},
		{Name: "unknown platform", Args: []string{"stats", "--lake", lake, "--platform", "vim"}, Code: 2,
			Stderr: `^pos-query: unknown platform "vim" \(known: claude_code, .*\npos-query: hint: see 'pos-query stats --help'\n$`},
		{Name: "sessions csv", Args: []string{"sessions", "--lake", lake, "--format", "csv", "--since", "2026-03-03"},
			Stdout: `^last_ts,first_ts,platform,session_id,title,project,exchange_count,message_count,tool_count,subagents,compactions,input_tokens,output_tokens,cache_creation_tokens,cache_read_tokens,models,git_branch,cwd,pull_requests\n` +
				`2026-03-03T12:00:03Z,2026-03-03T12:00:00Z,claude_code,` + b + `,Explain the build,/home/dev/beta,1,2,0,0,0,100,200,50,0,"\[""claude-opus-4-6""\]",main,/home/dev/beta,\[\]\n$`},
		{Name: "recent", Args: []string{"recent", "--lake", lake, "--session", "11111111", "-n", "2"},
			Stdout: `^\{"exchange_number":3,"ts":"2026-03-01T23:59:58Z",.*"prompt":"Is it done\?".*\}\n\{"exchange_number":4,.*"prompt":"Ship it","response":"Done: tagged v1.2.0.".*\}\n$`},
		{Name: "recent --tools json", Args: []string{"recent", "--lake", lake, "-s", a, "--tools", "--format", "json"},
			Stdout: `(?s)^\[\n\{"exchange_number":1,.*"tool_calls":\[\{"name":"Read","input":\{"file_path":"/home/dev/alpha/fetch.go"\},"output":"package fetch\\n\\nfunc Get\(\) \{\}\\n","output_chars":29,"is_error":false\}.*\n\]\n$`},
		{Name: "recent table", Args: []string{"recent", "--lake", lake, "-s", a, "--tools", "-f", "table", "--width", "200"},
			Stdout: `^#1  [0-9-]{10} [0-9:]{5} \([0-9a-z ]+ ago\)  claude-[a-z0-9-]+ +130 out\n  > Add a retry to the fetcher with exponential backoff[^\n]*\n(    [^·\n][^\n]*\n)+    · Read\(/home/dev/alpha/fetch.go\)\n    · Task\(find callers\)\n`,
			Stderr: `^pos-query: session ` + a + ` \(claude_code\) "Add a retry to the fetcher" in /home/dev/alpha\n$`},
		{Name: "recent ambiguous", Args: []string{"recent", "--lake", lake, "-s", "1111"}, Code: 2,
			Stderr: `^pos-query: session "1111" is ambiguous: it matches ` + a + ` .*11112222-3333-4444-8555-666666666666 .*\npos-query: hint: see 'pos-query recent --help'\n$`},
		{Name: "recent unknown session", Args: []string{"recent", "--lake", lake, "-s", "zz"}, Code: 2,
			Stderr: `^pos-query: no session has an id starting with "zz"\n`},
		{Name: "timeline csv", Args: []string{"timeline", "--lake", lake, "--since", "2026-03-01", "--until", "2026-03-03", "--format", "csv"},
			Stdout: `^ts,kind,platform,project,session_id,title,exchange_number,agent_id,prompt,input_tokens,output_tokens,cache_creation_tokens,cache_read_tokens\n` +
				`2026-03-01T10:00:00Z,session_start,claude_code,/home/dev/alpha,` + a + `,Add a retry to the fetcher,,,,0,0,0,0\n` +
				`2026-03-01T10:00:00Z,exchange,claude_code,/home/dev/alpha,` + a + `,Add a retry to the fetcher,1,,Add a retry to the fetcher,42,130,100,4100\n` +
				`2026-03-01T10:05:00Z,exchange,.*,2,,Now add tests,12,24,0,1100\n` +
				`2026-03-01T23:59:58Z,exchange,.*,3,,Is it done\?,0,0,0,0\n` +
				`2026-03-02T09:00:00Z,exchange,.*,4,,Ship it,3,4,0,300\n$`},
		{Name: "timeline table", Args: []string{"timeline", "--lake", lake, "-f", "table", "--width", "200", "--session", "2"},
			Stdout: `^WHEN +KIND +SESSION +# +TITLE +PROMPT +IN TOKENS +OUT TOKENS +PROJECT\n[0-9-]{10} [0-9:]{5} \([0-9a-z ]+ ago\) +session_start +` + b + ` +Explain the build +0 +0 +/home/dev/beta\n[0-9-]{10} [0-9:]{5} \([0-9a-z ]+ ago\) +exchange +` + b + ` +1 +Explain the build +Explain the build +100 +200 +/home/dev/beta\n$`},
		{Name: "stats csv", Args: []string{"stats", "--lake", lake, "--by", "day,model", "--format", "csv"},
			Stdout: `^day,model,messages,sessions,input_tokens,output_tokens,cache_creation_tokens,cache_read_tokens,cache_creation_1h_tokens,cost,input_cost,output_cost,cache_creation_cost,cache_read_cost,unpriced_messages
2026-02-27,claude-sonnet-4-5,1,1,1000,2000,3000,4000,0,0.04545,0.003,0.03,0.01125,0.0012[0-9]*,0
2026-03-01,claude-haiku-4-5,4,1,122,69,10,1150,0,0.0005945,[0-9.e-]+,0.000345,1.25e-05,0.000115,0
2026-03-01,claude-opus-4-6,3,1,42,130,100,4100,0,0.006135,[0-9.e-]+,[0-9.e-]+,0.000625,0.00205,0
2026-03-02,claude-opus-4-6,1,1,3,4,0,300,0,0.000265,1.5e-05,0.0001,0,0.00015,0
2026-03-03,claude-opus-4-6,1,1,100,200,50,0,0,0.0058125,0.0005,0.005,0.0003125,0,0
$`},
		{Name: "stats table", Args: []string{"stats", "--lake", lake, "--by", "model", "-f", "table", "--project", "alpha"},
			Stdout: `^MODEL +MESSAGES +SESSIONS +IN TOKENS +OUT TOKENS +CACHE WRITE +CACHE READ +COST \$\nclaude-haiku-4-5 +4 +1 +122 +69 +10 +1,150 +0.0006\nclaude-opus-4-6 +4 +1 +45 +134 +100 +4,400 +0.0064\nclaude-sonnet-4-5 +1 +1 +1,000 +2,000 +3,000 +4,000 +0.045[45]\ntotal +9 +2 +1,167 +2,203 +3,110 +9,550 +0\.052[0-9]\n$`,
			Stderr: `^(pos-query: this lake predates the cache_creation_1h_tokens column.*\n)?$`},
		{Name: "stats narrow table", Args: []string{"stats", "--lake", lake, "--by", "day,model", "-f", "table", "--project", "alpha", "--width", "60"},
			// Short headers, every day and number whole; counts leave
			// the room to the model's name, and stderr says which.
			Stdout: `^DAY +MODEL +IN +OUT +CACHE R +\$\n2026-02-27  claude-sonnet-4-5 +1,000 +2,000 +4,000 +0\.045[45]\n`,
			Stderr: `^(pos-query: this lake predates the cache_creation_1h_tokens column.*\n)?pos-query: left out to fit 60 columns: sessions, messages, cache write \(--width N or --format csv shows them\)\n$`},
		{Name: "stats table wide enough", Args: []string{"stats", "--lake", lake, "--by", "day,model", "-f", "table", "--project", "alpha", "--width", "90"},
			Stdout: `^DAY +MODEL +MSGS +SESS +IN +OUT +CACHE W +CACHE R +\$\n2026-02-27  claude-sonnet-4-5 +1 +1 +1,000 +2,000 +3,000 +4,000 +0\.045[45]\n`,
			Stderr: `^(pos-query: this lake predates the cache_creation_1h_tokens column.*\n)?$`},
		{Name: "stats totals json", Args: []string{"stats", "--lake", lake, "--by", "", "--format", "json", "--until", "2026-03-01"},
			Stdout: `^\[\n\{"messages":1,"sessions":1,"input_tokens":1000,"output_tokens":2000,"cache_creation_tokens":3000,"cache_read_tokens":4000,"cache_creation_1h_tokens":0,"cost":0.04545,"input_cost":0.003,"output_cost":0.03,"cache_creation_cost":0.01125,"cache_read_cost":0.0012[0-9]*,"unpriced_messages":0\}\n\]\n$`},
		{Name: "stats bad key", Args: []string{"stats", "--lake", lake, "--by", "day,hour"}, Code: 2,
			Stderr: `^pos-query: --by: cannot group by "hour" \(use day, week, month, model, project, platform, session\)\n`},
		{Name: "files, flags after the path", Args: []string{"files", "fetch.go", "--lake", lake, "--format", "csv"},
			Stdout: `^last_ts,first_ts,platform,session_id,title,project,refs,actions,paths\n.*,claude_code,` + a + `,.*,"\[""/home/dev/alpha/fetch.go""\]"\n$`},
		{Name: "files without a path", Args: []string{"files", "--lake", lake}, Code: 2,
			Stderr: `^pos-query: give one PATH \(got 0 arguments\)\npos-query: hint: see 'pos-query files --help'\n$`},
		{Name: "decisions", Args: []string{"decisions", "--lake", lake, "--min-confidence", "0.5", "--format", "csv"},
			Stdout: `^ts,confidence,status,text,context,role,platform,session_id,title,project,patterns,exchange_id\n`},
		{Name: "sql", Args: []string{"sql", "--lake", lake, "SELECT count(*) AS n FROM messages WHERE date = DATE '2026-03-03'"},
			Stdout: `^\{"n":2\}\n$`},
		{Name: "sql words joined", Args: []string{"sql", "--lake", lake, "SELECT", "1", "AS", "x"}, Stdout: `^\{"x":1\}\n$`},
		{Name: "sql stdin", Stdin: "SELECT session_id FROM sessions ORDER BY session_id LIMIT 1\n", Args: []string{"sql", "--lake", lake, "--format", "csv", "-"},
			Stdout: `^session_id\n` + a + `\n$`},
		{Name: "sql stdin without dash", Stdin: "SELECT 2 AS y", Args: []string{"sql", "--lake", lake}, Stdout: `^\{"y":2\}\n$`},
		{Name: "sql table", Args: []string{"sql", "--lake", lake, "-f", "table", "SELECT 1234567 AS n, 'a' AS s"}, Stdout: `^        N  S\n1,234,567  a\n$`},
		{Name: "sql error", Args: []string{"sql", "--lake", lake, "SELEC 1"}, Code: 1,
			Stderr: `^pos-query: Parser Error: syntax error at or near "SELEC"\n$`},
		{Name: "sql catalog error", Args: []string{"sql", "--lake", lake, "SELECT * FROM nosuch"}, Code: 1,
			Stderr: `^pos-query: Catalog Error: Table with name nosuch does not exist! Did you mean "[a-z_]+"\?\n$`},
		{Name: "sql empty", Stdin: "", Args: []string{"sql", "--lake", lake}, Code: 2, Stderr: `^pos-query: the query is empty\n`},
		{Name: "bad flag", Args: []string{"sessions", "--lake", lake, "--nope"}, Code: 2,
			Stderr: `^pos-query: flag provided but not defined: -nope\npos-query: hint: see 'pos-query sessions --help'\n$`},
		{Name: "bad format", Args: []string{"sessions", "--lake", lake, "--format", "yaml"}, Code: 2, Stderr: `^pos-query: --format: unknown format "yaml"`},
		{Name: "bad since", Args: []string{"timeline", "--lake", lake, "--since", "yesterday"}, Code: 2, Stderr: `^pos-query: --since: cannot read "yesterday" as a time`},
		{Name: "empty window", Args: []string{"stats", "--lake", lake, "--since", "2026-03-02", "--until", "2026-03-01"}, Code: 2, Stderr: `^pos-query: --since must be before --until\n`},
		{Name: "stray argument", Args: []string{"sessions", "--lake", lake, "extra"}, Code: 2, Stderr: `^pos-query: unexpected argument "extra"\n`},
		{Name: "unknown command", Args: []string{"frobnicate", "x"}, Code: 2, Stderr: `^pos-query: unknown command "frobnicate" \(sql, sessions, search, .*capabilities, status, ddl, restore, blocks, statusline, pricing\)\npos-query: hint: see 'pos-query --help'\n$`},
		{Name: "unknown session: the hint names the command", Args: []string{"recent", "--lake", lake, "--session", "zzz"}, Code: 2,
			Stderr: `^pos-query: no session has an id starting with "zzz"\npos-query: hint: see 'pos-query recent --help'\n$`},
		{Name: "no command", Args: nil, Code: 2, Stderr: `^pos-query: no command given`},
		{Name: "no lake", Args: []string{"sessions", "--lake", filepath.Join(os.TempDir(), "pos-query-no-such-lake")}, Code: 1,
			Stderr: `^pos-query: no lake at .*pos-query-no-such-lake: the directory does not exist; build it with: pos-extract --lake \S+ \| pos-normalize \| pos-scrub \| pos-embed --lake \S+ \| pos-load --lake .*\n$`},
	} {
		t.Run(tc.Name, func(t *testing.T) {
			stdout, stderr := tc.Check(t, newApp())
			// Here an empty Stderr wants no stderr, and an empty Stdout of
			// a failure no stdout.
			if tc.Stdout == "" && stdout != "" && tc.Code != 0 {
				t.Errorf("stdout:\n%s\nwant none", stdout)
			}
			if tc.Stderr == "" && stderr != "" {
				t.Errorf("stderr:\n%s\nwant none", stderr)
			}
		})
	}
}

func TestCLIJSONParses(t *testing.T) {
	for _, cmd := range []string{"sessions", "recent", "timeline", "stats"} {
		code, stdout, stderr := run("", cmd, "--lake", lake, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(stdout), &rows); err != nil || len(rows) == 0 {
			t.Errorf("%s: %v, %d rows:\n%s", cmd, err, len(rows), stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := run("", "--help")
	if code != 0 || !strings.Contains(stdout, "pos-query stats --by day,model") {
		t.Errorf("app help (exit %d):\n%s", code, stdout)
	}
	for _, cmd := range []string{"sql", "sessions", "recent", "timeline", "stats"} {
		code, stdout, stderr := run("", cmd, "--help")
		if code != 0 || stderr != "" {
			t.Errorf("%s --help: exit %d, stderr %q", cmd, code, stderr)
		}
		for _, want := range []string{"EXAMPLES:", "   pos-query " + cmd, "EXIT CODES:", "--lake", "--format"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, want, stdout)
			}
		}
	}
}

// A lookup that fails because a file it listed was gone (a load compacted
// the partition meanwhile) runs again, once, if it had printed nothing.
func TestRetryWhenAFileVanished(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		printed bool
		calls   int
		code    int
	}{
		{"duckdb", errors.New(`IO Error: Cannot open file "/l/indexed/messages/platform=x/date=y/part-1.parquet": No such file or directory`), false, 2, 0},
		{"go", &fs.PathError{Op: "open", Path: "/l/rollup/sessions-parts-3.parquet", Err: fs.ErrNotExist}, false, 2, 0},
		{"printed", errors.New("No such file or directory"), true, 1, 1},
		{"other", errors.New("Binder Error: no column x"), false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			app := &cli.App{Name: "t", Commands: []*cli.Command{command(&cli.Command{Name: "q", Action: func(c *cli.Context) error {
				calls++
				if tc.printed {
					fmt.Fprintln(c.App.Writer, "row")
				}
				if calls == 1 {
					return tc.err
				}
				return nil
			}})}}
			var out, errs bytes.Buffer
			code := cmdio.Run(context.Background(), app, []string{"t", "q"}, strings.NewReader(""), &out, &errs)
			if calls != tc.calls || code != tc.code {
				t.Fatalf("%d calls, exit %d (want %d, %d); %s", calls, code, tc.calls, tc.code, errs.String())
			}
		})
	}
}
