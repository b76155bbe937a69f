package pipelines_test

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuildLinks holds make build to what its comment promises: the
// binaries that link DuckDB carry libstdc++ and libgcc in them (no shared
// libstdc++ for the dynamic loader to relocate at each start) when the
// static archive is installed, and glibc stays shared.
func TestBuildLinks(t *testing.T) {
	if !builtByMake {
		t.Skip("the binaries were not built by make")
	}
	cc, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(strings.TrimSpace(string(cc)), "-print-file-name=libstdc++.a").Output()
	if !filepath.IsAbs(strings.TrimSpace(string(out))) {
		t.Skip("no static libstdc++ (libstdc++ development files) here: make build links the shared one")
	}
	for _, name := range []string{"pos-query", "pos-load", "pos-mcp", "pos-embed", "pos-sync"} {
		f, err := elf.Open(filepath.Join(binDir, name))
		if err != nil {
			t.Fatal(err)
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range libs {
			if strings.HasPrefix(l, "libstdc++") || strings.HasPrefix(l, "libgcc_s") {
				t.Errorf("%s needs %s at run time (needs %v): make build should link it statically", name, l, libs)
			}
		}
		if !slices.ContainsFunc(libs, func(l string) bool { return strings.HasPrefix(l, "libc.so") }) {
			t.Errorf("%s: glibc should stay shared, needs %v", name, libs)
		}
	}
}
