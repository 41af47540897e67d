#!/bin/sh
# One night's boggle run, for cron or a systemd service: new boards every day, retries for
# the failures a re-run fixes, an alert for the ones that need a person.
#
#   boggle-nightly.sh [DATE] [more `boggle run` options...]     DATE: YYYY-MM-DD or today (default)
#
# cron (02:15 every night; cron mails what the script prints, and the alert hook below runs on
# any failure):
#   15 2 * * * /opt/boggle-pipeline/configs/schedule/boggle-nightly.sh >> /var/log/boggle-nightly.log 2>&1
#
# Exit codes of `boggle run` (docs/reference/exit-codes.md) and what this script does with them:
#   0            done (also "already complete": a retry of a finished night is a no-op)
#   3            done, some input rows rejected: success, the alert says so (ingest only)
#   6            done, but the data breaks an expectation ([expect] in the config, --expect):
#                the night's data is kept; alerted at once, never retried (a re-run would
#                measure the same boards), and the script exits 6
#   5 130 143    I/O failure or a dead worker, Ctrl-C, SIGTERM: transient; retried here
#                BOGGLE_RETRIES times, BOGGLE_RETRY_DELAY seconds apart (each retry resumes)
#   1 2 4 other  a bug, bad input or config, a busy/foreign/damaged output directory: a person
#                must look; alerted at once, never retried
#   137          killed by SIGKILL, most often the OOM killer: the same night would be killed
#                again, so it is alerted at once and never retried (like any other code)
# The script exits with the last code of `boggle run` (3 becomes 0). A setting or a DATE that is
# not valid (below) is refused before anything runs: one line on stderr, exit 2, no alert.
#
# Settings (environment):
#   BOGGLE              the boggle command      (default /opt/boggle-pipeline/.venv/bin/boggle)
#   BOGGLE_CONFIG       the run config          (default /opt/boggle-pipeline/configs/schedule/nightly.toml)
#   BOGGLE_RUNS         folder of the nightly runs (default /data/runs/nightly): RUNS/<date>/
#                       (the date is in the data too: the run_date column) and
#                       RUNS.summaries/<date>.json beside it (outside RUNS: RUNS/* names the
#                       nights and nothing else, and engines read RUNS as a folder of Parquet)
#   BOGGLE_RETRIES      retries of a transient failure, 0 to 100 (default 2; 0 under systemd's Restart=)
#   BOGGLE_RETRY_DELAY  seconds between tries, 0 to 86400 (default 300)
#   BOGGLE_ALERT        a command run as `$BOGGLE_ALERT EXIT_CODE SUMMARY_JSON DATE` when a person is
#                       needed (or rows were rejected); default: mail the summary to BOGGLE_MAILTO
#                       (default root) when `mail` exists, else one line on stderr
#   BOGGLE_TREND_REPORT a folder: after a night that succeeded, `boggle analyze` of every finished
#                       night in RUNS into it (the report's trend section; an unfinished night is
#                       named on stderr and left out); a failure there is one line on stderr and
#                       leaves the night's exit code alone (default: no report)
set -u

refuse() {  # refuse MESSAGE: a setting a person must fix; nothing has run
  echo "boggle-nightly: error: $1" >&2
  exit 2
}

# a whole number from 0 to MOST (digits only: no sign, no blank, no 1e3; checked by length first,
# so a 30-digit value cannot overflow the shell's test)
whole() {  # whole NAME VALUE MOST
  case $2 in
    ''|*[!0-9]*) refuse "$1=$2: expected a whole number from 0 to $3" ;;
  esac
  if [ "${#2}" -gt 6 ] || [ "$2" -gt "$3" ]; then refuse "$1=$2: expected a whole number from 0 to $3"; fi
}

