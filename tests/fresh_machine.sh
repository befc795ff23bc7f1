#!/usr/bin/env bash
# fresh_machine.sh — a new user's first minutes, proved: builds a minimal Debian 12 (bookworm)
# root with mmdebstrap (apt, make, git, ca-certificates and nothing else), clones this
# repository into it at HEAD (what is committed is what is tested), and runs there, word for
# word, the two commands that open README.md (read from README.md, so they cannot drift).
# Fails on any non-zero exit, or when the test command's closing line is not
# "N passed, 0 failed".  Then installs kasgen there and checks that `man kasgen` works.
#
#   sudo tests/fresh_machine.sh          (root: mmdebstrap --mode=root; 7 to 9 minutes on 2 cores)
#
# Downloads are cached in $KASGEN_FRESH_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/kasgen-fresh):
# the .deb files apt fetched and pip's download cache.  They only save downloads: every
# package is still installed by the commands under test, in a root made new each run.
# This machine's network settings go in with the commands, as a user's own machine would have
# them: proxy variables, and the CA bundle that pip and Python trust (a TLS-intercepting proxy's
# CA, where this machine has one), copied to /etc/ssl/host-ca-bundle.crt in the root.
# Not part of `make test` (it runs make test itself, inside the root); .ci/run runs it.
set -euo pipefail

