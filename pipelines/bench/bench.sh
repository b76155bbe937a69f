#!/usr/bin/env bash
# bench.sh: wall time, throughput and peak memory of the pos pipeline on a
# synthetic Claude Code home built from the real corpus (see README.md).
#
#   pipelines/bench/bench.sh            # or: make bench
#
# Environment:
#   BENCH_SIZE   size of the synthetic home (default 500MB; 100MB, 1GB, 5GB...)
#   BENCH_DIR    generate the home here and keep it; reused if it exists
#   BENCH_SRC    real sessions to replicate (default $POS_CORPUS/claude, else ../shared/corpus/claude)
#   BENCH_REPS   repetitions per measurement (default 3; median, min, max)
#   BENCH_TOL    stop a row after 2 runs whose times differ by less than this
#                fraction (default 0.1; 0 always runs BENCH_REPS times)
#   BENCH_INC    fraction of lines appended for the incremental run (default 0.01)
#   BENCH_SEED   generator seed (default 1)
#   BENCH_KEEP=1 keep the temporary directory (binaries, streams, lakes)
#   BENCH_PLATFORMS  platforms the generator replicates, comma-separated
#                (default: every one it can, as pos-bench-gen --help lists them)
#   BENCH_QREPS  runs of each query latency (default 5; median and p95)
#   BENCH_COPIES copies of the lake in the query lake (default 8: about 1 M messages at 1GB)
#   BENCH_SREPS  runs of each search latency (default 10; median and p95)
#   BENCH_SEARCH_CHUNKS  chunks of the search lake (default 1000000): copies
#                of the embedded lake, as the query lake is
#   BENCH_CCUSAGE=0  skip the ccusage comparison (default: install ccusage 20.0.24 from npm)
#   BENCH_PAIRS  ccusage-then-pos pairs behind each ratio to ccusage (default 5
#                for the cold chain and warm stats, 9 for the incremental sync)
#   BENCH_SYNC=only  only the rows of pos-sync (a hook's sync in one process)
#                and what they need: the incremental runs' home, state and
#                lake (untimed), ccusage, and the pos incr +1% rows beside them
#   BENCH_SHARED=0  skip the shared lake's rows (default: on when the SeaweedFS
#                binary is found, $POS_WEED or pipelines/seaweedfs.sh's build);
#                BENCH_SHARED=only builds the home's lake once, untimed, and
#                measures only those rows
#
# Figures go to stdout, progress and diagnostics to stderr.
set -euo pipefail
export LC_ALL=C

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

SIZE=${BENCH_SIZE:-500MB}
REPS=${BENCH_REPS:-3}
INC_FRACTION=${BENCH_INC:-0.01}
SEED=${BENCH_SEED:-1}
if [[ -z ${BENCH_SRC:-} && -n ${POS_CORPUS:-} ]]; then BENCH_SRC=$POS_CORPUS/claude; fi
SRC=${BENCH_SRC:-../shared/corpus/claude}
PLATFORMS=${BENCH_PLATFORMS:-}
QREPS=${BENCH_QREPS:-5}
TOL=${BENCH_TOL:-0.1}
COPIES=${BENCH_COPIES:-8}
BENCH_START=$EPOCHREALTIME