# a real calendar date YYYY-MM-DD: it names a folder under RUNS, so nothing else (no "/", no
# "..") gets that far
real_date() {  # real_date TEXT
  case $1 in
    [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
    *) return 1 ;;
  esac
  y=${1%%-*}; m=${1#*-}; m=${m%-*}; d=${1##*-}
  y=$((1$y - 10000)); m=$((1$m - 100)); d=$((1$d - 100))  # no leading zero read as octal
  case $m in
    1|3|5|7|8|10|12) last=31 ;;
    4|6|9|11) last=30 ;;
    2) if [ $((y % 4)) -eq 0 ] && { [ $((y % 100)) -ne 0 ] || [ $((y % 400)) -eq 0 ]; }; then
         last=29
       else
         last=28
       fi ;;
    *) return 1 ;;
  esac
  [ "$d" -ge 1 ] && [ "$d" -le "$last" ]
}

DATE=today
case "${1:-}" in
  -*|"") ;;
  *) DATE=$1; shift ;;
esac
BOGGLE=${BOGGLE:-/opt/boggle-pipeline/.venv/bin/boggle}
CONFIG=${BOGGLE_CONFIG:-/opt/boggle-pipeline/configs/schedule/nightly.toml}
RUNS=${BOGGLE_RUNS:-/data/runs/nightly}
RETRIES=${BOGGLE_RETRIES:-2}
DELAY=${BOGGLE_RETRY_DELAY:-300}
whole BOGGLE_RETRIES "$RETRIES" 100
whole BOGGLE_RETRY_DELAY "$DELAY" 86400
[ "$DATE" = today ] || real_date "$DATE" || refuse "DATE $DATE: expected a real date YYYY-MM-DD or today"

alert() {  # alert EXIT_CODE SUMMARY
  if [ -n "${BOGGLE_ALERT:-}" ]; then
    $BOGGLE_ALERT "$1" "$2" "$DATE"
  elif command -v mail >/dev/null 2>&1; then
    mail -s "boggle nightly $DATE: exit $1" "${BOGGLE_MAILTO:-root}" < "$2"
  else
    echo "boggle-nightly: exit $1 for $DATE needs a look: $2" >&2
  fi
}

# "today" is the local date, as boggle reads it; resolved once, so a retry after midnight
# resumes the night it started
[ "$DATE" = today ] && DATE=$(date +%F)
mkdir -p "$RUNS.summaries" || exit 5  # the summary is written only into a folder that exists
summary="$RUNS.summaries/$DATE.json"
night="$RUNS/$DATE"

trend() {  # the trend report over every finished night, when BOGGLE_TREND_REPORT names a folder
  [ -n "${BOGGLE_TREND_REPORT:-}" ] || return 0
  set --  # the function's own arguments: the finished nights (an unfinished one would fail them all)
  for d in "$RUNS"/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/; do
    [ -d "$d" ] || continue  # no night yet: the pattern is left as it is
    if [ -f "$d/_SUCCESS" ] || [ -f "$d/_SUCCESS.parquet" ]; then
      set -- "$@" "$d"
    else
      echo "boggle-nightly: trend report: $d is unfinished, left out" >&2
    fi
  done
  $BOGGLE analyze "$@" --out "$BOGGLE_TREND_REPORT" --quiet \
    || echo "boggle-nightly: the trend report in $BOGGLE_TREND_REPORT failed (exit $?)" >&2
}
tries=0
while :; do
  $BOGGLE run "$CONFIG" --seed-from-date "$DATE" --out "$night" --quiet --summary-json "$summary" "$@"
  rc=$?
  case $rc in
    0) trend; exit 0 ;;
    3) alert 3 "$summary"; trend; exit 0 ;;
    6) alert 6 "$summary"; trend; exit 6 ;;  # the data is written: the trend report shows the night
    5|130|143)
      # written so that a test that cannot be evaluated stops rather than retries
      if [ "$tries" -lt "$RETRIES" ]; then :; else alert "$rc" "$summary"; exit "$rc"; fi
      tries=$((tries + 1))
      echo "boggle-nightly: exit $rc (transient), retry $tries of $RETRIES in $DELAY s" >&2
      sleep "$DELAY" ;;
    *) alert "$rc" "$summary"; exit "$rc" ;;
  esac
done
