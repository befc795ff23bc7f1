#!/usr/bin/env bash
# interrupt.sh — Ctrl-C while kasgen runs another program stops everything promptly (src/
# interrupt.c): kasgen runs as a terminal's job does (a process group of its own, job control on)
# and SIGINT goes to that group, as the terminal sends it.  The programs are fakes that start a
# child of their own in the background (which a non-interactive shell makes ignore SIGINT, as a
# program may) and sleep:
#   - `kasgen report DIR` while gnuplot draws: kasgen dies of SIGINT within seconds, neither fake
#     gnuplot nor its child is left, and DIR holds what it held (no plot, no temporary);
#   - the main job with --ptxas while nvcc compiles: the same, nvcc's folder in /tmp is removed,
#     and no output folder is written.
# Before programs had process groups of their own and kasgen caught the signal, the fakes'
# children ran on, and the plot's temporary and nvcc's folder were left behind.  Ctrl-Z (SIGTSTP)
# while gnuplot draws stops kasgen, the fake and its child; SIGCONT continues all three, and
# kasgen ends as it would have; a search stopped (SIGTSTP, SIGTTOU) longer than its --time-limit
# and continued is not cut (the last sections).
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
set -m # each background job gets a process group of its own, as at a terminal
# kasgen starts with SIGINT at its default, as at a terminal: the suite may run in the background
# of a script (nohup make test &), whose commands inherit it ignored, which kasgen keeps so
env --default-signal=INT true 2>/dev/null ||
  { echo "interrupt: skipped (env --default-signal needs coreutils 8.31)"; exit 0; }

mkdir "$tmp/bin"
# A fake program: its pid and its background child's in $tmp/pids, its arguments in $tmp/args.
cat >"$tmp/bin/fake" <<EOF
#!/bin/sh
echo "\$@" >"$tmp/args"
sleep 100 &
echo \$\$ \$! >"$tmp/pids.new" && mv "$tmp/pids.new" "$tmp/pids"
sleep 100
EOF
chmod +x "$tmp/bin/fake"
ln -s fake "$tmp/bin/gnuplot"

# waits up to 30 s for the fake to start
fake_started() {
  for _ in $(seq 300); do [ -s "$tmp/pids" ] && return 0; sleep 0.1; done
  return 1
}
# process_gone PID: no such process (or a zombie) within 2 s; a survivor is killed and reported
process_gone() {
  for _ in $(seq 20); do
    kill -0 "$1" 2>/dev/null || return 0
    [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null
  return 1
}
# interrupt WHAT: Ctrl-C to the job $job once the fake runs; kasgen must die of it in < 5 s,
# leaving none of the fake's processes
interrupt() {
  local what=$1 rc=0 t0
  fake_started || { fail "$what: the fake program never ran"; kill -9 -- "-$job"; return; }
  t0=$(date +%s)
  kill -INT -- "-$job"
  wait "$job" || rc=$?
  [ "$rc" = 130 ] || fail "$what: exit $rc, expected 130 (killed by SIGINT)"
  [ $(($(date +%s) - t0)) -lt 5 ] || fail "$what: kasgen took 5 s or more to stop"
  read -r fake child <"$tmp/pids"
  process_gone "$fake" || fail "$what: the fake program is still running"
  process_gone "$child" || fail "$what: the fake program's child is still running"
  rm -f "$tmp/pids" "$tmp/pids.new"
}

# --- report, while gnuplot draws -------------------------------------------------------------
cp -r tests/fixtures/results/good "$tmp/good"
before=$(ls -A "$tmp/good")
PATH="$tmp/bin:$PATH" env --default-signal=INT "$KASGEN" report "$tmp/good" >"$tmp/out" 2>&1 &
job=$!
interrupt "report"
[ "$(ls -A "$tmp/good")" = "$before" ] ||
  fail "report: the folder changed: $(ls -A "$tmp/good" | tr '\n' ' ')"

# --- the main job's --ptxas, while nvcc compiles ---------------------------------------------
mkdir "$tmp/cache"
NVCC="$tmp/bin/fake" KASGEN_CACHE="$tmp/cache" env --default-signal=INT "$KASGEN" \
  specs/synctest.spec --top 4 --db benchmarks/nvidia-h100-80gb-hbm3.xml --ptxas \
  --out "$tmp/gen" >"$tmp/out" 2>&1 &
job=$!
interrupt "--ptxas"
folder=$(tr ' ' '\n' <"$tmp/args" | sed -n 's|/ptxas\.cu$||p')
case $folder in /tmp/kasgen-ptxas-*) ;; *) fail "--ptxas: nvcc's arguments name no ptxas.cu" ;; esac
[ -n "$folder" ] && [ ! -e "$folder" ] || fail "--ptxas: nvcc's folder $folder was left behind"
[ ! -e "$tmp/gen" ] || fail "--ptxas: an output folder was written"

