#!/usr/bin/env bash
# fuzz.sh: run each fuzz target for FUZZTIME (make fuzz calls it).
#
#   FUZZTIME=30s pipelines/fuzz.sh                       every Fuzz* in the module
#   FUZZTIME=30s pipelines/fuzz.sh schema:FuzzRoundTrip extract/codex:FuzzLine ...
#
# With no arguments the targets are found by `go test -list`, so a new
# package's fuzz test (a new platform's parser, say) is run without being
# listed anywhere.
#
# A target fails when it finds an input that fails (go test writes it under
# the package's testdata/fuzz/, where it stays as a regression case). Go
# 1.26's fuzz coordinator can also fail a target with a bare "context
# deadline exceeded" as -fuzztime ends, with no input written
# (go.dev/issue/75804, fixed in Go 1.27): that target runs once more, and
# fails only if it does so again or writes an input.
set -uo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
targets=("$@")
if ((${#targets[@]} == 0)); then
	# go test -list prints a package's matching test names, then "ok  <import path>  ...".
	mod=$("$GO" list -m)
	mapfile -t targets < <("$GO" test -run='^$' -list='^Fuzz' ./... | awk -v mod="$mod/" '
		/^Fuzz/ { names[++n] = $1; next }
		$1 == "ok" { pkg = substr($2, length(mod) + 1); if ($2 == substr(mod, 1, length(mod) - 1)) pkg = "."
			for (i = 1; i <= n; i++) print pkg ":" names[i]
			n = 0 }')
	((${#targets[@]} > 0)) || { echo "fuzz: no fuzz targets found" >&2; exit 1; }
fi
failed=()
for t in "${targets[@]}"; do
	pkg=${t%%:*} name=${t##*:}
	for try in 1 2; do
		echo "fuzz $pkg $name"
		out=$(mktemp)
		"$GO" test -run='^$' -fuzz="^$name\$" -fuzztime="$FUZZTIME" "./$pkg" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		if ((rc == 0)); then
			rm -f "$out"
			break
		fi
		if ((try == 1)) && grep -q '^    context deadline exceeded$' "$out" && ! grep -q 'Failing input written' "$out"; then
			echo "fuzz: $pkg $name: the coordinator's deadline race (go.dev/issue/75804), no input written; once more"
			rm -f "$out"
			continue
		fi
		rm -f "$out"
		failed+=("$pkg:$name")
		break
	done
done
if ((${#failed[@]} > 0)); then
	echo "fuzz: failed: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz: ${#targets[@]} targets passed"