log() { printf 'bench: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pos-bench.XXXXXX")
# A lake a run replaces is moved into TRASH, deleted when the bench ends:
# ext4 passes over the inodes freed in the last minute when it allocates
# new ones, so a lake deleted just before the next run would make that
# run's files cost pos-load more CPU than a user's sync pays (README.md,
# "Caveats").
TRASH=$TMP/trash
mkdir -p "$TRASH"
discard() {
	local d
	for d; do
		if [[ -e $d ]]; then mv "$d" "$(mktemp -d "$TRASH/d.XXXXXX")/"; fi
	done
}
cleanup() {
	if declare -F stop_weed >/dev/null; then stop_weed; fi
	rm -rf "$TRASH"
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
# By make build (its flags), so that the figures are those of the binaries
# people run.
if ! make -s build BIN="$BIN" >"$TMP/build.log" 2>&1; then
	# A command someone is still writing must not stop the bench of the others.
	for d in cmd/pos-*/; do
		name=$(basename "$d")
		make -s build BIN="$BIN" CMDS="./$d" >>"$TMP/build.log" 2>&1 || log "$name does not build; skipping it"
	done
fi
go build -o "$BIN/pos-bench-gen" ./pipelines/bench/gen
go build -o "$BIN/pos-bench-scale" ./pipelines/bench/scale
go build -o "$BIN/pos-bench-mcpsearch" ./pipelines/bench/mcpsearch
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
	gen_platforms=() # none: the generator's default, the registry's platforms it can replicate
	if [[ -n $PLATFORMS ]]; then gen_platforms=(--platforms "$PLATFORMS"); fi
	GEN_LINE=$("$BIN/pos-bench-gen" --src "$SRC" --out "$DIR" --size "$SIZE" --seed "$SEED" "${gen_platforms[@]}")
	log "$GEN_LINE"
fi
# SOURCE bytes: the transcripts; every MB/s figure below is over these.
read -r SRC_BYTES SRC_FILES < <(find "$DIR/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' |
	awk '{s += $1; n++} END {printf "%d %d\n", s, n}')
((SRC_BYTES > 0)) || die "no .jsonl files under $DIR/.claude/projects"
# Every platform's transcripts (the "all platforms" row): the generator
# writes nothing else under DIR, and lakes live under TMP.
ALL_BYTES=$(find "$DIR" -type f \( -name '*.jsonl' -o -name '*.json' -o -name '.aider.*' \) -printf '%s\n' 2>/dev/null |
	awk '{s += $1} END {printf "%d", s}')
# Let the generator's writes reach the disk: no writeback in the timed runs.
sync

# warm reads the files under the paths in WARM (untimed), so that each
# timed run starts on a warm page cache, as its figures say. Reading them
# once is not enough on every machine: a host may reclaim page cache that
# was not touched for a minute (DAMON pageout on some virtual machines; see
# README.md, "The host takes the page cache back"), and a run that then
# waits on a slow disk measures the disk, ccusage's runs as well as pos's.
WARM=()
warm() {
	((${#WARM[@]} == 0)) || find "${WARM[@]}" -type f -exec cat {} + >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------------------
# Measuring

RSS_DIR=$TMP/rss
# rss NAME CMD...: run CMD and leave its peak RSS in KB in $RSS_DIR/NAME
# (with RSS_OFF set, just run CMD).
rss() {
	if [[ -n ${RSS_OFF:-} ]]; then
		shift
		"$@"
		return
	fi
	rss_peak "$@"
}
if /usr/bin/time -f '%M' -o /dev/null true 2>/dev/null && [[ -z ${BENCH_PROC_RSS:-} ]]; then
	RSS_HOW="GNU time %M"
	rss_peak() {
		local out=$RSS_DIR/$1
		shift
		/usr/bin/time -f '%M' -o "$out" "$@"
	}
else
	RSS_HOW="VmHWM sampled from /proc every 20 ms"
	[[ -n ${BENCH_PROC_RSS:-} ]] || log "hint: /usr/bin/time (GNU) not found, sampling VmHWM instead; install it for exact figures: apt-get install time"
	rss_peak() {
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
declare -A PEAK MED PEAKMB

# peaks adds the peak RSS each stage of the last run left in RSS_DIR to PEAK.
peaks() {
	local f kb
	for f in "$RSS_DIR"/*; do
		[[ -e $f ]] || continue
		kb=$(tail -n 1 "$f")
		[[ $kb =~ ^[0-9]+$ ]] || continue
		f=${f##*/}
		if ((kb > ${PEAK[$f]:-0})); then PEAK[$f]=$kb; fi
	done
}

# measure N LABEL BYTES SETUP RUN: time RUN N times, SETUP (untimed) before
# each; add a row with the number of runs, the median, min and max wall
# time, MB/s of BYTES at the median, and the peak RSS of each stage. When
# N >= 3 and the first two runs differ by less than TOL (as a fraction of
# the faster), the row stops after those two: their median is their mean.
# The timed runs start each stage bare; its peak RSS comes from one more,
# untimed run under GNU time, whose own start would otherwise be counted in
# a short query's time and in each stage of a sync. With RSS_TIMED=1 (or N = 1) the timed runs measure it.
measure() {
	local n=$1 label=$2 bytes=$3 setup=$4 fn=$5 i t0 t1 times=() bare=1
	if [[ -n ${RSS_TIMED:-} ]] || ((n == 1)); then bare=; fi
	PEAK=()
	for ((i = 1; i <= n; i++)); do
		rm -rf "$RSS_DIR"
		mkdir -p "$RSS_DIR"
		warm
		$setup
		t0=$EPOCHREALTIME
		if ! RSS_OFF=$bare $fn; then
			log "$label: failed"
			ROWS+=("$(printf '%-30s %s' "$label" "failed (see stderr)")")
			return 0
		fi
		t1=$EPOCHREALTIME
		times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')")
		if ((i == 2 && n >= 3)) && awk -v a="${times[0]}" -v b="${times[1]}" -v tol="$TOL" \
			'BEGIN {lo = a < b ? a : b; d = a - b; if (d < 0) d = -d; exit !(lo > 0 && d < tol * lo)}'; then
			n=2
		fi
		peaks
	done
	if [[ -n $bare ]]; then
		rm -rf "$RSS_DIR"
		mkdir -p "$RSS_DIR"
		$setup
		$fn || log "$label: the run for peak RSS failed"
		peaks
	fi
	local rssdesc="" s top=0
	for s in extract normalize load sync stats ccusage query publish fetch; do
		if [[ -v PEAK[$s] ]]; then
			rssdesc+="$s=$(((PEAK[$s] + 512) / 1024)) "
			if ((PEAK[$s] > top)); then top=${PEAK[$s]}; fi
		fi
	done
	PEAKMB[$label]=$(((top + 512) / 1024))
	local line
	line=$(printf '%s\n' "${times[@]}" | sort -n | awk -v bytes="$bytes" -v label="$label" -v rss="$rssdesc" '
		{t[NR] = $1}
		END {
			med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
			p95 = t[int(0.95 * NR + 0.999999)]
			mbs = (bytes > 0 && med > 0) ? sprintf("%.1f", bytes / 1e6 / med) : "-"
			printf "%-30s %4d %8.3f %7.3f %7.3f %7.3f %8s  %s", label, NR, med, p95, t[1], t[NR], mbs, rss
		}')
	MED[$label]=$(printf '%s\n' "${times[@]}" | sort -n | awk '{t[NR] = $1} END {printf "%.3f", (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2}')
	ROWS+=("$line")
	log "$line"
}

mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1e6}'; }

# paired N LABEL CC_FN SETUP POS_FN runs ccusage (CC_FN), then SETUP, then
# pos (POS_FN), N times, and keeps in PAIRED[LABEL] the ratios of their
# times (ccusage's over pos's): the median, then the lowest and highest.
declare -A PAIRED
paired() {
	local n=$1 label=$2 cc=$3 setup=$4 fn=$5 i t0 t1 t2 t3 ratios=()
	for ((i = 1; i <= n; i++)); do
		warm
		t0=$EPOCHREALTIME
		RSS_OFF=1 $cc || { log "$label: ccusage failed in pair $i"; return 0; }
		t1=$EPOCHREALTIME
		warm
		$setup
		t2=$EPOCHREALTIME
		RSS_OFF=1 $fn || { log "$label: pos failed in pair $i"; return 0; }
		t3=$EPOCHREALTIME
		ratios+=("$(awk -v a0="$t0" -v a1="$t1" -v b0="$t2" -v b1="$t3" 'BEGIN {printf "%.4f", (a1 - a0) / (b1 - b0)}')")
		log "$label: pair $i: ccusage $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') s, pos $(awk -v a="$t2" -v b="$t3" 'BEGIN {printf "%.3f", b - a}') s"
	done
	PAIRED[$label]=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{r[NR] = $1} END {printf "%d %.4f %.4f %.4f", NR, (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2, r[1], r[NR]}')
}

X=("$BIN/pos-extract" --platform claude_code --root "$DIR/.claude" --full -q)
NORM=("$BIN/pos-normalize" -q)
LOAD=("$BIN/pos-load" --lake "$TMP/lake" -q)

fresh_lake() { discard "$TMP/lake"; }
nothing() { :; }
run_x() { rss extract "${X[@]}" >/dev/null; }
run_xn() { rss extract "${X[@]}" | rss normalize "${NORM[@]}" >/dev/null; }
run_xnl() { rss extract "${X[@]}" | rss normalize "${NORM[@]}" | rss load "${LOAD[@]}"; }
run_n() { rss normalize "${NORM[@]}" <"$TMP/extracted.ndjson" >/dev/null; }
run_l() { rss load "${LOAD[@]}" <"$TMP/normalized.ndjson"; }

# ---------------------------------------------------------------------------
# The shared lake (pos-lake, Iceberg on S3): the lake of the home published
# to a SeaweedFS on loopback (`weed mini`: S3 and the Iceberg REST catalog,
# as internal/seaweedtest runs it for the tests), then `pos-query stats`
# from it with an empty cache (a fetch of every table, then the query) and
# with the cache kept (the catalog asked for the current snapshots, no data
# object read), beside the same stats on the local lake.

WEED_PID=
WEED_DIR=
stop_weed() {
	if [[ -n $WEED_PID ]]; then
		kill -INT "$WEED_PID" 2>/dev/null || true
		local i
		for ((i = 0; i < 100; i++)); do
			kill -0 "$WEED_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$WEED_PID" 2>/dev/null || true
		wait "$WEED_PID" 2>/dev/null || true
		WEED_PID=
	fi
	if [[ -n $WEED_DIR ]]; then rm -rf "$WEED_DIR"; fi
}
weed_bin() {
	if [[ -n ${POS_WEED:-} ]]; then
		echo "$POS_WEED"
	else
		# The build pipelines/seaweedfs.sh caches, of the version it names.
		echo "${XDG_CACHE_HOME:-$HOME/.cache}/pos/seaweedfs-$(sed -n 's/^version=\([^ ]*\).*/\1/p' pipelines/seaweedfs.sh)/weed"
	fi
}
# free_ports N prints N distinct free loopback ports, released for the
# server to take.
free_ports() {
	python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

SHARED_LINE="shared     skipped: load not built yet"
if [[ ${BENCH_SHARED:-1} == 0 ]]; then SHARED_LINE="shared     skipped (BENCH_SHARED=0)"; fi
# shared_rows LAKE: the rows of the shared lake, LAKE published.
shared_rows() {
	local lake=$1 weed ports p
	weed=$(weed_bin)
	if [[ ! -x $weed ]]; then
		SHARED_LINE="shared     skipped: no SeaweedFS binary at $weed (pipelines/seaweedfs.sh builds it; or set POS_WEED)"
		log "$SHARED_LINE"
		return 0
	fi
	if [[ ! -x $BIN/pos-lake || ! -x $BIN/pos-query || ! -d $lake/indexed ]]; then
		SHARED_LINE="shared     skipped: pos-lake or pos-query not built, or no lake"
		log "$SHARED_LINE"
		return 0
	fi
	if ! ports=$(free_ports 14); then
		SHARED_LINE="shared     skipped: no free loopback ports (python3 picks them)"
		log "$SHARED_LINE"
		return 0
	fi
	read -r -a p <<<"$ports"
	local key=pos-bench-access secret=pos-bench-secret-key-0123456789
	local s3=http://127.0.0.1:${p[0]} catalog=http://127.0.0.1:${p[1]}
	WEED_DIR=$(mktemp -d "${TMPDIR:-/tmp}/pos-bench-weed.XXXXXX")
	log "starting SeaweedFS ($weed mini) in $WEED_DIR: S3 $s3, catalog $catalog"
	AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret "$weed" mini \
		-dir="$WEED_DIR" -ip=127.0.0.1 -ip.bind=127.0.0.1 -bucket=team -tableBucket=tables \
		-s3.port="${p[0]}" -s3.port.iceberg="${p[1]}" -metricsPort="${p[2]}" -metricsIp=127.0.0.1 \
		-master.port="${p[3]}" -master.port.grpc="${p[4]}" -filer.port="${p[5]}" -filer.port.grpc="${p[6]}" \
		-volume.port="${p[7]}" -volume.port.grpc="${p[8]}" -s3.port.grpc="${p[9]}" -s3.port.lance="${p[10]}" \
		-admin.port="${p[11]}" -admin.port.grpc="${p[12]}" -webdav.port="${p[13]}" \
		-webdav=false -admin.ui=false -master.telemetry=false >"$WEED_DIR/weed.log" 2>&1 &
	WEED_PID=$!
	# Ready when S3 answers, the catalog lists the table bucket's namespaces
	# to a signed request (it answers before the bucket exists), and an
	# object can be stored (S3 answers before the volume server registers;
	# with too little free disk it never does).
	local deadline=$((SECONDS + 90)) ready=
	while ((SECONDS < deadline)); do
		if ! kill -0 "$WEED_PID" 2>/dev/null; then break; fi
		if [[ $(curl -s -o /dev/null -w '%{http_code}' "$s3/" || true) =~ ^[1-4] ]] &&
			[[ $(curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" "$catalog/v1/tables/namespaces" || true) == 200 ]] &&
			[[ $(curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" -H 'X-Amz-Content-Sha256: UNSIGNED-PAYLOAD' -X PUT --data-binary ready "$s3/team/.pos-ready" || true) == 200 ]]; then
			ready=1
			break
		fi
		sleep 0.2
	done
	if [[ -z $ready ]]; then
		tail -n 30 "$WEED_DIR/weed.log" >&2 || true
		SHARED_LINE="shared     failed: SeaweedFS did not start (its log above)"
		log "$SHARED_LINE"
		stop_weed
		return 0
	fi
	local aws=(env AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3=$s3)
	# The bytes published: the Parquet files of the tables a shared lake
	# holds (pos-lake publish's default tables; not raw).
	local t dirs=()
	for t in messages exchanges sessions documents decisions file_refs chunks; do
		if [[ -d $lake/indexed/$t ]]; then dirs+=("$lake/indexed/$t"); fi
	done
	SHARED_BYTES=$(find "${dirs[@]}" -name '*.parquet' -printf '%s\n' | awk '{s += $1} END {printf "%d", s}')
	SHARED_FILES=$(find "${dirs[@]}" -name '*.parquet' | wc -l)
	# A publish is the first one of its namespace: each run publishes to a
	# fresh one (what the local lake records it sent is kept per shared lake).
	SHARED_NS=0
	next_ns() { SHARED_NS=$((SHARED_NS + 1)); }
	s_publish() {
		rss publish "${aws[@]}" "$BIN/pos-lake" publish --local-lake "$lake" --lake "s3://tables/bench$SHARED_NS" \
			--catalog "$catalog" --machine bench --key-file "$TMP/scrub.key" >"$TMP/publish.out"
	}
	SSTATS=(stats --by day,model --format json)
	s_local() { rss stats "$BIN/pos-query" "${SSTATS[@]}" --lake "$lake" >/dev/null 2>&1; }
	s_stats() { rss stats "${aws[@]}" XDG_CACHE_HOME="$1" "$BIN/pos-query" "${SSTATS[@]}" --lake "s3://tables/bench$SHARED_NS" --catalog "$catalog" >/dev/null; }
	empty_cache() { discard "$TMP/xdg-cold"; mkdir -p "$TMP/xdg-cold"; }
	s_cold() { s_stats "$TMP/xdg-cold"; }
	s_warm() { s_stats "$TMP/xdg-warm"; }
	# The warm stats' two parts: pos-lake fetch finding every table's
	# snapshot already cached, and pos-query on the cache.
	s_fetch() { rss fetch "${aws[@]}" XDG_CACHE_HOME="$TMP/xdg-warm" "$BIN/pos-lake" fetch --lake "s3://tables/bench$SHARED_NS" --catalog "$catalog" >/dev/null; }
	s_cache() { rss stats "$BIN/pos-query" "${SSTATS[@]}" --lake "$(find "$TMP/xdg-warm/pos/shared" -mindepth 1 -maxdepth 1 -type d | head -n 1)" >/dev/null 2>&1; }
	WARM=("$lake")
	log "measuring shared: publish of $(mb "$SHARED_BYTES") MB in $SHARED_FILES files"
	# Rows of seconds: their peak RSS is taken in the timed runs (GNU time's
	# own start is lost in them), which saves a publish and a fetch.
	RSS_TIMED=1 measure "$REPS" "shared: publish" "$SHARED_BYTES" next_ns s_publish
	if [[ ${MED["shared: publish"]:-} == "" ]]; then
		SHARED_LINE="shared     failed: pos-lake publish (see stderr; SeaweedFS's log: $WEED_DIR/weed.log)"
		tail -n 20 "$WEED_DIR/weed.log" >&2 || true
		stop_weed
		return 0
	fi
	log "published: $(tr '\n' ' ' <"$TMP/publish.out" | head -c 2000)"
	WARM=()
	log "measuring shared: stats with an empty cache"
	RSS_TIMED=1 measure "$REPS" "shared: stats, cold" 0 empty_cache s_cold
	mkdir -p "$TMP/xdg-warm"
	RSS_OFF=1 s_warm || log "shared: filling the warm cache failed"
	WARM=("$TMP/xdg-warm")
	log "measuring shared: stats with the cache kept"
	measure "$QREPS" "shared: stats, warm" 0 nothing s_warm
	measure "$QREPS" "shared: fetch, warm (part)" 0 nothing s_fetch
	measure "$QREPS" "shared: stats on cache (part)" 0 nothing s_cache
	WARM=("$lake")
	log "measuring local: stats on the lake published"
	measure "$QREPS" "local: stats (same lake)" 0 nothing s_local
	local loc=${MED["local: stats (same lake)"]:-0}
	SHARED_LINE=$(awk -v b="$SHARED_BYTES" -v f="$SHARED_FILES" -v l="$lake" -v c="${MED["shared: stats, cold"]:-0}" -v w="${MED["shared: stats, warm"]:-0}" -v loc="$loc" 'BEGIN {
		printf "shared     published %.1f MB (%d Parquet files of %s/indexed, not raw) to weed mini on loopback; stats --by day,model: ", b / 1e6, f, l
		if (loc > 0) printf "cold %.1fx, warm %.1fx the local lake'"'"'s (medians)", c / loc, w / loc
		else printf "no local figure"
	}')
	stop_weed
}

if [[ ${BENCH_SHARED:-1} == only ]]; then
	# The shared lake's rows alone, on the lake of this home: the Claude Code
	# part with pos-embed's chunks, as the search rows' embedded lake.
	log "BENCH_SHARED=only: building the lake of the home once, untimed (extract | normalize | pos-embed | pos-load)"
	QSRC=$TMP/qlake0
	if [[ -x $BIN/pos-embed ]]; then
		"${X[@]}" | "${NORM[@]}" | "$BIN/pos-embed" -q | "$BIN/pos-load" --lake "$QSRC" -q
	else
		QSRC=$TMP/lake
		"${X[@]}" | "${NORM[@]}" | "${LOAD[@]}"
	fi
	shared_rows "$QSRC"
	cat <<EOF2
pos bench  $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(git describe --always --dirty 2>/dev/null || echo unknown)  $(go env GOVERSION)  (BENCH_SHARED=only)
machine    $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM
source     $(mb "$SRC_BYTES") MB in $SRC_FILES .jsonl files under $DIR/.claude/projects
generator  $GEN_LINE
timing     up to $REPS runs (2 when the first two differ by < $TOL; warm rows and local stats $QREPS), MB/s = published MB / median; peak RSS by $RSS_HOW, in the timed runs of publish and cold stats, in one more untimed run for the others

$(printf '%-30s %4s %8s %7s %7s %7s %8s  %s' stage runs median_s p95_s min_s max_s MB/s peak_rss_MB)
EOF2
	printf '%s\n' "${ROWS[@]}"
	printf '\n%s\n' "$SHARED_LINE"
	printf 'load       %s (1, 5, 15 min) at the end; other work on the machine slows every row\n' "$(uptime | sed 's/.*load average: //')"
	printf 'bench      %.0f s in all\n' "$(awk -v a="$BENCH_START" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}')"
	exit 0
fi

log "source: $(mb "$SRC_BYTES") MB in $SRC_FILES transcripts; $REPS repetitions each; peak RSS by $RSS_HOW"

# BENCH_SYNC=only: the rows of pos-sync and what they stand on alone.
SYNC_ONLY=
if [[ ${BENCH_SYNC:-} == only ]]; then SYNC_ONLY=1; fi
SKIPPED="skipped (BENCH_SYNC=only)"
LAKE_LINE="lake: not measured (BENCH_SYNC=only)"
QSRC=$TMP/lake
EXTRACTED_BYTES=0 NORMALIZED_BYTES=0
if [[ -z $SYNC_ONLY ]]; then
WARM=("$DIR/.claude")
log "measuring extract"
measure "$REPS" "extract" "$SRC_BYTES" nothing run_x
log "measuring extract | normalize"
measure "$REPS" "extract|normalize" "$SRC_BYTES" nothing run_xn
if [[ -n $HAVE_LOAD ]]; then
	log "measuring extract | normalize | load"
	measure "$REPS" "extract|normalize|load" "$SRC_BYTES" fresh_lake run_xnl
else
	ROWS+=("$(printf '%-30s %s' "extract|normalize|load" "load: not built yet")")
fi

if [[ -n $HAVE_LOAD && $PLATFORMS != claude_code ]]; then
	# Every platform of the home at once: each registered platform's default
	# locations under HOME, and Aider (which has none) from its project folders.
	run_all() {
		{
			HOME=$DIR XDG_CONFIG_HOME=$DIR/.config rss extract "$BIN/pos-extract" --full -q
			if [[ -d $DIR/aider ]]; then "$BIN/pos-extract" --full -q -p aider --root "$DIR/aider"; fi
		} | rss normalize "${NORM[@]}" | rss load "${LOAD[@]}"
	}
	WARM=("$DIR")
	log "measuring extract | normalize | load, all platforms"
	measure "$REPS" "all platforms: x|n|l" "$ALL_BYTES" fresh_lake run_all
fi

# The stages alone, on streams written once.
log "writing the extracted and normalized streams"
"${X[@]}" >"$TMP/extracted.ndjson"
"${NORM[@]}" <"$TMP/extracted.ndjson" >"$TMP/normalized.ndjson"
EXTRACTED_BYTES=$(stat -c %s "$TMP/extracted.ndjson")
NORMALIZED_BYTES=$(stat -c %s "$TMP/normalized.ndjson")
WARM=("$TMP/extracted.ndjson")
log "measuring normalize alone"
measure "$REPS" "normalize (from file)" "$SRC_BYTES" nothing run_n
LAKE_LINE="lake: load not built yet"
if [[ -n $HAVE_LOAD ]]; then
	WARM=("$TMP/normalized.ndjson")
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
	ROWS+=("$(printf '%-30s %s' "load (from file)" "load: not built yet")")
fi
# The query lake's source: this lake again with pos-embed's chunks (hash
# vectors), so that search can be measured too.
QSRC=$TMP/lake
if [[ -n $HAVE_LOAD && -x $BIN/pos-embed && -d $TMP/lake ]]; then
	log "embedding the normalized stream for the query lake (pos-embed | pos-load)"
	t0=$EPOCHREALTIME
	if "$BIN/pos-embed" -q <"$TMP/normalized.ndjson" | "$BIN/pos-load" --lake "$TMP/qlake0" -q; then
		QSRC=$TMP/qlake0
		log "pos-embed | pos-load: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}') s"
	else
		log "pos-embed | pos-load failed: the query lake has no chunks"
	fi
fi
rm -f "$TMP/extracted.ndjson" "$TMP/normalized.ndjson"
fi # SYNC_ONLY

# ---------------------------------------------------------------------------
# Incremental: watermarks from a first run, then append to some sessions.
# A sync reads what was appended, just written; the lake copy is written by
# restore_state: nothing to warm.
WARM=()

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
# put_back SRC DST makes DST what SRC is. With rsync, only what a run
# changed is written back, and DST's directories stay as they are, as a
# user's lake between two syncs does; a copy of the whole lake would leave
# the timed run's fsyncs waiting on its writeback, and give the lake new
# directories, whose listings a resident pos-sync would read again.
put_back() {
	if [[ -n $HAVE_RSYNC && -d $2 ]]; then
		rsync -a --delete "$1/" "$2/"
	else
		rm -rf "$2"
		cp -a "$1" "$2"
	fi
}
HAVE_RSYNC=
if command -v rsync >/dev/null; then HAVE_RSYNC=1; else log "rsync not found: each run's lake is a fresh copy"; fi
restore_state() {
	put_back "$TMP/state0" "$TMP/state"
	if [[ -d $TMP/inclake0 ]]; then put_back "$TMP/inclake0" "$TMP/inclake"; else rm -rf "$TMP/inclake"; fi
	# Setup, not part of the sync: written back now, or the timed run's
	# sync of the file system would write it.
	sync
}
INC_CHAIN="extract|normalize"
if [[ -n $HAVE_LOAD ]]; then INC_CHAIN+="|load"; fi
log "measuring incremental: first run (empty state)"
measure 1 "incr: first run" "$SRC_BYTES" empty_state run_inc
cp -a "$TMP/state" "$TMP/state0"
if [[ -d $TMP/inclake ]]; then cp -a "$TMP/inclake" "$TMP/inclake0"; fi
if [[ -z $SYNC_ONLY ]]; then
	log "measuring incremental: nothing changed"
	measure "$REPS" "incr: no change" 0 restore_state run_inc
fi
# A first append, synced once and not measured: the lake the measured runs
# start from has had an incremental run, as a user's has (tables with
# versions, pos.duckdb with their views), so they measure the steady state,
# not the one-off rewrite of pos.duckdb the first versions cause.
log "warming up: a first append, synced once"
"$BIN/pos-bench-gen" --out "$INC" --append --fraction "$INC_FRACTION" --seed $((SEED + 1)) >/dev/null
# The same append synced once by pos-sync, for its rows: its first sync
# embeds, and the lake's first chunks and postings rewrite pos.duckdb's
# views, once in a lake's life. Its rows start from this lake, in the
# state pos-sync leaves it (sync_rows).
if [[ -n $HAVE_LOAD && -x $BIN/pos-sync ]]; then
	restore_state
	XDG_DATA_HOME=$TMP/xdg "$BIN/pos-sync" -q -p claude_code --root "$INC/.claude" --state "$TMP/state" --lake "$TMP/inclake"
	rm -rf "$TMP/state0s" "$TMP/inclake0s"
	cp -a "$TMP/state" "$TMP/state0s"
	cp -a "$TMP/inclake" "$TMP/inclake0s"
fi
restore_state
run_inc
rm -rf "$TMP/state0" "$TMP/inclake0"
cp -a "$TMP/state" "$TMP/state0"
if [[ -d $TMP/inclake ]]; then cp -a "$TMP/inclake" "$TMP/inclake0"; fi
before=$(find "$INC/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
APPEND_LINE=$("$BIN/pos-bench-gen" --out "$INC" --append --fraction "$INC_FRACTION" --seed "$SEED")
log "$APPEND_LINE"
after=$(find "$INC/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
NEW_BYTES=$((after - before))
log "measuring incremental: appended lines"
[[ -n $SYNC_ONLY ]] || measure "$REPS" "incr: +$(awk -v f="$INC_FRACTION" 'BEGIN {print f * 100}')% lines" "$NEW_BYTES" restore_state run_inc

# ---------------------------------------------------------------------------
# Query latencies at about a million messages: a home of 8 GB would take
# longer to generate and load than the whole bench may, so the lake of this
# home is copied (pos-bench-scale: fresh ids, times moved back 91 days per
# copy, the long texts only in the first copy) into a query lake.

SCALE_LINE="query lake: load not built yet"
if [[ -n $HAVE_LOAD && -d $TMP/lake && -z $SYNC_ONLY ]]; then
	log "building the query lake ($COPIES copies)"
	SCALE_LINE=$("$BIN/pos-bench-scale" --from "$QSRC" --to "$TMP/lake1m" --copies "$COPIES")
	log "$SCALE_LINE"
	QLAKE=$TMP/lake1m
	QRY=("$BIN/pos-query")
	q_recent() { rss query "${QRY[@]}" recent --lake "$QLAKE" --format json >/dev/null; }
	q_timeline() { rss query "${QRY[@]}" timeline --lake "$QLAKE" --limit 50 --format json >/dev/null; }
	q_stats() { rss query "${QRY[@]}" stats --lake "$QLAKE" --by day,model --format json >/dev/null; }
	q_sessions() { rss query "${QRY[@]}" sessions --lake "$QLAKE" --limit 20 --format json >/dev/null; }
	q_search() { rss query "${QRY[@]}" search --lake "$QLAKE" --format json 'fix the failing test' >/dev/null; }
	# The first lookup that lists sessions builds the session cache
	# (<lake>/rollup/sessions-*: a row per partition and session); a sync's
	# report (pipelines/sync.sh) does it, and each later lookup only
	# recomputes the partitions a sync changed. Timed once, on its own row,
	# so that the rows below are the lookups as a user repeats them.
	q_first() { rss query "${QRY[@]}" sessions --lake "$QLAKE" --limit 1 --format json >/dev/null; }
	log "measuring query: the first lookup (builds the session cache)"
	measure 1 "query 1M: first (cache build)" 0 nothing q_first
	for q in recent timeline stats sessions; do
		log "measuring query: $q"
		measure "$QREPS" "query 1M: $q" 0 nothing "q_$q"
	done
	if ! "${QRY[@]}" search --help >/dev/null 2>&1; then
		ROWS+=("$(printf '%-30s %s' "query 1M: search" "skipped: this pos-query has no search command")")
	elif ! find "$QLAKE/indexed" -path '*chunks*' -name '*.parquet' -print -quit 2>/dev/null | grep -q .; then
		ROWS+=("$(printf '%-30s %s' "query 1M: search" "skipped: search reads pos-embed's chunks, and this chain has no pos-embed stage")")
	else
		log "measuring query: search"
		measure "$QREPS" "query 1M: search" 0 nothing q_search
	fi
fi

# ---------------------------------------------------------------------------
# Search latencies (every run counted: no early stop): a search from a new
# pos-query process on the embedded lake of this home; the same on a lake
# of about BENCH_SEARCH_CHUNKS chunks (copies of it), no date filter; and
# searches sent to one pos-mcp over stdio, once it answered a first.

SEARCH_LINE="search     skipped: no embedded lake (pos-embed or pos-load not built)"
if [[ $QSRC != "$TMP/lake" && -x $BIN/pos-mcp && -z $SYNC_ONLY ]]; then
	SREPS=${BENCH_SREPS:-10}
	SQ='fix the failing test'
	TOL_SAVED=$TOL
	TOL=0
	s_cold() { rss query "$BIN/pos-query" search --lake "$QSRC" --format json "$SQ" >/dev/null; }
	WARM=("$QSRC")
	log "measuring search: cold CLI"
	measure "$SREPS" "search: cold CLI (1 GB home)" 0 nothing s_cold
	CHUNKS0=$("$BIN/pos-query" sql --lake "$QSRC" --format csv 'SELECT count(*) AS n FROM chunks' 2>/dev/null | tail -n 1)
	SCOPIES=1
	if [[ $CHUNKS0 =~ ^[0-9]+$ ]] && ((CHUNKS0 > 0)); then
		SCOPIES=$(((${BENCH_SEARCH_CHUNKS:-1000000} + CHUNKS0 - 1) / CHUNKS0))
	fi
	SLAKE=$TMP/search1m
	if [[ -d ${QLAKE:-} && $SCOPIES == "$COPIES" ]]; then
		SLAKE=$QLAKE
	else
		log "building the search lake ($SCOPIES copies of $CHUNKS0 chunks)"
		"$BIN/pos-bench-scale" --from "$QSRC" --to "$SLAKE" --copies "$SCOPIES" >&2
	fi
	s_1m() { rss query "$BIN/pos-query" search --lake "$SLAKE" --format json "$SQ" >/dev/null; }
	WARM=("$SLAKE/indexed/chunks" "$SLAKE/searchindex")
	log "measuring search: $((CHUNKS0 * SCOPIES)) chunks"
	measure "$SREPS" "search: 1M chunks (no date filter)" 0 nothing s_1m
	TOL=$TOL_SAVED
	WARM=("$QSRC")
	warm
	log "measuring search: pos-mcp warm"
	if MCP_TIMES=$("$BIN/pos-bench-mcpsearch" -n "$SREPS" -query "$SQ" -- "$BIN/pos-mcp" --lake "$QSRC" 2>"$TMP/mcp.err"); then
		ROWS+=("$(printf '%s\n' $MCP_TIMES | sort -n | awk -v label="search: pos-mcp warm" '
			{t[NR] = $1}
			END {
				med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
				printf "%-30s %4d %8.3f %7.3f %7.3f %7.3f %8s  %s", label, NR, med, t[int(0.95 * NR + 0.999999)], t[1], t[NR], "-", "(one pos-mcp, after a first search)"
			}')")
	else
		ROWS+=("$(printf '%-30s %s' "search: pos-mcp warm" "failed: $(head -c 200 "$TMP/mcp.err")")")
	fi
	SEARCH_LINE="search     '$SQ', top 10 hybrid; cold CLI on the embedded lake ($CHUNKS0 chunks), 1M on $((CHUNKS0 * SCOPIES)) chunks; targets: cold <= 0.090 s, 1M <= 0.300 s, pos-mcp warm <= 0.040 s (medians)"
fi

# ---------------------------------------------------------------------------
# A hook's sync in one process: pos-sync runs extract | normalize | scrub |
# embed | load --require-scrubbed as the hooks do (pipelines/hooks), on the
# incremental runs' home, state and lake. Two steps, each set against
# ccusage reading the whole home in pairs: the +1% lines of the rows above
# (state and lake put back before each run to those pos-sync left after the
# warm-up append), and one
# agent turn, +0.1% lines appended after the +1% was synced (that state and
# lake restored before each run). The same turn through the five stages as
# five processes is timed beside it. Run inside the ccusage section: it
# uses its functions (run_cc_inc, STATS).

SYNC_LINE="pos-sync   skipped (needs ccusage and pos-load)"
sync_rows() {
	mkdir -p "$TMP/xdg" # pos-scrub's key: the bench's own, not the user's
	local args=(-q -p claude_code --root "$INC/.claude" --state "$TMP/state" --lake "$TMP/inclake")
	PSYNC=(env XDG_DATA_HOME="$TMP/xdg" "$BIN/pos-sync" "${args[@]}")
	run_psync() { rss sync "${PSYNC[@]}"; }
	run_psyncs() { run_psync && rss stats "${STATS[@]}" --lake "$TMP/inclake" >/dev/null 2>&1; }
	# The same stages as five processes, as lib.sh ran them before pos-sync.
	run_p5() {
		XDG_DATA_HOME=$TMP/xdg rss extract "${XI[@]}" | rss normalize "${NORM[@]}" |
			XDG_DATA_HOME=$TMP/xdg "$BIN/pos-scrub" -q | "$BIN/pos-embed" -q --lake "$TMP/inclake" |
			rss load "$BIN/pos-load" -q --require-scrubbed --lake "$TMP/inclake"
	}
	# The same syncs through a resident pos-sync, as the hooks run them:
	# pos-sync-client asks one started before the rows, and each run then
	# pays a small process's start, not pos-sync's nor the scrubber's rules.
	mkdir -p -m 700 "$TMP/rt"
	PSYNC_R=(env XDG_DATA_HOME="$TMP/xdg" XDG_RUNTIME_DIR="$TMP/rt" POS_SYNC_IDLE=30m "$BIN/pos-sync-client" "${args[@]}")
	run_rsync() { rss rsync "${PSYNC_R[@]}"; }
	run_rsyncs() { run_rsync && rss stats "${STATS[@]}" --lake "$TMP/inclake" >/dev/null 2>&1; }
	stop_resident() { pkill -f -- "^$BIN/pos-sync --serve" 2>/dev/null || :; }
	stop_resident
	WARM=("$INC/.claude")
	# The +1% from the lake pos-sync left after the warm-up append.
	restore_sync_state() {
		put_back "$TMP/state0s" "$TMP/state"
		put_back "$TMP/inclake0s" "$TMP/inclake"
		sync
	}
	log "measuring pos-sync: +1% lines"
	measure "$REPS" "pos-sync: +1% sync + stats" "$NEW_BYTES" restore_sync_state run_psyncs
	paired "${BENCH_PAIRS:-9}" "pos-sync: +1% sync + stats" run_cc_inc restore_sync_state run_psyncs
	restore_sync_state
	run_rsync # starts the resident
	measure "$REPS" "resident: +1% sync + stats" "$NEW_BYTES" restore_sync_state run_rsyncs
	paired "${BENCH_PAIRS:-9}" "resident: +1% sync + stats" run_cc_inc restore_sync_state run_rsyncs
	# What the +1% step's records cost the scrubber alone (its run on them
	# less its run on no input, which builds its rules): a part of the +1%
	# row no other stage's speed takes away.
	rm -rf "$TMP/state0x"
	cp -a "$TMP/state0s" "$TMP/state0x"
	XDG_DATA_HOME=$TMP/xdg "$BIN/pos-extract" -q -p claude_code --root "$INC/.claude" --state "$TMP/state0x" |
		"$BIN/pos-normalize" -q >"$TMP/inc1.ndjson"
	run_scrub0() { XDG_DATA_HOME=$TMP/xdg rss scrub "$BIN/pos-scrub" -q </dev/null >/dev/null; }
	run_scrub1() { XDG_DATA_HOME=$TMP/xdg rss scrub "$BIN/pos-scrub" -q <"$TMP/inc1.ndjson" >/dev/null; }
	measure "$REPS" "pos-scrub: no input" 0 nothing run_scrub0
	measure "$REPS" "pos-scrub: +1% records" "$(stat -c %s "$TMP/inc1.ndjson")" nothing run_scrub1
	# In step with the home now (the last pair synced it): the turn starts
	# from there.
	rm -rf "$TMP/state1" "$TMP/inclake1"
	cp -a "$TMP/state" "$TMP/state1"
	cp -a "$TMP/inclake" "$TMP/inclake1"
	local b0 b1
	b0=$(find "$INC/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
	TURN_LINE=$("$BIN/pos-bench-gen" --out "$INC" --append --fraction 0.001 --seed $((SEED + 50)))
	b1=$(find "$INC/.claude/projects" -type f -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
	log "$TURN_LINE"
	restore_turn() {
		put_back "$TMP/state1" "$TMP/state"
		put_back "$TMP/inclake1" "$TMP/inclake"
		sync
	}
	log "measuring pos-sync: one turn (+0.1% lines)"
	measure "$REPS" "pos-sync: +0.1% sync" "$((b1 - b0))" restore_turn run_psync
	measure "$REPS" "5 processes: +0.1% sync" "$((b1 - b0))" restore_turn run_p5
	measure "$REPS" "pos-sync: +0.1% sync + stats" "$((b1 - b0))" restore_turn run_psyncs
	paired "${BENCH_PAIRS:-9}" "pos-sync: +0.1% sync + stats" run_cc_inc restore_turn run_psyncs
	measure "$REPS" "resident: +0.1% sync" "$((b1 - b0))" restore_turn run_rsync
	measure "$REPS" "resident: +0.1% sync + stats" "$((b1 - b0))" restore_turn run_rsyncs
	paired "${BENCH_PAIRS:-9}" "resident: +0.1% sync + stats" run_cc_inc restore_turn run_rsyncs
	# In step with the home (the last pair synced the turn): a sync that
	# finds nothing new, and the report after it, the floor under every
	# sync + stats row.
	measure "$REPS" "resident: no new lines + stats" 0 nothing run_rsyncs
	stop_resident
	# Claude Code's status line after the turn: the statusline JSON of the
	# session the turn grew most recently, read against the warm lake.
	local tp sid
	tp=$(find "$INC/.claude/projects" -maxdepth 2 -type f -name '*.jsonl' -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
	sid=$(tail -n 1 "$tp" | grep -o '"sessionId":"[^"]*"' | cut -d'"' -f4)
	sid=${sid:-$(basename "$tp" .jsonl)}
	printf '{"session_id":"%s","transcript_path":"%s","model":{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"}}' "$sid" "$tp" >"$TMP/statusline.json"
	run_sl() { rss statusline "$BIN/pos-query" statusline --lake "$TMP/inclake" <"$TMP/statusline.json" >/dev/null; }
	WARM=("$TMP/inclake")
	measure "$REPS" "statusline (warm lake)" 0 nothing run_sl
	# The first after a sync: the memo of the session's older cost
	# (rollup/statusline.json) is made again.
	sl_forget() { rm -f "$TMP/inclake/rollup/statusline.json"; }
	measure "$REPS" "statusline, first after a sync" 0 sl_forget run_sl
	SYNC_LINE="pos-sync   one process (scrub and embed), and through a resident pos-sync as the hooks run it (pos-sync-client); the turn: ${TURN_LINE#gen: }; targets: +0.1% sync <= 0.100 s (median: ${MED["pos-sync: +0.1% sync"]:-?} s, resident ${MED["resident: +0.1% sync"]:-?} s), +1% sync + stats >= 10x faster than ccusage by pairs, statusline < 0.050 s (median ${MED["statusline (warm lake)"]:-?} s; the first after a sync ${MED["statusline, first after a sync"]:-?} s)"
}

# ---------------------------------------------------------------------------
# ccusage: the same question (tokens and cost per day and model) on the
# same Claude folder. ccusage sums usage lines; pos also writes the lake.

CC_LINE="ccusage: skipped (BENCH_CCUSAGE=0)"
if [[ ${BENCH_CCUSAGE:-1} != 0 && -n $HAVE_LOAD ]]; then
	if CCUSAGE=$(pipelines/ccusage/install.sh); then
		CC_LINE="ccusage $("$CCUSAGE" --version 2>/dev/null | awk '{print $NF}') ($CCUSAGE): claude daily --json --offline --timezone UTC"
		STATS=("$BIN/pos-query" stats --by day,model --format json)
		run_cc() { CLAUDE_CONFIG_DIR=$DIR/.claude rss ccusage "$CCUSAGE" claude daily --json --offline --timezone UTC >/dev/null; }
		run_cc_inc() { CLAUDE_CONFIG_DIR=$INC/.claude rss ccusage "$CCUSAGE" claude daily --json --offline --timezone UTC >/dev/null; }
		run_cold() { run_xnl && rss stats "${STATS[@]}" --lake "$TMP/lake" >/dev/null 2>&1; }
		run_warm() { rss stats "${STATS[@]}" --lake "$TMP/lake" >/dev/null 2>&1; }
		run_incs() { run_inc && rss stats "${STATS[@]}" --lake "$TMP/inclake" >/dev/null 2>&1; }
		if [[ -z $SYNC_ONLY ]]; then
		WARM=("$DIR/.claude")
		log "measuring ccusage"
		measure "$REPS" "ccusage claude daily" "$SRC_BYTES" nothing run_cc
		log "measuring pos cold: extract | normalize | load, then stats"
		# REPS, like the ccusage row it is set against: on a shared machine
		# a single run of the cold chain can be well off its median.
		measure "$REPS" "pos cold: x|n|l + stats" "$SRC_BYTES" fresh_lake run_cold
		WARM=("$DIR/.claude" "$TMP/lake")
		log "measuring pos warm: stats"
		# REPS, like the ccusage row it is set against.
		measure "$REPS" "pos warm: stats" 0 nothing run_warm
		fi # SYNC_ONLY
		WARM=("$INC/.claude")
		log "measuring ccusage and pos after appending lines"
		measure "$REPS" "ccusage, home +1%" "$SRC_BYTES" nothing run_cc_inc
		measure "$REPS" "pos incr: +1% sync + stats" "$NEW_BYTES" restore_state run_incs
		# The medians above are minutes apart, and on a shared machine
		# ccusage's own median moves between benches by more than the
		# targets' margins (README.md, "the pairs"). The two runs of a pair are seconds
		# apart and see the machine alike; the median of the pairs'
		# ratios is what the targets are read from.
		log "measuring ccusage and pos in pairs"
		if [[ -z $SYNC_ONLY ]]; then
			WARM=("$DIR/.claude")
			paired "${BENCH_PAIRS:-5}" "pos cold: x|n|l + stats" run_cc fresh_lake run_cold
			WARM=("$DIR/.claude" "$TMP/lake")
			paired "${BENCH_PAIRS:-5}" "pos warm: stats" run_cc nothing run_warm
		fi
		WARM=("$INC/.claude")
		paired "${BENCH_PAIRS:-9}" "pos incr: +1% sync + stats" run_cc_inc restore_state run_incs
		if [[ -x $BIN/pos-sync ]]; then
			sync_rows
		else
			SYNC_LINE="pos-sync   not built"
		fi
	else
		CC_LINE="ccusage: could not be installed (see stderr); comparison skipped"
	fi
fi

# ---------------------------------------------------------------------------
# Hook syncs: an agent hook syncs after every turn, each sync adding a small
# file to the partitions it touches. Ten small appends, each synced, on top
# of the incremental runs' lake (the last run left it in step with the
# home); then the most files any partition holds (pos-load compacts a
# partition once it holds 8 small ones).
WARM=()

HOOK_LINE="hooks      load not built yet"
if [[ -n $SYNC_ONLY ]]; then HOOK_LINE="hooks      $SKIPPED"; fi
if [[ -n $HAVE_LOAD && -z $SYNC_ONLY ]]; then
	HOOK_I=0
	hook_append() {
		HOOK_I=$((HOOK_I + 1))
		"$BIN/pos-bench-gen" --out "$INC" --append --fraction 0.001 --seed $((SEED + 100 + HOOK_I)) >/dev/null
		sync
	}
	log "measuring hook syncs"
	runs_before=$(wc -l <"$TMP/inclake/_state/runs.ndjson")
	TOL_SAVED=$TOL
	TOL=0 # every one of the ten
	# Each run appends: no extra run for peak RSS, which the ten measure.
	RSS_TIMED=1 measure 10 "incr: hook syncs (+0.1% each)" 0 hook_append run_inc
	TOL=$TOL_SAVED
	most=$(find "$TMP/inclake/raw" "$TMP/inclake/indexed" -name '*.parquet' -printf '%h\n' | sort | uniq -c | sort -n | tail -n 1 | awk '{print $1}')
	compacted=$(tail -n +"$((runs_before + 1))" "$TMP/inclake/_state/runs.ndjson" | grep -o '"compacted":[0-9]*' | awk -F: '{s += $2} END {print s + 0}')
	HOOK_LINE="hooks      10 syncs of +0.1% lines each (row above): $compacted partitions compacted; at most $most files in a partition after them"
fi

# ---------------------------------------------------------------------------
# The shared lake's rows, on the embedded lake of the home (the search
# rows' "1 GB home"), else on the lake of the last cold run.

if [[ -n $SYNC_ONLY ]]; then
	SHARED_LINE="shared     $SKIPPED" SCALE_LINE=$SKIPPED SEARCH_LINE="search     $SKIPPED"
fi
if [[ ${BENCH_SHARED:-1} != 0 && -n $HAVE_LOAD && -z $SYNC_ONLY ]]; then
	shared_rows "$QSRC"
fi

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
timing     up to $REPS runs (2 when the first two differ by < $TOL; queries $QREPS; first run: 1), warm page cache (a run's input read again, untimed, before it); MB/s = source .jsonl MB / median (incr +x%: appended MB); timed runs start each stage bare, peak RSS per stage by $RSS_HOW in one more untimed run (hook syncs: in the timed runs)

$(printf '%-30s %4s %8s %7s %7s %7s %8s  %s' stage runs median_s p95_s min_s max_s MB/s peak_rss_MB)
EOF
printf '%s\n' "${ROWS[@]}"

# ratio prints ccusage's time over pos's ("12.3x faster"), or, when pos is
# the slower, pos's over ccusage's ("10.8x ccusage's time").
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) { if (a >= b) printf "%.1fx faster", a / b; else printf "%.1fx ccusage'"'"'s time", b / a } else print "-"}'; }
if [[ -v MED["ccusage claude daily"] || -v MED["ccusage, home +1%"] ]]; then
	cc=${MED["ccusage claude daily"]:-${MED["ccusage, home +1%"]}}
	cci=${MED["ccusage, home +1%"]:-$cc}
	printf '\n%s\n%-30s %9s %9s  %s\n' "$CC_LINE" "vs ccusage" median_s peak_MB "pos against ccusage (median times)"
	for l in "ccusage claude daily" "pos cold: x|n|l + stats" "pos warm: stats" "ccusage, home +1%" "pos incr: +1% sync + stats" "pos-sync: +1% sync + stats" "pos-sync: +0.1% sync + stats" "resident: +1% sync + stats" "resident: +0.1% sync + stats"; do
		[[ -v MED[$l] ]] || continue
		base=$cc
		if [[ $l == *"+1%"* || $l == *"+0.1%"* ]]; then base=$cci; fi
		r=""
		if [[ $l == pos* || $l == resident* ]]; then r=$(ratio "$base" "${MED[$l]}"); fi
		printf '%-30s %9s %9s  %s\n' "$l" "${MED[$l]}" "${PEAKMB[$l]}" "$r"
	done
	if ((${#PAIRED[@]} > 0)); then
		printf '\n%-30s %s\n' "paired with ccusage" "each pair: ccusage, then pos, seconds apart; the median of the pairs' ratios (lowest, highest)"
		for l in "pos cold: x|n|l + stats" "pos warm: stats" "pos incr: +1% sync + stats" "pos-sync: +1% sync + stats" "pos-sync: +0.1% sync + stats" "resident: +1% sync + stats" "resident: +0.1% sync + stats"; do
			[[ -v PAIRED[$l] ]] || continue
			read -r n med lo hi <<<"${PAIRED[$l]}"
			# A ratio r is ccusage's time over pos's: "faster" when r >= 1.
			printf '%-30s %s\n' "$l" "$(awk -v n="$n" -v m="$med" -v lo="$lo" -v hi="$hi" 'BEGIN {
				if (m >= 1) printf "%.1fx faster (%.1fx, %.1fx; %d pairs)", m, lo, hi, n
				else printf "%.1fx ccusage'"'"'s time (%.1fx, %.1fx; %d pairs)", 1 / m, 1 / hi, 1 / lo, n
			}')"
		done
	fi
fi
# The stage that bounds the cold chain: of the three stages timed alone,
# the one with the fewest MB/s of source; its limit is its library's
# (STACK.md: parquet-go writes realistic rows with zstd at 86-100 MB/s).
bound=""
for l in "extract" "normalize (from file)" "load (from file)"; do
	[[ -v MED[$l] ]] || continue
	mbs=$(awk -v b="$SRC_BYTES" -v t="${MED[$l]}" 'BEGIN {if (t > 0) printf "%.1f", b / 1e6 / t}')
	[[ -n $mbs ]] || continue
	if [[ -z $bound ]] || awk -v a="$mbs" -v b="${bound#* }" 'BEGIN {exit !(a < b)}'; then
		bound="$l $mbs"
	fi
done
if [[ -n $bound ]]; then
	stage=${bound% *}
	printf '\ncold path  bounded by %s: %s MB/s of source alone, the slowest stage; ' "${stage% (from file)}" "${bound##* }"
	if [[ $stage == load* ]]; then
		printf 'STACK.md measured parquet-go writing realistic rows with zstd at 86-100 MB/s\n'
	else
		printf 'see pipelines/bench/README.md\n'
	fi
fi
printf '\n%s\n' "$HOOK_LINE"
printf '%s\n' "$SYNC_LINE"
printf '%s\n' "$SHARED_LINE"
printf 'query lake %s\n' "$SCALE_LINE"
printf '%s\n' "$SEARCH_LINE"
printf 'load       %s (1, 5, 15 min) at the end; other work on the machine slows every row\n' "$(uptime | sed 's/.*load average: //')"
printf 'bench      %.0f s in all\n' "$(awk -v a="$BENCH_START" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}')"