# --- Ctrl-Z while gnuplot draws ---------------------------------------------------------------
# A patient fake: it and its background child wait for $tmp/go, then it writes a "plot" and ends.
# Ctrl-Z (SIGTSTP to kasgen's job, as the terminal sends it) stops kasgen, the fake and its child;
# SIGCONT to the job (fg, bg) continues all three, and kasgen then ends as it would have.  Before
# kasgen caught SIGTSTP, the fake and its child ran on while kasgen was stopped.
mkdir "$tmp/bin2"
cat >"$tmp/bin2/gnuplot" <<EOF
#!/bin/sh
cat >/dev/null
( while [ ! -e "$tmp/go" ]; do sleep 0.1; done ) &
echo \$\$ \$! >"$tmp/pids.new" && mv "$tmp/pids.new" "$tmp/pids"
while [ ! -e "$tmp/go" ]; do sleep 0.1; done
wait
printf 'a plot'
EOF
chmod +x "$tmp/bin2/gnuplot"
# state_within PID STATE: ps says PID's state starts with STATE (T: stopped) within 2 s, or, with
# !STATE, that it exists and does not
state_within() {
  local st
  for _ in $(seq 20); do
    st=$(ps -o stat= -p "$1" 2>/dev/null) || st=gone
    case $2 in
      !*) [ "$st" != gone ] && [ "${st#"${2#!}"}" = "$st" ] && return 0 ;;
      *) [ "${st#"$2"}" != "$st" ] && return 0 ;;
    esac
    sleep 0.1
  done
  echo "  state of $1: $st" >&2
  return 1
}
cp -r tests/fixtures/results/good "$tmp/good2"
rm -f "$tmp/pids"
PATH="$tmp/bin2:$PATH" env --default-signal=INT "$KASGEN" report "$tmp/good2" >"$tmp/out" 2>&1 &
job=$!
# the job keeps its process group; without job control the shell does not watch it stop, which
# at times broke off the loops below (bash 5.2)
set +m
if fake_started; then
  read -r fake child <"$tmp/pids"
  kill -TSTP -- "-$job"
  state_within "$job" T || fail "Ctrl-Z: kasgen did not stop"
  state_within "$fake" T || fail "Ctrl-Z: the fake gnuplot did not stop"
  state_within "$child" T || fail "Ctrl-Z: the fake gnuplot's child did not stop"
  kill -CONT -- "-$job"
  state_within "$job" '!T' || fail "Ctrl-Z, continued: kasgen did not run on"
  state_within "$fake" '!T' || fail "Ctrl-Z, continued: the fake gnuplot did not run on"
  state_within "$child" '!T' || fail "Ctrl-Z, continued: the fake gnuplot's child did not run on"
  touch "$tmp/go"
  rc=0
  wait "$job" || rc=$?
  [ "$rc" = 0 ] || { cat "$tmp/out"; fail "Ctrl-Z, continued: kasgen's exit $rc, expected 0"; }
  [ "$(cat "$tmp/good2/plot.png" 2>/dev/null)" = "a plot" ] &&
    grep -q "^wrote .*plot.png" "$tmp/out" ||
    { cat "$tmp/out"; fail "Ctrl-Z, continued: the plot was not written"; }
  process_gone "$fake" || fail "Ctrl-Z, continued: the fake gnuplot is still running"
  process_gone "$child" || fail "Ctrl-Z, continued: the fake gnuplot's child is still running"
else
  fail "Ctrl-Z: the fake gnuplot never ran"
  kill -9 -- "-$job"
fi
set -m

# --- a search stopped and continued -----------------------------------------------------------
# A search of about 1.5 s of CPU under --time-limit 20 (SAN=1 and a loaded machine: up to 11 s
# of wall time seen) is stopped for 21 s, then continued: the limit counts the time it ran, not
# the pause, and it ends uncut (before, the pause used the limit up and the note said it cut the
# search).  Ctrl-Z (SIGTSTP), and SIGTTOU, which the terminal
# sends a background kasgen that writes to it under `stty tostop` and which kasgen handles alike.
# The stop comes once the search runs: --dot's file is written just before it (--no-db: no
# database to read after it).  Each job starts with job control on, as at a terminal (a group of
# its own, the stop signals at their default even where the suite's shell ignores them).
for sig in TSTP TTOU; do
  rm -f "$tmp/dag.dot"
  "$KASGEN" plan specs/stvenant_element.spec --top 3 --no-db --time-limit 20 \
    --dot "$tmp/dag.dot" >/dev/null 2>"$tmp/err$sig" &
  job=$!
  set +m
  for _ in $(seq 300); do [ -s "$tmp/dag.dot" ] && break; sleep 0.01; done
  sleep 0.2
  kill -"$sig" -- "-$job"
  state_within "$job" T || fail "SIG$sig: the search did not stop (or had ended)"
  sleep 21
  kill -CONT -- "-$job"
  rc=0
  wait "$job" || rc=$?
  [ "$rc" = 0 ] || { cat "$tmp/err$sig"; fail "SIG$sig, continued: exit $rc"; }
  ! grep -q 'time-limit 20 s reached' "$tmp/err$sig" ||
    { cat "$tmp/err$sig"; fail "SIG$sig: 21 s stopped counted against --time-limit 20"; }
  set -m
done

((fails == 0)) && echo "interrupt: Ctrl-C stopped kasgen, its programs and their children;" \
  "Ctrl-Z stopped them all and SIGCONT continued them; a stopped search's limit stood still"
((fails == 0))
