#!/usr/bin/env bash
# tests/install/check_examples.sh TRAIN CLASSIFY: runs examples/train_classifier, then examples/classify
# on the held-out points it wrote: the classes must be right for 90% of them (a model that learnt
# nothing gets a third), the same from a file and from stdin, and bad input must get one line on
# stderr and exit status 2 (1 for weights that cannot be loaded). Run on the in-tree build (release
# and sanitizers) and on the programs tests/install/test_install.sh builds against the install.
set -euo pipefail
train=$1
classify=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$train" "$tmp/spiral.safetensors" --holdout "$tmp/holdout"
"$classify" "$tmp/spiral.safetensors" "$tmp/holdout.points" > "$tmp/predicted"
"$classify" "$tmp/spiral.safetensors" < "$tmp/holdout.points" | cmp - "$tmp/predicted" ||
  fail "classify gives different classes for stdin and for a file"
accuracy=$(paste "$tmp/predicted" "$tmp/holdout.labels" | awk '$1 == $2 { right++ } END { print right / NR }')
echo "classify: held-out accuracy $accuracy ($(wc -l < "$tmp/predicted") points)"
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.9) }' || fail "held-out accuracy $accuracy < 0.9"

echo "==> classify: bad input is one line on stderr and exit status 2"
expect_error() {  # expect_error STATUS INPUT ARGS...: classify exits STATUS with one line on stderr
  local status=$1 input=$2 rc=0
  shift 2
  printf '%s' "$input" | "$classify" "$@" > /dev/null 2> "$tmp/stderr" || rc=$?
  [ "$rc" = "$status" ] || fail "classify $* on '$input' exited $rc, expected $status"
  [ "$(wc -l < "$tmp/stderr")" = 1 ] || fail "classify $* printed more than one line: $(cat "$tmp/stderr")"
  cat "$tmp/stderr"
}
expect_error 2 $'0.1 0.2\n0.3 oops\n' "$tmp/spiral.safetensors"
expect_error 2 $'0.1 0.2 0.3\n' "$tmp/spiral.safetensors"
expect_error 2 $'nan 1\n' "$tmp/spiral.safetensors"
expect_error 2 '' "$tmp/spiral.safetensors" "$tmp/no-such-points"
expect_error 2 ''
expect_error 1 '' "$tmp/no-such.safetensors"
head -c 100 "$tmp/spiral.safetensors" > "$tmp/truncated.safetensors"
expect_error 1 '' "$tmp/truncated.safetensors"
echo "examples passed"
