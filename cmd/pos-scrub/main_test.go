package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/clitest"
	"github.com/pos-lake/pos/cmd/internal/cmdio"
)

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	noKey(t)
	return clitest.Call(newApp(), stdin, args...)
}

// noKey leaves the test no key but a new default key file's.
func noKey(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // the default key file
	t.Setenv("POS_SCRUB_KEY", "")
}

// A fake token, in two pieces so no file holds it whole.
var token = "ghp_" + "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ"

var (
	secretLine = `{"schema":"pos/1","kind":"message","platform":"codex","text":"export GITHUB_TOKEN=` + token + `"}` + "\n"
	cleanLine  = `{"schema":"pos/1","kind":"raw","platform":"codex","raw":{"a":1}}` + "\n"
)

func TestCLI(t *testing.T) {
	for _, tc := range []clitest.Case{
		{Name: "redacts", Stdin: cleanLine + secretLine, Args: []string{"--key", testKeyArg},
			// Each record marked: the unchanged one as read, the mark spliced in.
			Stdout: `^` + regexp.QuoteMeta(strings.TrimSuffix(strings.TrimSpace(cleanLine), "}")+`,"scrub":"secrets"}`) + `\n\{.*"text":"export GITHUB_TOKEN=\[REDACTED:github-pat:[0-9a-f]{8}\]","scrub":"secrets"\}\n$`,
			Stderr: `(?s)^pos-scrub: 2 records, 1 changed, 1 redactions; 0 skipped; .*github-pat +1\n.*codex +2 +1 +1\n$`},
		{Name: "quiet", Stdin: secretLine, Args: []string{"--key", testKeyArg, "-q"}, Stdout: `REDACTED`, Stderr: `^$`},
		{Name: "json report", Stdin: secretLine, Args: []string{"--key", testKeyArg, "--report", "json"},
			Stderr: `^\{"records":1,"changed":1,"redactions":1,"skipped":0,"bytes":\d+,"rules":\{"github-pat":1\},"platforms":\{"codex":\{"records":1,"changed":1,"redactions":1,"rules":\{"github-pat":1\}\}\},"seconds":[0-9.e-]+,"mb_per_s":[0-9.e+-]+\}\n$`},
		{Name: "bad line skipped", Stdin: secretLine + "not json\n" + cleanLine, Args: []string{"--key", testKeyArg}, Code: cmdio.DataError,
			Stdout: `(?s)REDACTED.*\n\{"schema":"pos/1","kind":"raw"`, Stderr: `pos-scrub: -:2: `},
		{Name: "strict", Stdin: secretLine + "not json\n" + cleanLine, Args: []string{"--key", testKeyArg, "--strict"}, Code: cmdio.DataError,
			Stdout: `^\{[^\n]*REDACTED[^\n]*\}\n$`, Stderr: `^pos-scrub: -:2: `},
		{Name: "off", Stdin: cleanLine + secretLine, Args: []string{"--off"},
			Stdout: `^` + regexp.QuoteMeta(strings.TrimSuffix(strings.TrimSpace(cleanLine), "}")+`,"scrub":"off"}`+"\n"+strings.TrimSuffix(strings.TrimSpace(secretLine), "}")+`,"scrub":"off"}`) + `\n$`},
		{Name: "off and pii", Args: []string{"--off", "--pii"}, Code: cmdio.Usage, Stderr: `--off and --pii exclude each other`},
		{Name: "bad report", Args: []string{"--key", testKeyArg, "--report", "xml"}, Code: cmdio.Usage, Stderr: `--report: want text or json`},
		{Name: "missing allowlist", Args: []string{"--key", testKeyArg, "--allowlist", "/no/such/file"}, Code: cmdio.Usage, Stderr: `no such file`},
		{Name: "rules", Args: []string{"--rules"}, Stdout: `(?m)^generic-api-key$[\s\S]*^url-password$`},
		{Name: "no stdout noise on usage error", Args: []string{"--nope"}, Code: cmdio.Usage, Stdout: `^$`},
	} {
		t.Run(tc.Name, func(t *testing.T) {
			noKey(t)
			if _, stderr := tc.Check(t, newApp()); strings.Contains(stderr, token) {
				t.Error("the secret is on stderr")
			}
		})
	}
}

