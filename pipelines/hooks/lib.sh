# lib.sh — what the hook and the sync scripts share: where the binaries and
# the lake are, the sync lock, the pipeline. Sourced, not run.
#
# Environment:
#   POS_LAKE       the lake (default ${XDG_DATA_HOME:-~/.local/share}/pos/lake)
#   POS_BIN        where the pos-* binaries are (default: bin/ of this
#                  checkout, then $PATH)
#   POS_SYNC_WAIT  seconds a sync waits for another one to finish (default 900)
#   POS_NO_SCRUB=1 load without scrubbing (pos-scrub --off): secrets reach
#                  the lake, which records that it was the user's choice
#   POS_NO_EMBED=1 leave pos-embed out: new sessions are not searchable
#                  until embedded
#   POS_SYNC_PIPE=1 run the stages as a pipeline of processes even where
#                  pos-sync (the same stages in one process) is built
#   POS_SYNC_RESIDENT=0  the hooks' syncs run in a pos-sync of their own,
#                  not in the resident one (pos-sync --resident), which the
#                  first hook starts and which ends after 15 idle minutes

pos_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# pos_setup finds the binaries and the lake and chooses the stages. It
# returns 1 when a required binary is missing, with the reason in
# pos_error; pos_warning says when secrets will not be scrubbed.
pos_setup() {
  local bin=${POS_BIN:-$pos_here/../../bin}
  [ -d "$bin" ] && PATH="$bin:$PATH"
  export PATH
  POS_LAKE=${POS_LAKE:-${XDG_DATA_HOME:-$HOME/.local/share}/pos/lake}
  export POS_LAKE
  pos_error="" pos_warning=""
  local b
  for b in pos-extract pos-normalize pos-load; do
    if ! command -v "$b" >/dev/null; then
      pos_error="$b not found (POS_BIN=${POS_BIN:-unset}): build the binaries with 'make build' or set POS_BIN"
      return 1
    fi
  done
  pos_stages=(pos-normalize)
  if [ "${POS_NO_SCRUB:-}" = 1 ]; then
    pos_warning="POS_NO_SCRUB=1: loading without scrubbing, secrets are not redacted"
    command -v pos-scrub >/dev/null && pos_stages+=(pos-scrub-off)
  elif command -v pos-scrub >/dev/null; then
    pos_stages+=(pos-scrub)
  else
    pos_error="pos-scrub not found: refusing to load unscrubbed history (POS_NO_SCRUB=1 loads it anyway)"
    return 1
  fi
  if [ "${POS_NO_EMBED:-}" != 1 ] && command -v pos-embed >/dev/null; then
    pos_stages+=(pos-embed)
  fi
  # pos-sync runs the same stages in one process: a sync after each turn
  # then pays one process start, not five.
  pos_fast=""
  if [ "${POS_SYNC_PIPE:-}" != 1 ] && command -v pos-sync >/dev/null; then
    pos_fast=1
  fi
  return 0
}

# pos_describe prints the stages after pos-extract: "pos-normalize |
# pos-scrub | pos-embed | pos-load --require-scrubbed".
pos_describe() {
  local s out="" load=pos-load
  for s in "${pos_stages[@]}"; do
    case $s in
      pos-scrub-off) out+="pos-scrub --off | " ;;
      pos-scrub) out+="$s | "; load="pos-load --require-scrubbed" ;;
      *) out+="$s | " ;;
    esac
  done
  printf '%s%s' "$out" "$load"
  if [ -n "${pos_fast:-}" ] && pos_use_resident; then
    printf ' (in one process: the resident pos-sync)'
  elif [ -n "${pos_fast:-}" ]; then
    printf ' (in one process: pos-sync)'
  fi
  return 0
}

