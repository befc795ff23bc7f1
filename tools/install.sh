#!/usr/bin/env bash
# install.sh — `make install` and `make uninstall`: what kasgen installs, and a record of it so
# that uninstall removes exactly what install wrote.
#
#   tools/install.sh install   DESTDIR PREFIX BINARY
#   tools/install.sh uninstall DESTDIR PREFIX
#
# Installed under $DESTDIR$PREFIX:
#   bin/kasgen
#   share/kasgen/library/...          the elementary-function library (found beside the binary)
#   share/kasgen/benchmarks/*.xml     the timing databases (the default one is found there too)
#   share/man/man1/kasgen.1, share/man/man5/kasgen-spec.5
#   share/doc/kasgen/                 README.md and docs/*.md
#   share/kasgen/install-manifest     the record: every file with its SHA-256, every folder
#                                     install created
# Uninstall removes the recorded files that are unchanged (a file edited since is kept, and
# said so), then the recorded folders that are empty: files a user added under the prefix stay,
# and so do their folders.  Installing over an earlier install first uninstalls it, so files the
# new version no longer has do not linger.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { echo "make ${action:-install}: error: $*" >&2; exit 1; }

# $DESTDIR$PREFIX, made absolute; PREFIX itself must be absolute (it is compiled into nothing,
# but a relative one would install somewhere different from every later run).
target_of() {
  local destdir=$1 prefix=$2
  [[ "$prefix" == /* ]] || die "PREFIX must be an absolute path, not '$prefix'"
  if [ -n "$destdir" ] && [[ "$destdir" != /* ]]; then destdir=$PWD/$destdir; fi
  printf '%s' "${destdir%/}$prefix"
}

# Source and destination (relative to the prefix) of every installed file but the binary.
file_list() {
  local f
  (cd "$root" && find library -type f | LC_ALL=C sort) | while read -r f; do
    printf '%s\tshare/kasgen/%s\t644\n' "$f" "$f"
  done
  for f in "$root"/benchmarks/*.xml; do
    printf '%s\tshare/kasgen/benchmarks/%s\t644\n' "${f#"$root"/}" "$(basename "$f")"
  done
  printf 'docs/man/kasgen.1\tshare/man/man1/kasgen.1\t644\n'
  printf 'docs/man/kasgen-spec.5\tshare/man/man5/kasgen-spec.5\t644\n'
  printf 'README.md\tshare/doc/kasgen/README.md\t644\n'
  for f in "$root"/docs/*.md; do
    printf '%s\tshare/doc/kasgen/%s\t644\n' "${f#"$root"/}" "$(basename "$f")"
  done
}

# mkdir -p that records, in $created, each folder it had to make.
make_dirs() {
  local dir=$1
  [ -d "$dir" ] && return
  make_dirs "$(dirname "$dir")"
  mkdir "$dir"
  created+=("$dir")
}

install_one() { # SRC DEST MODE (DEST absolute)
  make_dirs "$(dirname "$2")"
  install -m "$3" "$1" "$2"
  printf 'file %s %s\n' "$(sha256sum <"$2" | cut -d' ' -f1)" "${2#"$target"/}" >>"$record"
}

do_install() {
  local binary=$3 src dest mode
  target=$(target_of "$1" "$2")
  [ -x "$binary" ] || die "$binary not built (run make)"
  [ ! -e "$target/share/kasgen/install-manifest" ] || do_uninstall "$1" "$2" quiet
  created=()
  record=$(mktemp)
  trap 'rm -f "$record"' EXIT
  install_one "$binary" "$target/bin/kasgen" 755
  while IFS=$'\t' read -r src dest mode; do
    [ -f "$root/$src" ] || die "$src missing from the source tree"
    install_one "$root/$src" "$target/$dest" "$mode"
  done < <(file_list)
  # Folders outermost first, so that uninstall (which reads the record backwards) empties the
  # innermost first.
  local d destdir=${1%/}
  [ -z "$destdir" ] || [[ "$destdir" == /* ]] || destdir=$PWD/$destdir
  for d in "${created[@]}"; do printf 'dir %s\n' "${d#"$destdir"}"; done >>"$record"
  install -m 644 "$record" "$target/share/kasgen/install-manifest"
  echo "installed kasgen in $target ($(grep -c '^file ' "$record") files;" \
       "uninstall: make uninstall PREFIX=$2${1:+ DESTDIR=$1})"
}

# A recorded file must stay inside the prefix: relative, no '..', no odd characters.
safe_file() {
  [[ "$1" != /* && "$1" != *..* && "$1" =~ ^[A-Za-z0-9._/+-]+$ ]]
}

# A recorded folder (as seen without DESTDIR) must be the prefix, inside it, or one of its
# parents (made when DESTDIR or the prefix did not exist yet).
safe_dir() {
  [[ "$1" != *..* && ( "$1" == "$prefix" || "$1" == "$prefix"/* || "$prefix" == "$1"/* ) ]]
}

remove_if_unchanged() { # SHA256 PATH
  [ -e "$2" ] || [ -L "$2" ] || return 0
  if [ -f "$2" ] && [ "$(sha256sum <"$2" | cut -d' ' -f1)" = "$1" ]; then
    rm -f "$2"
    removed=$((removed + 1))
  else
    echo "make uninstall: kept $2 (changed since it was installed)" >&2
    kept=$((kept + 1))
  fi
}

do_uninstall() {
  local destdir=$1 quiet=${3:-} kind a b i removed=0 kept=0 lines
  prefix=$2
  target=$(target_of "$destdir" "$prefix")
  [ -z "$destdir" ] || [[ "$destdir" == /* ]] || destdir=$PWD/$destdir
  local manifest=$target/share/kasgen/install-manifest
  [ -f "$manifest" ] || die "no kasgen install recorded in $target (no $manifest): nothing removed"
  mapfile -t lines <"$manifest"
  for ((i = 0; i < ${#lines[@]}; i++)); do
    read -r kind a b <<<"${lines[i]}"
    case "$kind" in
      file) safe_file "$b" || die "$manifest: refusing the path '$b'" ;;
      dir) safe_dir "$a" || die "$manifest: refusing the folder '$a'" ;;
      *) die "$manifest:$((i + 1)): not a line of an install record" ;;
    esac
  done
  for ((i = 0; i < ${#lines[@]}; i++)); do
    read -r kind a b <<<"${lines[i]}"
    [ "$kind" != file ] || remove_if_unchanged "$a" "$target/$b"
  done
  rm -f "$manifest"
  # Folders install created, innermost first; rmdir leaves any that still hold a file.
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    read -r kind a b <<<"${lines[i]}"
    [ "$kind" != dir ] || rmdir "${destdir%/}$a" 2>/dev/null || true
  done
  [ -n "$quiet" ] || echo "uninstalled kasgen from $target ($removed files removed, $kept kept)"
}

action=${1:-}
case "$action" in
  install) [ $# = 4 ] || die "usage: $0 install DESTDIR PREFIX BINARY"; do_install "$2" "$3" "$4" ;;
  uninstall) [ $# = 3 ] || die "usage: $0 uninstall DESTDIR PREFIX"; do_uninstall "$2" "$3" ;;
  *) die "usage: $0 install DESTDIR PREFIX BINARY | uninstall DESTDIR PREFIX" ;;
esac
