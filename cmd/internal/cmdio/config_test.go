package cmdio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The configuration file sets the variables the environment does not; a
// key it does not know is an error naming the file and line.
func TestApplyConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	t.Setenv("POS_CONFIG", path)
	for _, v := range []string{"POS_LAKE", "POS_LOCAL_LAKE", "POS_CATALOG", "POS_MACHINE", "POS_CACHE_MAX", "POS_ONLY_PROJECTS", "POS_DENY_PROJECTS"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	if err := ApplyConfig(); err != nil {
		t.Fatalf("no file: %v", err)
	}
	if _, set := os.LookupEnv("POS_LAKE"); set {
		t.Error("no file set POS_LAKE")
	}
	conf := `# the team's lake
lake = "s3://team/pos"
catalog = "http://127.0.0.1:8181"
only_projects = ["alpha", "beta*"]
`
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("POS_CATALOG", "http://from-env")
	if err := ApplyConfig(); err != nil {
		t.Fatal(err)
	}
	for env, want := range map[string]string{
		"POS_LAKE": "s3://team/pos", "POS_CATALOG": "http://from-env", "POS_ONLY_PROJECTS": "alpha,beta*",
	} {
		if got := os.Getenv(env); got != want {
			t.Errorf("%s=%q, want %q", env, got, want)
		}
	}
	if _, set := os.LookupEnv("POS_MACHINE"); set {
		t.Error("a key the file does not have set its variable")
	}

	if err := os.WriteFile(path, []byte("lake = \"x\"\n\nlakes = \"y\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := ApplyConfig()
	if err == nil || !strings.HasPrefix(err.Error(), path+":3: unknown key lakes") {
		t.Errorf("an unknown key: %v", err)
	}
	if err := os.WriteFile(path, []byte("lake = \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ApplyConfig(); err == nil || !strings.HasPrefix(err.Error(), path+":1:") {
		t.Errorf("bad TOML: %v", err)
	}
}

// The [roots] table sets POS_ROOTS, platform=path entries in platform
// order, unless the environment has it.
func TestConfigRoots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	t.Setenv("POS_CONFIG", path)
	t.Setenv("POS_ROOTS", "")
	os.Unsetenv("POS_ROOTS")
	conf := "[roots]\nclaude_code = [\"/mnt/laptop/.claude\"]\naider = [\"~/src/app\", \"~/src/lib\"]\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ApplyConfig(); err != nil {
		t.Fatal(err)
	}
	sep := string(os.PathListSeparator)
	if got, want := os.Getenv("POS_ROOTS"), "aider=~/src/app"+sep+"aider=~/src/lib"+sep+"claude_code=/mnt/laptop/.claude"; got != want {
		t.Errorf("POS_ROOTS=%q, want %q", got, want)
	}
	t.Setenv("POS_ROOTS", "codex=/x")
	if err := ApplyConfig(); err != nil || os.Getenv("POS_ROOTS") != "codex=/x" {
		t.Errorf("the file overrode the environment: %v, %q", err, os.Getenv("POS_ROOTS"))
	}
}