func TestAllowlistFile(t *testing.T) {
	dir := t.TempDir()
	al := filepath.Join(dir, "allow")
	os.WriteFile(al, []byte("# reviewed\nregex ^ghp_Zq3Z\n"), 0o600)
	if code, stdout, stderr := runCmd(t, secretLine, "--key", testKeyArg, "--allowlist", al); code != 0 || !strings.Contains(stdout, token) {
		t.Errorf("exit %d, stdout %s, stderr %s", code, stdout, stderr)
	}
	os.WriteFile(al, []byte("rule no-such-rule\n"), 0o600)
	if code, _, stderr := runCmd(t, secretLine, "--key", testKeyArg, "--allowlist", al); code != cmdio.Usage || !strings.Contains(stderr, "unknown rule") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// TestKey: --key, $POS_SCRUB_KEY and the key file give the markers'
// hashes; the key file is made once, 0600, and reused.
func TestKey(t *testing.T) {
	marker := func(stdout string) string { return regexp.MustCompile(`\[REDACTED:[^\]]+\]`).FindString(stdout) }
	_, a, _ := runCmd(t, secretLine, "--key", keyOne)
	_, b, _ := runCmd(t, secretLine, "--key", keyTwo)
	if marker(a) == "" || marker(a) == marker(b) {
		t.Errorf("markers %q %q", marker(a), marker(b))
	}
	keyFile := filepath.Join(t.TempDir(), "k", "scrub.key")
	_, c, _ := runCmd(t, secretLine, "--key-file", keyFile)
	_, d, _ := runCmd(t, secretLine, "--key-file", keyFile)
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 || marker(c) != marker(d) || marker(c) == "" {
		t.Errorf("key file %v %v; markers %q %q", fi, err, marker(c), marker(d))
	}
	// The default key file lives under $XDG_DATA_HOME/pos.
	xdg := t.TempDir()
	t.Setenv("XDG_DATA_HOME", xdg)
	t.Setenv("POS_SCRUB_KEY", "")
	if code, _, stderr := clitest.Call(newApp(), secretLine, "-q"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(xdg, "pos", "scrub.key")); err != nil {
		t.Error(err)
	}
	// $POS_SCRUB_KEY is --key.
	t.Setenv("POS_SCRUB_KEY", keyOne)
	if _, stdout, _ := clitest.Call(newApp(), secretLine, "-q"); marker(stdout) != marker(a) {
		t.Errorf("$POS_SCRUB_KEY: %q, --key: %q", marker(stdout), marker(a))
	}
}

func TestReportJSONHasNoSecret(t *testing.T) {
	_, _, stderr := runCmd(t, secretLine, "--key", testKeyArg, "--report", "json")
	var rep map[string]any
	if err := json.Unmarshal([]byte(stderr), &rep); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
}

// Keys of 32 bytes or more: a shorter one is refused.
const (
	testKeyArg = "a pos-scrub test key of 32 bytes or more"
	keyOne     = "key one: 32 bytes or more, for tests"
	keyTwo     = "key two: 32 bytes or more, for tests"
)

// TestShortKeyRefused: a key shorter than 32 bytes, from --key,
// $POS_SCRUB_KEY or the key file, is refused with a message that says so,
// and nothing is written.
func TestShortKeyRefused(t *testing.T) {
	for _, args := range [][]string{{"--key", "x"}, {"--key", strings.Repeat("k", 31)}} {
		code, stdout, stderr := runCmd(t, secretLine, args...)
		if code != cmdio.Usage || stdout != "" || !strings.Contains(stderr, "key too short") || !strings.Contains(stderr, "at least 32") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("POS_SCRUB_KEY", "x")
	if code, stdout, stderr := clitest.Call(newApp(), secretLine); code != cmdio.Usage || stdout != "" || !strings.Contains(stderr, "POS_SCRUB_KEY") {
		t.Errorf("$POS_SCRUB_KEY=x: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	t.Setenv("POS_SCRUB_KEY", "")
	keyFile := filepath.Join(t.TempDir(), "scrub.key")
	os.WriteFile(keyFile, []byte("short\n"), 0o600)
	code, stdout, stderr := runCmd(t, secretLine, "--key-file", keyFile)
	if code == 0 || stdout != "" || !strings.Contains(stderr, keyFile) || !strings.Contains(stderr, "key too short") {
		t.Errorf("short key file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// 32 bytes are enough.
	if code, stdout, stderr := runCmd(t, secretLine, "--key", strings.Repeat("k", 32)); code != 0 || !strings.Contains(stdout, "REDACTED") {
		t.Errorf("32-byte key: exit %d, stderr %s", code, stderr)
	}
}
