#!/usr/bin/env bash
# bench.sh: wall time, throughput and peak memory of the pos pipeline on a
# synthetic Claude Code home built from the real corpus (see README.md).
#
#   pipelines/bench/bench.sh            # or: make bench
#
# Environment:
#   BENCH_SIZE   size of the synthetic home (default 500MB; 100MB, 1GB, 5GB...)
#   BENCH_DIR    generate the home here and keep it; reused if it exists
#   BENCH_SRC    real sessions to replicate (default ../shared/corpus/claude)
#   BENCH_REPS   repetitions per measurement (default 3; median, min, max)
#   BENCH_INC    fraction of lines appended for the incremental run (default 0.01)
#   BENCH_SEED   generator seed (default 1)
#   BENCH_KEEP=1 keep the temporary directory (binaries, streams, lakes)
#
# Figures go to stdout, progress and diagnostics to stderr.
set -euo pipefail
export LC_ALL=C

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

SIZE=${BENCH_SIZE:-500MB}
REPS=${BENCH_REPS:-3}
INC_FRACTION=${BENCH_INC:-0.01}
SEED=${BENCH_SEED:-1}
SRC=${BENCH_SRC:-../shared/corpus/claude}

log() { printf 'bench: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pos-bench.XXXXXX")
cleanup() {
	if [[ ${BENCH_KEEP:-} == 1 ]]; then
		log "kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------
# Build

BIN=$TMP/bin
mkdir -p "$BIN"
log "building into $BIN"
if ! go build -o "$BIN/" ./cmd/... 2>"$TMP/build.log"; then
	# A command someone is still writing must not stop the bench of the others.
	for d in cmd/pos-*/; do
		name=$(basename "$d")
		go build -o "$BIN/" "./$d" 2>>"$TMP/build.log" || log "$name does not build; skipping it"
	done
fi
go build -o "$BIN/pos-bench-gen" ./pipelines/bench/gen
for b in pos-extract pos-normalize; do
	if [[ ! -x $BIN/$b ]]; then
		cat "$TMP/build.log" >&2
		die "$b did not build"
	fi
done
HAVE_LOAD=
if [[ -x $BIN/pos-load ]]; then HAVE_LOAD=1; fi

# ---------------------------------------------------------------------------
# Corpus

GEN_LINE="reused"
if [[ -n ${BENCH_DIR:-} && -d $BENCH_DIR/.claude/projects ]]; then
	DIR=$BENCH_DIR
	log "reusing the synthetic home in $DIR (BENCH_SIZE ignored)"
else
	DIR=${BENCH_DIR:-$TMP/corpus}
	[[ -d $SRC ]] || die "no source corpus at $SRC (set BENCH_SRC)"
	log "generating $SIZE from $SRC into $DIR"
	GEN_LINE=$("$BIN/pos-bench-gen" --src "$SRC" --out "$DIR" --size "$SIZE" --seed "$SEED")
	log "$GEN_LINE"
fi
# SOURCE bytes: the transcripts; every MB/s figure below is over these.
read -r SRC_BYTES SRC_FILES < <(find "$DIR/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' |
	awk '{s += $1; n++} END {printf "%d %d\n", s, n}')
((SRC_BYTES > 0)) || die "no .jsonl files under $DIR/.claude/projects"
# Let the generator's writes reach the disk, then read everything once, so
# every repetition runs on a warm page cache and no writeback in between.
sync
find "$DIR/.claude" -type f -exec cat {} + >/dev/null

# ---------------------------------------------------------------------------
# Measuring

RSS_DIR=$TMP/rss
# rss NAME CMD...: run CMD and leave its peak RSS in KB in $RSS_DIR/NAME.
if /usr/bin/time -f '%M' -o /dev/null true 2>/dev/null && [[ -z ${BENCH_PROC_RSS:-} ]]; then
	RSS_HOW="GNU time %M"
	rss() {
		local out=$RSS_DIR/$1
		shift
		/usr/bin/time -f '%M' -o "$out" "$@"
	}
else
	RSS_HOW="VmHWM sampled from /proc every 20 ms"
	[[ -n ${BENCH_PROC_RSS:-} ]] || log "hint: /usr/bin/time (GNU) not found, sampling VmHWM instead; install it for exact figures: apt-get install time"
	rss() {
		local out=$RSS_DIR/$1 pid hwm=0 v rc=0
		shift
		"$@" <&0 &
		pid=$!
		while [[ -r /proc/$pid/status ]]; do
			v=$(awk '/^State:/ && $2 == "Z" {z = 1} /^VmHWM:/ {print $2} END {if (z) print "Z"}' "/proc/$pid/status" 2>/dev/null || true)
			if [[ $v == *Z* || -z $v ]]; then break; fi
			if ((v > hwm)); then hwm=$v; fi
			sleep 0.02
		done
		wait "$pid" || rc=$?
		echo "$hwm" >"$out"
		return "$rc"
	}
fi

ROWS=()
declare -A PEAK

# measure N LABEL BYTES SETUP RUN: time RUN N times, SETUP (untimed) before
# each; add a row with the median, min and max wall time, MB/s of BYTES at
# the median, and the peak RSS of each stage over the repetitions.
measure() {
	local n=$1 label=$2 bytes=$3 setup=$4 fn=$5 i t0 t1 f kb times=()
	PEAK=()
	for ((i = 1; i <= n; i++)); do
		rm -rf "$RSS_DIR"
		mkdir -p "$RSS_DIR"
		$setup
		t0=$EPOCHREALTIME
		if ! $fn; then
			log "$label: failed"
			ROWS+=("$(printf '%-26s %s' "$label" "failed (see stderr)")")
			return 0
		fi
		t1=$EPOCHREALTIME
		times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')")
		for f in "$RSS_DIR"/*; do
			[[ -e $f ]] || continue
			kb=$(tail -n 1 "$f")
			[[ $kb =~ ^[0-9]+$ ]] || continue
			f=${f##*/}
			if ((kb > ${PEAK[$f]:-0})); then PEAK[$f]=$kb; fi
		done
	done
	local rssdesc="" s
	for s in extract normalize load; do
		if [[ -v PEAK[$s] ]]; then rssdesc+="$s=$(((PEAK[$s] + 512) / 1024)) "; fi
	done
	local line
	line=$(printf '%s\n' "${times[@]}" | sort -n | awk -v bytes="$bytes" -v label="$label" -v rss="$rssdesc" '
		{t[NR] = $1}
		END {
			med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
			mbs = (bytes > 0 && med > 0) ? sprintf("%.1f", bytes / 1e6 / med) : "-"
			printf "%-26s %8.2f %7.2f %7.2f %8s  %s", label, med, t[1], t[NR], mbs, rss
		}')
	ROWS+=("$line")
	log "$line"
}

mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1e6}'; }

X=("$BIN/pos-extract" --platform claude_code --root "$DIR/.claude" --full -q)
NORM=("$BIN/pos-normalize" -q)
LOAD=("$BIN/pos-load" --lake "$TMP/lake" -q)

fresh_lake() { rm -rf "$TMP/lake"; }
nothing() { :; }
run_x() { rss extract "${X[@]}" >/dev/null; }
run_xn() { rss extract "${X[@]}" | rss normalize "${NORM[@]}" >/dev/null; }
run_xnl() { rss extract "${X[@]}" | rss normalize "${NORM[@]}" | rss load "${LOAD[@]}"; }
run_n() { rss normalize "${NORM[@]}" <"$TMP/extracted.ndjson" >/dev/null; }
run_l() { rss load "${LOAD[@]}" <"$TMP/normalized.ndjson"; }

log "source: $(mb "$SRC_BYTES") MB in $SRC_FILES transcripts; $REPS repetitions each; peak RSS by $RSS_HOW"

log "measuring extract"
measure "$REPS" "extract" "$SRC_BYTES" nothing run_x
log "measuring extract | normalize"
measure "$REPS" "extract|normalize" "$SRC_BYTES" nothing run_xn
if [[ -n $HAVE_LOAD ]]; then
	log "measuring extract | normalize | load"
	measure "$REPS" "extract|normalize|load" "$SRC_BYTES" fresh_lake run_xnl
else
	ROWS+=("$(printf '%-26s %s' "extract|normalize|load" "load: not built yet")")
fi

# The stages alone, on streams written once.
log "writing the extracted and normalized streams"
"${X[@]}" >"$TMP/extracted.ndjson"
"${NORM[@]}" <"$TMP/extracted.ndjson" >"$TMP/normalized.ndjson"
EXTRACTED_BYTES=$(stat -c %s "$TMP/extracted.ndjson")
NORMALIZED_BYTES=$(stat -c %s "$TMP/normalized.ndjson")
log "measuring normalize alone"
measure "$REPS" "normalize (from file)" "$SRC_BYTES" nothing run_n
LAKE_LINE="lake: load not built yet"
if [[ -n $HAVE_LOAD ]]; then
	log "measuring load alone"
	measure "$REPS" "load (from file)" "$SRC_BYTES" fresh_lake run_l
	if [[ -d $TMP/lake ]]; then
		LAKE_BYTES=$(du -sb "$TMP/lake" | cut -f1)
		LAKE_LINE=$(printf 'lake: %s MB for %s MB of source (%.2fx); parquet %s MB, pos.duckdb %s MB' \
			"$(mb "$LAKE_BYTES")" "$(mb "$SRC_BYTES")" "$(awk -v l="$LAKE_BYTES" -v s="$SRC_BYTES" 'BEGIN {print l / s}')" \
			"$(mb "$(find "$TMP/lake" -name '*.parquet' -printf '%s\n' | awk '{s += $1} END {print s + 0}')")" \
			"$(mb "$(stat -c %s "$TMP/lake/pos.duckdb" 2>/dev/null || echo 0)")")
	fi
else
	ROWS+=("$(printf '%-26s %s' "load (from file)" "load: not built yet")")
fi
rm -f "$TMP/extracted.ndjson" "$TMP/normalized.ndjson"

# ---------------------------------------------------------------------------
# Incremental: watermarks from a first run, then append to some sessions.

INC=$TMP/inc
mkdir -p "$INC"
log "copying the home for the incremental runs"
cp -a "$DIR/.claude" "$INC/"
XI=("$BIN/pos-extract" --platform claude_code --root "$INC/.claude" --state "$TMP/state" --commit-state -q)
LOADI=("$BIN/pos-load" --lake "$TMP/inclake" -q)
run_inc() {
	if [[ -n $HAVE_LOAD ]]; then
		rss extract "${XI[@]}" | rss normalize "${NORM[@]}" | rss load "${LOADI[@]}"
	else
		rss extract "${XI[@]}" | rss normalize "${NORM[@]}" >/dev/null
	fi
}
empty_state() { rm -rf "$TMP/state" "$TMP/inclake"; }
restore_state() {
	rm -rf "$TMP/state" "$TMP/inclake"
	cp -a "$TMP/state0" "$TMP/state"
	if [[ -d $TMP/inclake0 ]]; then cp -a "$TMP/inclake0" "$TMP/inclake"; fi
}
INC_CHAIN="extract|normalize"
if [[ -n $HAVE_LOAD ]]; then INC_CHAIN+="|load"; fi
log "measuring incremental: first run (empty state)"
measure 1 "incr: first run" "$SRC_BYTES" empty_state run_inc
cp -a "$TMP/state" "$TMP/state0"
if [[ -d $TMP/inclake ]]; then cp -a "$TMP/inclake" "$TMP/inclake0"; fi
log "measuring incremental: nothing changed"
measure "$REPS" "incr: no change" 0 restore_state run_inc
before=$(find "$INC/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
APPEND_LINE=$("$BIN/pos-bench-gen" --out "$INC" --append --fraction "$INC_FRACTION" --seed "$SEED")
log "$APPEND_LINE"
after=$(find "$INC/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
NEW_BYTES=$((after - before))
log "measuring incremental: appended lines"
measure "$REPS" "incr: +$(awk -v f="$INC_FRACTION" 'BEGIN {print f * 100}')% lines" "$NEW_BYTES" restore_state run_inc

# ---------------------------------------------------------------------------
# Report

cat <<EOF
pos bench  $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(git describe --always --dirty 2>/dev/null || echo unknown)  $(go env GOVERSION)
machine    $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM
source     $(mb "$SRC_BYTES") MB in $SRC_FILES .jsonl files under $DIR/.claude/projects
generator  $GEN_LINE
streams    extracted $(mb "$EXTRACTED_BYTES") MB, normalized $(mb "$NORMALIZED_BYTES") MB
$LAKE_LINE
incr       $INC_CHAIN; ${APPEND_LINE#gen: }
timing     $REPS runs (first run: 1), warm page cache; MB/s = source .jsonl MB / median (incr +x%: appended MB); peak RSS per stage by $RSS_HOW

$(printf '%-26s %8s %7s %7s %8s  %s' stage median_s min_s max_s MB/s peak_rss_MB)
EOF
printf '%s\n' "${ROWS[@]}"
