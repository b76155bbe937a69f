#!/usr/bin/env bash
# parity.sh: pos's tokens and costs per day and model against ccusage's, on
# the same Claude Code folders (see README.md in this directory).
#
#   pipelines/ccusage/parity.sh [DIR...]
#
# Each DIR is a Claude folder: a CLAUDE_CONFIG_DIR (with projects/ in it,
# such as a generated home's .claude), or a folder of transcripts, which
# is copied into a temporary CLAUDE_CONFIG_DIR as one project. Without DIR:
# every Claude folder of the shared corpus ($POS_CORPUS/claude/*, each on
# its own, then all of them together) and this directory's probe fixture.
#
# Environment:
#   CCUSAGE_VERSION   ccusage release to install (default 20.0.24)
#   CCUSAGE_PREFIX    npm prefix to install it into (default ~/.cache/pos/ccusage-VERSION)
#   CCUSAGE_BIN       use this ccusage binary instead of installing one
#   POS_BIN           directory with pos-extract, pos-normalize, pos-load, pos-query
#                     and pos-ccusage-compare already built (default: build them)
#   PARITY_TOLERANCE  largest relative cost difference accepted (default 0.005)
#   PARITY_KEEP=1     keep the temporary directory
#   PARITY_ZONES      zones compared besides UTC, on every folder but the probe
#                     (default "America/Los_Angeles Asia/Tokyo": far west and far east)
#
# It prints, per folder, the rows that differ, the lines that explain them
# and a summary, then one line per folder and zone; it exits 1 if any folder
# has an unexplained difference or a cost out of tolerance in any zone, or if
# no zone moved any day×model row from its UTC day (the zones would then go
# untested), 2 if ccusage cannot be had.
set -euo pipefail
export LC_ALL=C

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
HERE=pipelines/ccusage

VERSION=${CCUSAGE_VERSION:-20.0.24}
TOL=${PARITY_TOLERANCE:-0.005}
read -r -a ZONES <<<"${PARITY_ZONES-America/Los_Angeles Asia/Tokyo}"
log() { printf 'parity: %s\n' "$*" >&2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pos-parity.XXXXXX")
cleanup() {
	if [[ ${PARITY_KEEP:-} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

CCUSAGE=$(CCUSAGE_VERSION=$VERSION $HERE/install.sh) || exit 2

if [[ -n ${POS_BIN:-} ]]; then
	BIN=$POS_BIN
else
	BIN=$TMP/bin
	log "building pos into $BIN"
	go build -o "$BIN/" ./cmd/pos-extract ./cmd/pos-normalize ./cmd/pos-load ./cmd/pos-query
	go build -o "$BIN/pos-ccusage-compare" ./$HERE/compare
fi

DIRS=("$@")
if ((${#DIRS[@]} == 0)); then
	CORPUS=${POS_CORPUS:-../shared/corpus}
	if [[ -d $CORPUS/claude ]]; then
		for d in "$CORPUS"/claude/*/; do DIRS+=("${d%/}"); done
		DIRS+=("$CORPUS/claude")
	else
		log "no corpus at $CORPUS/claude (set POS_CORPUS); only the probe fixture"
	fi
	DIRS+=("$HERE/testdata/probe")
fi

fail=0
SUMMARY=()
i=0
for dir in "${DIRS[@]}"; do
	i=$((i + 1))
	[[ -d $dir ]] || {
		log "$dir: not a directory"
		exit 2
	}
	work=$TMP/$i
	mkdir -p "$work"
	if [[ -d $dir/projects ]]; then
		cfg=$dir
	elif [[ -d $dir/.claude/projects ]]; then
		cfg=$dir/.claude
	else
		# A folder of transcripts: one project of a fresh config dir (ccusage
		# does not follow symbolic links).
		cfg=$work/claude
		mkdir -p "$cfg/projects"
		cp -r "$dir" "$cfg/projects/$(basename "$dir")"
	fi
	name=$dir
	printf '== %s\n' "$name"
	CLAUDE_CONFIG_DIR=$cfg "$CCUSAGE" claude daily --json --offline --timezone UTC >"$work/ccusage.json"
	"$BIN/pos-extract" --platform claude_code --root "$cfg/projects" --full -q |
		"$BIN/pos-normalize" -q | "$BIN/pos-load" --lake "$work/lake" -q
	"$BIN/pos-query" stats --lake "$work/lake" --by day,model --timezone UTC --format json >"$work/pos.json" 2>"$work/pos.err" || {
		cat "$work/pos.err" >&2
		exit 1
	}
	if "$BIN/pos-ccusage-compare" --ccusage "$work/ccusage.json" --pos "$work/pos.json" --claude "$cfg" --tolerance "$TOL" | tee "$work/report"; then
		status=ok
	else
		status=FAIL
		fail=1
	fi
	SUMMARY+=("$(printf '%-4s %s: %s; %s' "$status" "$name" "$(grep '^tokens' "$work/report" | sed 's/^tokens *//; s/; totals.*//')" "$(grep '^cost' "$work/report" | sed 's/^cost *//')")")
	# The same days in other zones: ccusage's --timezone against pos's.
	[[ $dir == "$HERE/testdata/probe" ]] && continue
	for zone in "${ZONES[@]}"; do
		z=$work/${zone//\//_}
		mkdir -p "$z"
		printf '== %s in %s\n' "$name" "$zone"
		CLAUDE_CONFIG_DIR=$cfg "$CCUSAGE" claude daily --json --offline --timezone "$zone" >"$z/ccusage.json"
		"$BIN/pos-query" stats --lake "$work/lake" --by day,model --timezone "$zone" --format json >"$z/pos.json" 2>"$z/pos.err" || {
			cat "$z/pos.err" >&2
			exit 1
		}
		if "$BIN/pos-ccusage-compare" --ccusage "$z/ccusage.json" --pos "$z/pos.json" --claude "$cfg" --tolerance "$TOL" \
			--timezone "$zone" --utc "$work/ccusage.json" | tee "$z/report"; then
			status=ok
		else
			status=FAIL
			fail=1
		fi
		moved=$(sed -n 's/^zone .*: \([0-9]*\) of .*/\1/p' "$z/report")
		MOVED=$((${MOVED:-0} + ${moved:-0}))
		SUMMARY+=("$(printf '%-4s %s in %s: %s; %s; %s moved from their UTC day' "$status" "$name" "$zone" "$(grep '^tokens' "$z/report" | sed 's/^tokens *//; s/; totals.*//')" "$(grep '^cost' "$z/report" | sed 's/^cost *//')" "${moved:-0}")")
	done
done
if ((${#ZONES[@]} > 0)) && ((${MOVED:-0} == 0)); then
	log "no zone of ${ZONES[*]} moved a day×model row from its UTC day: the zones were not tested"
	fail=1
fi

printf '\nccusage %s (%s) against pos %s\n' "$VERSION" "$CCUSAGE" "$(git describe --always --dirty 2>/dev/null || echo dev)"
printf '%s\n' "${SUMMARY[@]}"
exit $fail
