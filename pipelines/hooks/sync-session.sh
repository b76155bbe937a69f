#!/usr/bin/env bash
# sync-session.sh — a Claude Code hook (SessionEnd, PreCompact): loads the
# session that just ended, or is about to be compacted, into the pos lake, in
# the background.
#
# Claude Code runs it with the hook's JSON on stdin, e.g.
#   {"session_id": "…", "transcript_path": "~/.claude/projects/-home-me-app/<id>.jsonl",
#    "hook_event_name": "SessionEnd", "cwd": "…", "reason": "exit"}
# It starts, detached from the agent,
#   pos-extract --platform claude_code --root <transcript> --root <its subagents> --root <plans>
#     | pos-normalize | pos-scrub | pos-embed | pos-load
# (incremental: only what the lake does not hold yet is read) and exits 0 at
# once. Whatever happens — no binaries, a bad payload, a failed load — the
# agent is never blocked or failed: the outcome goes to the log.
#
# Environment (and those of lib.sh: POS_LAKE, POS_BIN, POS_SYNC_WAIT,
# POS_NO_SCRUB, POS_NO_EMBED):
#   POS_HOOK_LOG          the log (default ${XDG_STATE_HOME:-~/.local/state}/pos/hooks.log)
#   POS_HOOK_FOREGROUND=1 run in the foreground (debugging); still exits 0
set -uo pipefail
umask 077 # the log and the lake are private

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log=${POS_HOOK_LOG:-${XDG_STATE_HOME:-$HOME/.local/state}/pos/hooks.log}

note() { printf '%s sync-session[%d]: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$$" "$*"; }

# The worker: runs detached, with its output in the log.
if [ "${1:-}" = --worker ]; then
  transcript=$2 session=$3 event=$4
  # shellcheck source=lib.sh
  . "$here/lib.sh"
  if ! pos_setup; then
    note "$session: $event: not synced: $pos_error"
    exit 0
  fi
  [ -n "$pos_warning" ] && note "$session: $pos_warning"
  pos_resident=1 # a sync after every turn: in the resident pos-sync
  roots=(--root "$transcript")
  # The session's own folder (subagents, tool results), and the plans.
  [ -d "${transcript%.jsonl}" ] && roots+=(--root "${transcript%.jsonl}")
  projects=$(dirname "$(dirname "$transcript")")
  if [ "$(basename "$projects")" = projects ] && [ -d "$(dirname "$projects")/plans" ]; then
    roots+=(--root "$(dirname "$projects")/plans")
  fi
  note "$session: $event: waiting for the sync lock"
  if ! pos_lock; then
    note "$session: $event: not synced: another sync held the lock for ${POS_SYNC_WAIT:-900}s"
    exit 0
  fi
  note "$session: $event: syncing $transcript into $POS_LAKE: pos-extract | $(pos_describe)"
  start=$SECONDS
  if pos_pipeline --platform claude_code "${roots[@]}"; then
    note "$session: $event: done in $((SECONDS - start))s (exit codes ${pos_codes[*]})"
  else
    note "$session: $event: failed (exit codes ${pos_codes[*]}); the next sync retries what is missing"
  fi
  exit 0
fi

# The hook: read the payload, start the worker, return.
mkdir -p "$(dirname "$log")" 2>/dev/null
if [ -f "$log" ] && [ "$(wc -c <"$log")" -gt 5000000 ]; then
  mv -f "$log" "$log.1" 2>/dev/null
fi
exec 3<&0 </dev/null >>"$log" 2>&1 || exit 0

payload=""
[ -t 3 ] || payload=$(cat <&3 2>/dev/null)
exec 3<&-

# field NAME: a top-level string field of the payload: with jq, or python3,
# or (paths without quotes) sed.
field() {
  if command -v jq >/dev/null; then
    printf '%s' "$payload" | jq -r --arg f "$1" '.[$f] // empty | strings' 2>/dev/null
  elif command -v python3 >/dev/null; then
    printf '%s' "$payload" | python3 -c 'import json,sys
v = json.load(sys.stdin).get(sys.argv[1])
print(v if isinstance(v, str) else "")' "$1" 2>/dev/null
  else
    printf '%s' "$payload" | tr '\n' ' ' | sed -n 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | sed 's/\\\//\//g'
  fi
}

transcript=$(field transcript_path)
session=$(field session_id)
event=$(field hook_event_name)
session=${session:-unknown} event=${event:-hook}
case $transcript in
  "~/"*) transcript=$HOME/${transcript#"~/"} ;;
esac
if [ -z "$transcript" ]; then
  note "$session: $event: no transcript_path in the hook's input; nothing to sync"
  exit 0
fi
if [ ! -f "$transcript" ]; then
  note "$session: $event: the transcript $transcript does not exist; nothing to sync"
  exit 0
fi

self=$here/$(basename "${BASH_SOURCE[0]}")
if [ "${POS_HOOK_FOREGROUND:-}" = 1 ]; then
  "$BASH" "$self" --worker "$transcript" "$session" "$event"
  exit 0
fi
note "$session: $event: starting a background sync"
if command -v setsid >/dev/null; then
  setsid "$BASH" "$self" --worker "$transcript" "$session" "$event" &
else
  nohup "$BASH" "$self" --worker "$transcript" "$session" "$event" &
fi
exit 0
