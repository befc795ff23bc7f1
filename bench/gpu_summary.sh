#!/usr/bin/env bash
# bench/gpu_summary.sh LOGDIR — the table of a bench/gpu_verify.sh run (awk only: it runs on the
# GPU machine too): per configuration and seed spec, the best measured candidate and its share of
# the copy bandwidth measured in the same run, the predicted best's, whether every candidate was
# correct, and the predicted best's time on a sub-range from element 1 against whole arrays of
# the same size, and the checks of bench/gpu_io.sh (the harness's --sizes; memcheck, racecheck,
# synccheck).  Reads LOGDIR/results_<config>_<spec>.xml, LOGDIR/subrange_<config>_<spec>.log,
# and LOGDIR/{sizes,memcheck,racecheck,synccheck}_<config>_<spec>.log where they exist.
set -u
logs=${1:?log folder of bench/gpu_verify.sh}
echo "| configuration | spec | best measured | % of copy | cand01 % of copy | all correct | cand01 sub-range / whole | checks at sizes | sanitizers |"
echo "|---|---|---|---|---|---|---|---|---|"
# "77 ok, 0 wrong" from a --sizes log; "-" where the check did not run.
sizes_cell() {
  [ -f "$1" ] || { echo "-"; return; }
  echo "$(grep -c ' ok ' "$1") ok, $(grep -c 'WRONG' "$1") wrong$(grep -q '^PASS' "$1" || echo ', no PASS')"
}
# "clean" when the three sanitizer logs exist and report nothing; else what each said.
sanitizer_cell() {
  local out="" tool
  for tool in memcheck racecheck synccheck; do
    local f=$logs/${tool}_$1.log
    if [ ! -f "$f" ]; then out="$out $tool: not run;"
    elif ! grep -Eq 'SUMMARY: 0 (errors|hazards)' "$f" || ! grep -q '^PASS' "$f"; then
      out="$out $tool: $(grep -Eo 'SUMMARY: [0-9]+ [a-z]+' "$f" | head -1 | cut -c10-);"
    fi
  done
  echo "${out:- clean}" | sed 's/^ //'
}
for r in "$logs"/results_*.xml; do
  [ -f "$r" ] || continue
  tag=$(basename "$r" .xml)
  tag=${tag#results_}
  config=${tag%%_*}
  spec=${tag#*_}
  checks="$(sizes_cell "$logs/sizes_$tag.log") | $(sanitizer_cell "$tag")"
  awk -v config="$config" -v spec="$spec" -v subfile="$logs/subrange_$tag.log" -v checks="$checks" '
    function attr(line, name,   m) {
      if (match(line, name "=\"[^\"]*\"")) return substr(line, RSTART + length(name) + 2,
                                                           RLENGTH - length(name) - 3)
      return ""
    }
    /<candidate / {
      n = attr($0, "name"); pct = attr($0, "copy-percent") + 0
      if (attr($0, "predicted-rank") + 0 > 0 && pct > best) { best = pct; bestname = n }
      if (n == "cand01") first = pct
      if (attr($0, "correct") != "1") wrong++
    }
    END {
      ratio = "-"
      while ((getline line < subfile) > 0)
        if (line ~ /^cand01 / && split(line, f, " ") >= 4) ratio = f[4]
      printf "| %s | %s | %s | %.1f%% | %.1f%% | %s | %s | %s |\n", config, spec, bestname, best,
             first, wrong ? "NO (" wrong " wrong)" : "yes", ratio, checks
    }' "$r"
done
