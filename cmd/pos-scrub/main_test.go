package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
)

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // the default key file
	t.Setenv("POS_SCRUB_KEY", "")
	var out, errb bytes.Buffer
	code = cmdio.Run(context.Background(), newApp(), append([]string{"pos-scrub"}, args...),
		strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// A fake token, in two pieces so no file holds it whole.
var token = "ghp_" + "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ"

var (
	secretLine = `{"schema":"pos/1","kind":"message","platform":"codex","text":"export GITHUB_TOKEN=` + token + `"}` + "\n"
	cleanLine  = `{"schema":"pos/1","kind":"raw","platform":"codex","raw":{"a":1}}` + "\n"
)

func TestCLI(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // regexp
		stderr string // regexp
	}{
		{name: "redacts", stdin: cleanLine + secretLine, args: []string{"--key", testKeyArg},
			// Each record marked: the unchanged one as read, the mark spliced in.
			stdout: `^` + regexp.QuoteMeta(strings.TrimSuffix(strings.TrimSpace(cleanLine), "}")+`,"scrub":"secrets"}`) + `\n\{.*"text":"export GITHUB_TOKEN=\[REDACTED:github-pat:[0-9a-f]{8}\]","scrub":"secrets"\}\n$`,
			stderr: `(?s)^pos-scrub: 2 records, 1 changed, 1 redactions; 0 skipped; .*github-pat +1\n.*codex +2 +1 +1\n$`},
		{name: "quiet", stdin: secretLine, args: []string{"--key", testKeyArg, "-q"}, stdout: `REDACTED`, stderr: `^$`},
		{name: "json report", stdin: secretLine, args: []string{"--key", testKeyArg, "--report", "json"},
			stderr: `^\{"records":1,"changed":1,"redactions":1,"skipped":0,"bytes":\d+,"rules":\{"github-pat":1\},"platforms":\{"codex":\{"records":1,"changed":1,"redactions":1,"rules":\{"github-pat":1\}\}\},"seconds":[0-9.e-]+,"mb_per_s":[0-9.e+-]+\}\n$`},
		{name: "bad line skipped", stdin: secretLine + "not json\n" + cleanLine, args: []string{"--key", testKeyArg}, code: cmdio.DataError,
			stdout: `(?s)REDACTED.*\n\{"schema":"pos/1","kind":"raw"`, stderr: `pos-scrub: -:2: `},
		{name: "strict", stdin: secretLine + "not json\n" + cleanLine, args: []string{"--key", testKeyArg, "--strict"}, code: cmdio.DataError,
			stdout: `^\{[^\n]*REDACTED[^\n]*\}\n$`, stderr: `^pos-scrub: -:2: `},
		{name: "off", stdin: cleanLine + secretLine, args: []string{"--off"},
			stdout: `^` + regexp.QuoteMeta(strings.TrimSuffix(strings.TrimSpace(cleanLine), "}")+`,"scrub":"off"}`+"\n"+strings.TrimSuffix(strings.TrimSpace(secretLine), "}")+`,"scrub":"off"}`) + `\n$`},
		{name: "off and pii", args: []string{"--off", "--pii"}, code: cmdio.Usage, stderr: `--off and --pii exclude each other`},
		{name: "bad report", args: []string{"--key", testKeyArg, "--report", "xml"}, code: cmdio.Usage, stderr: `--report: want text or json`},
		{name: "missing allowlist", args: []string{"--key", testKeyArg, "--allowlist", "/no/such/file"}, code: cmdio.Usage, stderr: `no such file`},
		{name: "rules", args: []string{"--rules"}, stdout: `(?m)^generic-api-key$[\s\S]*^url-password$`},
		{name: "no stdout noise on usage error", args: []string{"--nope"}, code: cmdio.Usage, stdout: `^$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, stderr)
			}
			if tc.stdout != "" && !regexp.MustCompile(tc.stdout).MatchString(stdout) {
				t.Errorf("stdout %q\ndoes not match %s", stdout, tc.stdout)
			}
			if tc.stderr != "" && !regexp.MustCompile(tc.stderr).MatchString(stderr) {
				t.Errorf("stderr %q\ndoes not match %s", stderr, tc.stderr)
			}
			if strings.Contains(stderr, token) {
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
	var out, errb bytes.Buffer
	t.Setenv("XDG_DATA_HOME", xdg)
	t.Setenv("POS_SCRUB_KEY", "")
	if code := cmdio.Run(context.Background(), newApp(), []string{"pos-scrub", "-q"}, strings.NewReader(secretLine), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(xdg, "pos", "scrub.key")); err != nil {
		t.Error(err)
	}
	// $POS_SCRUB_KEY is --key.
	t.Setenv("POS_SCRUB_KEY", keyOne)
	out.Reset()
	cmdio.Run(context.Background(), newApp(), []string{"pos-scrub", "-q"}, strings.NewReader(secretLine), &out, &errb)
	if marker(out.String()) != marker(a) {
		t.Errorf("$POS_SCRUB_KEY: %q, --key: %q", marker(out.String()), marker(a))
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
	var out, errb bytes.Buffer
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("POS_SCRUB_KEY", "x")
	if code := cmdio.Run(context.Background(), newApp(), []string{"pos-scrub"}, strings.NewReader(secretLine), &out, &errb); code != cmdio.Usage || out.Len() != 0 || !strings.Contains(errb.String(), "POS_SCRUB_KEY") {
		t.Errorf("$POS_SCRUB_KEY=x: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
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
