# Sourced by scripts/test and editors/test.sh. `heartbeat WHAT CMD...` runs CMD and, while it
# runs, prints "   WHAT: still running (Ns)" every minute (HEARTBEAT_SECONDS), so that a CI
# log never stays silent for minutes during a quiet step (apt-get -qq, pip -q, npm
# --loglevel=error); returns CMD's exit status.
heartbeat() {
  local what=$1 every=${HEARTBEAT_SECONDS:-60} start=$SECONDS pid next rc=0
  shift
  next=$every
  "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ $((SECONDS - start)) -ge "$next" ] && kill -0 "$pid" 2>/dev/null; then
      echo "   $what: still running ($((SECONDS - start))s)"
      next=$((next + every))
    fi
  done
  wait "$pid" || rc=$?
  return "$rc"
}
