#!/usr/bin/env bash
# The client matrix's table, the one docs/compatibility.md opens with.
#
# Sourced by the client scripts (scripts/clients-*.sh) and .ci/run:
# `matrix_row CLIENT VERSIONS HOW RESULT` appends one row, tab-separated,
# to the file CERULEAN_MATRIX names (nothing when it is unset, so a
# script run by hand prints its results as before). .ci/run sets it and
# ends with:
#
#   bash scripts/matrix.sh render FILE [DOC]
#
# which prints the rows of FILE as a Markdown table and, with DOC,
# replaces the lines between DOC's `<!-- matrix:begin -->` and
# `<!-- matrix:end -->` markers with it, so the table is this run's,
# written by the scripts that ran the clients, not by hand. A row whose
# result says "failed" is still written: the run that failed says so.

matrix_row() {
  [ -n "${CERULEAN_MATRIX:-}" ] || return 0
  local f
  for f in "$@"; do
    case $f in *$'\t'* | *$'\n'*) echo "matrix_row: a field holds a tab or a newline: $f" >&2; return 1 ;; esac
  done
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$CERULEAN_MATRIX"
}

# matrix_result PASSED FAILED UNIT: "18 of 18 areas, 2026-11-28" or, with
# failures, "failed: 2 of 18 areas, 2026-11-28".
matrix_result() {
  local total=$(($1 + $2)) day
  day=$(date -u +%F)
  if [ "$2" -eq 0 ]; then
    echo "$1 of $total $3, $day"
  else
    echo "failed: $2 of $total $3, $day"
  fi
}

matrix_render() {
  local file=$1
  echo "| client | versions | how | result |"
  echo "|---|---|---|---|"
  # Fields are cells: a | inside one would end it early.
  sed 's/|/\\|/g' "$file" | awk -F'\t' 'NF == 4 { printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }'
}

matrix_update_doc() {
  local file=$1 doc=$2 table
  if ! grep -q '^<!-- matrix:begin -->$' "$doc" || ! grep -q '^<!-- matrix:end -->$' "$doc"; then
    echo "matrix: $doc has no matrix markers" >&2
    return 1
  fi
  table=$(mktemp)
  matrix_render "$file" >"$table"
  awk -v table="$table" '
    /^<!-- matrix:begin -->$/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /^<!-- matrix:end -->$/ { skip = 0 }
    !skip { print }
  ' "$doc" >"$doc.new"
  mv "$doc.new" "$doc"
  rm -f "$table"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case ${1:-} in
  render)
    [ $# -ge 2 ] || { echo "usage: $0 render FILE [DOC]" >&2; exit 2; }
    matrix_render "$2"
    if [ $# -ge 3 ]; then matrix_update_doc "$2" "$3"; fi
    ;;
  *)
    echo "usage: $0 render FILE [DOC]" >&2
    exit 2
    ;;
  esac
fi