readonly suite=bookworm
readonly mirror=http://deb.debian.org/debian
readonly security_mirror=http://deb.debian.org/debian-security
readonly timeout_s=${KASGEN_FRESH_TIMEOUT:-2400} # per README command
readonly clean_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { printf '[fresh %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { say "FAIL: $*" >&2; exit 1; }

# The commands of the first ```sh block of README.md, one per line, without their comments.
readme_commands() {
  awk '/^```sh$/ && !seen { inside = 1; seen = 1; next }
       inside && /^```/ { exit }
       inside { sub(/[ \t]+#.*$/, ""); if ($0 != "") print }' "$1"
}

# Hard links when the cache and the root share a file system (no copying), else a copy.
# -n: an existing file is never replaced.
link_or_copy() {
  local from=$1 to=$2
  mkdir -p "$to"
  [ -n "$(ls -A "$from" 2>/dev/null)" ] || return 0
  cp -aln "$from"/. "$to"/ 2>/dev/null || cp -an "$from"/. "$to"/
}

# ---- inside: runs as mmdebstrap's customize hook, with the root at $1 ----------------------

# The CA bundle this machine's pip trusts, if it names one.
host_ca_bundle() {
  local f=${PIP_CERT:-${REQUESTS_CA_BUNDLE:-${SSL_CERT_FILE:-}}}
  [ -n "$f" ] || f=$(sed -n 's/^cert[[:space:]]*=[[:space:]]*//p' /etc/pip.conf 2>/dev/null | head -1)
  [ -n "$f" ] && [ -f "$f" ] && printf '%s' "$f"
}

# The network part of this machine's environment, for the root (see the top of this file).
network_env() {
  local v
  for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_DEFAULT_TIMEOUT; do
    [ -z "${!v:-}" ] || printf '%s=%s\n' "$v" "${!v}"
  done
  if [ -n "$FRESH_CA" ]; then
    for v in PIP_CERT REQUESTS_CA_BUNDLE SSL_CERT_FILE; do
      printf '%s=/etc/ssl/host-ca-bundle.crt\n' "$v"
    done
  fi
}

# Runs one command line in the fresh root, as root, in the clone, with a clean environment
# (nothing of this machine's PATH, CUDA_HOME or pip settings leaks in, its network settings
# aside).  Output goes to the log and to $2.
in_root() {
  local root=$1 out=$2 cmd=$3 net
  mapfile -t net < <(network_env)
  timeout "$timeout_s" chroot "$root" /usr/bin/env -i HOME=/root PATH="$clean_path" TERM=dumb \
    "${net[@]}" bash -c "cd /root/kasgen && $cmd" 2>&1 | tee "$out"
  return "${PIPESTATUS[0]}"
}

run_readme_command() {
  local root=$1 n=$2 cmd=$3 rc=0 start=$SECONDS
  say "README command $n, in the fresh root, in /root/kasgen:"
  say "\$ $cmd"
  in_root "$root" "$FRESH_TMP/cmd$n.out" "$cmd" || rc=$?
  say "README command $n exited $rc after $((SECONDS - start)) s"
  [ "$rc" = 0 ] || die "README command $n ($cmd) exited $rc"
}

check_closing_line() {
  local last
  last=$(grep -v '^[[:space:]]*$' "$1" | tail -1)
  [[ "$last" =~ ^[0-9]+\ passed,\ 0\ failed$ ]] ||
    die "the test command closed with '$last', not 'N passed, 0 failed'"
  say "closing line: $last"
}

# `make install`, then man kasgen and man 5 kasgen-spec as a user would read them; man-db is
# the test's business (a user who reads man pages has it), so it is installed here.
check_install_and_man() {
  local root=$1 rc=0
  say "make install, then man kasgen (man-db installed for the check):"
  in_root "$root" "$FRESH_TMP/install.out" \
    'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq man-db >/dev/null &&
     make install >/dev/null && command -v kasgen &&
     man -P cat kasgen >/tmp/kasgen.1.txt && head -6 /tmp/kasgen.1.txt &&
     tr -s " " </tmp/kasgen.1.txt | grep -q "kasgen - generate fused CUDA" &&
     man -P cat 5 kasgen-spec | tr -s " " | grep -q "kasgen-spec - the language" &&
     echo "man kasgen, man 5 kasgen-spec: ok" &&
     cd / && kasgen check /root/kasgen/specs/synctest.spec | head -1 &&
     cd /root/kasgen && make uninstall && [ ! -e /usr/local/bin/kasgen ]' ||
    rc=$?
  [ "$rc" = 0 ] || die "make install / man kasgen / make uninstall in the fresh root failed"
}

inside() {
  local root=$1
  say "fresh root: Debian $(cat "$root/etc/debian_version"), $(chroot "$root" dpkg-query -W | wc -l) packages"
  say "fresh root has: $(chroot "$root" /usr/bin/env -i PATH="$clean_path" sh -c \
      'for c in make git apt-get gcc pkg-config nvcc python3; do
         command -v $c >/dev/null && printf "%s " $c || printf "(no %s) " $c; done')"
  cp "$FRESH_TMP/kasgen.bundle" "$root/tmp/"
  [ -z "$FRESH_CA" ] || cp "$FRESH_CA" "$root/etc/ssl/host-ca-bundle.crt"
  chroot "$root" /usr/bin/env -i HOME=/root PATH="$clean_path" \
    git -c advice.detachedHead=false clone -q /tmp/kasgen.bundle /root/kasgen
  link_or_copy "$FRESH_CACHE/pip" "$root/root/.cache/pip"
  local rc=0
  (
    run_readme_command "$root" 1 "$FRESH_CMD1"
    run_readme_command "$root" 2 "$FRESH_CMD2"
    check_closing_line "$FRESH_TMP/cmd2.out"
    check_install_and_man "$root"
  ) || rc=$?
  # Keep the downloads for the next run, even after a failure: the .deb files apt can still
  # fetch (the root's archive holds the cache's files too, so it replaces them: superseded
  # versions go), and pip's cache.
  chroot "$root" apt-get autoclean -qq >/dev/null 2>&1 || true
  find "$FRESH_CACHE/apt" -maxdepth 1 -name '*.deb' -delete
  link_or_copy "$root/var/cache/apt/archives" "$FRESH_CACHE/apt"
  rm -rf "$FRESH_CACHE/apt/partial" "$FRESH_CACHE/apt/lock"
  link_or_copy "$root/root/.cache/pip" "$FRESH_CACHE/pip"
  echo "$rc" >"$FRESH_TMP/result"
  return "$rc"
}

# ---- outside --------------------------------------------------------------------------------

need_mmdebstrap() {
  [ "$(id -u)" = 0 ] || die "run as root (mmdebstrap --mode=root mounts /proc and /dev in the root)"
  command -v mmdebstrap >/dev/null && return
  say "installing mmdebstrap (Debian package)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
}

main() {
  local repo start=$SECONDS
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  need_mmdebstrap
  mapfile -t cmds < <(readme_commands "$repo/README.md")
  [ "${#cmds[@]}" = 2 ] ||
    die "README.md: expected its first \`\`\`sh block to hold 2 commands, found ${#cmds[@]}"
  export FRESH_CMD1=${cmds[0]} FRESH_CMD2=${cmds[1]}
  export FRESH_CACHE=${KASGEN_FRESH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kasgen-fresh}
  FRESH_TMP=$(mktemp -d)
  export FRESH_TMP
  FRESH_CA=$(host_ca_bundle || true)
  export FRESH_CA
  trap 'rm -rf "$FRESH_TMP"' EXIT
  mkdir -p "$FRESH_CACHE/apt" "$FRESH_CACHE/pip"

  [ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
    say "note: uncommitted changes in $repo are not tested (the root clones HEAD)"
  git -C "$repo" bundle create "$FRESH_TMP/kasgen.bundle" HEAD 2>/dev/null
  say "testing $(git -C "$repo" log -1 --format='%h %s') in a fresh Debian $suite root"
  say "README command 1: $FRESH_CMD1"
  say "README command 2: $FRESH_CMD2"
  say "download cache: $FRESH_CACHE ($(du -sh "$FRESH_CACHE" | cut -f1))"
  say "network settings carried in: $(network_env | cut -d= -f1 | tr '\n' ' ')${FRESH_CA:+(CA bundle $FRESH_CA)}"

  local self rc=0
  self=$(printf '%q' "$repo/tests/fresh_machine.sh")
  mmdebstrap --mode=root --variant=apt --include=make,git,ca-certificates \
    --skip=essential/unlink \
    --setup-hook="$self --link-cache \"\$1\"" \
    --customize-hook="$self --inside \"\$1\"" \
    "$suite" /dev/null \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" \
    "deb $security_mirror $suite-security main" 2>&1 || rc=$?
  if [ "$rc" != 0 ] || [ "$(cat "$FRESH_TMP/result" 2>/dev/null)" != 0 ]; then
    die "the README's commands did not pass in a fresh Debian $suite root (mmdebstrap exit $rc)"
  fi
  say "PASS: both README commands and man kasgen in a fresh Debian $suite root," \
      "$((SECONDS - start)) s"
}

case "${1:-}" in
  --link-cache) link_or_copy "$FRESH_CACHE/apt" "$2/var/cache/apt/archives" ;;
  --inside) inside "$2" ;;
  *) main "$@" ;;
esac