# pos_lock waits up to POS_SYNC_WAIT seconds for the sync lock of the lake,
# so that syncs (a hook, the timer, a backfill) run one after the other; the
# later one then reads only what the earlier left. pos-load has a lock of
# its own: this one only saves reading the same bytes twice.
pos_lock() {
  local wait=${POS_SYNC_WAIT:-900}
  mkdir -p "$POS_LAKE/_state" 2>/dev/null && chmod 700 "$POS_LAKE" "$POS_LAKE/_state" 2>/dev/null
  pos_lockfile=$POS_LAKE/_state/sync.lock
  if command -v flock >/dev/null; then
    exec 9>>"$pos_lockfile"
    flock -w "$wait" 9
    return
  fi
  # No flock (macOS): a lock directory, taken over when its holder is gone.
  local start=$SECONDS
  until mkdir "$pos_lockfile.d" 2>/dev/null; do
    local holder
    holder=$(cat "$pos_lockfile.d/pid" 2>/dev/null)
    if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
      rm -rf "$pos_lockfile.d"
      continue
    fi
    [ $((SECONDS - start)) -ge "$wait" ] && return 1
    sleep 1
  done
  echo $$ >"$pos_lockfile.d/pid"
  trap 'rm -rf "$pos_lockfile.d"' EXIT
}

# pos_use_resident says whether this script's syncs run in the resident
# pos-sync: a hook's do (pos_resident=1), unless POS_SYNC_RESIDENT=0.
pos_use_resident() {
  [ -n "${pos_resident:-}" ] && [ "${POS_SYNC_RESIDENT:-}" != 0 ]
}

# pos_pipeline runs pos-extract with the given arguments, then the stages,
# then pos-load (all in pos-sync, when it is built), and sets pos_codes to
# the exit codes. It returns 0 when the
# run completed (every stage 0, or 3: bad input lines skipped, each reported
# on stderr), else the first other code.
pos_pipeline() {
  local errexit=0
  [[ $- == *e* ]] && errexit=1
  set +e
  if [ -n "${pos_fast:-}" ]; then
    local flags=()
    case " ${pos_stages[*]} " in *" pos-scrub-off "*) flags+=(--no-scrub) ;; esac
    case " ${pos_stages[*]} " in *" pos-embed "*) ;; *) flags+=(--no-embed) ;; esac
    # A hook's sync after every turn runs in the resident pos-sync: no
    # process start, no scrubber rules built, for each turn.
    if pos_use_resident && command -v pos-sync-client >/dev/null; then
      # Its small client starts in milliseconds; pos-sync --resident
      # would pay pos-sync's own start.
      pos-sync-client "${flags[@]}" "$@"
    elif pos_use_resident; then
      pos-sync --resident "${flags[@]}" "$@"
    else
      pos-sync "${flags[@]}" "$@"
    fi
    pos_codes=($?)
    [ "$errexit" = 1 ] && set -e
    case ${pos_codes[0]} in
      0|3) return 0 ;;
      *) return "${pos_codes[0]}" ;;
    esac
  fi
  # pos-scrub marks every record it writes: with it in the pipe, pos-load
  # refuses any record that did not pass it.
  case "${pos_stages[*]}" in
    "pos-normalize pos-scrub pos-embed") pos-extract "$@" | pos-normalize | pos-scrub | pos-embed | pos-load --require-scrubbed ;;
    "pos-normalize pos-scrub") pos-extract "$@" | pos-normalize | pos-scrub | pos-load --require-scrubbed ;;
    "pos-normalize pos-scrub-off pos-embed") pos-extract "$@" | pos-normalize | pos-scrub --off | pos-embed | pos-load ;;
    "pos-normalize pos-scrub-off") pos-extract "$@" | pos-normalize | pos-scrub --off | pos-load ;;
    "pos-normalize pos-embed") pos-extract "$@" | pos-normalize | pos-embed | pos-load ;;
    *) pos-extract "$@" | pos-normalize | pos-load ;;
  esac
  pos_codes=("${PIPESTATUS[@]}")
  [ "$errexit" = 1 ] && set -e
  local c
  for c in "${pos_codes[@]}"; do
    case $c in
      0|3) ;;
      *) return "$c" ;;
    esac
  done
  return 0
}
