#!/usr/bin/env bash
# tests/install/test_install.sh BUILD_DIR SOURCE_DIR: installs BUILD_DIR (already built: --no-rebuild)
# into a temporary prefix and builds against it, as an app would: tests/install/app with g++ and
# pkg-config (shared and fully static), with meson's dependency('strata') (installed, and as a
# subproject), with CMake through pkg-config; then the two examples (tests/install/check_examples.sh). Every step prints what it does; any failure fails the test.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "==> $*"; }
expected='app-core app-ops tensor([4., 6.]) grad 32'

step "meson install --destdir (the prefix moves with the relocatable strata.pc)"
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >/dev/null
pc=$(find "$tmp/root" -name strata.pc)
[ -n "$pc" ] || fail "no strata.pc installed"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
includedir=$(pkg-config --variable=includedir strata)
libdir=$(pkg-config --variable=libdir strata)

step "the installed headers are exactly those strata.h reaches, under include/strata/"
(cd "$includedir/strata" && find . -type f | sed 's|^\./||' | sort) > "$tmp/installed"
python3 "$src/scripts/public-headers" | sort > "$tmp/public"
diff -u "$tmp/public" "$tmp/installed" || fail "installed headers differ from scripts/public-headers (meson setup --reconfigure)"
[ "$(ls "$includedir")" = strata ] || fail "include/ holds more than strata/: $(ls "$includedir")"
[ -f "$libdir/libstrata.a" ] && [ -f "$libdir/libstrata.so" ] || fail "libstrata.a or libstrata.so missing in $libdir"

run_app() {  # run_app BINARY: its output must be $expected
  local out
  out=$("$1") || fail "$1 exited with $?"
  [ "$out" = "$expected" ] || fail "$1 printed '$out', expected '$expected'"
}

# The app's include path also holds a file named like each installed header, one that stops the
# compiler: a strata header that found another through the app's include path, not relative to
# itself, would collide with the app's own core/ or ops/ (Note [Installed headers find each other
# relatively]).
while read -r header; do
  mkdir -p "$tmp/shadow/$(dirname "$header")"
  echo "#error \"a strata header included the app's $header\"" > "$tmp/shadow/$header"
done < "$tmp/public"
cxx=(g++ -std=c++20 -I "$tmp/shadow" -I "$src/tests/install/app")
step "g++ app.cpp \$(pkg-config --cflags --libs strata): shared"
"${cxx[@]}" "$src/tests/install/app/app.cpp" $(pkg-config --cflags --libs strata) -Wl,-rpath,"$libdir" -o "$tmp/app-shared"
ldd "$tmp/app-shared" | grep "libstrata.so" >/dev/null || fail "app-shared does not load libstrata.so"
run_app "$tmp/app-shared"

step "g++ -static app.cpp \$(pkg-config --static --cflags --libs strata): static"
"${cxx[@]}" -static "$src/tests/install/app/app.cpp" $(pkg-config --static --cflags --libs strata) -o "$tmp/app-static"
if ldd "$tmp/app-static" >/dev/null 2>&1; then fail "app-static is dynamically linked"; fi
run_app "$tmp/app-static"

step "meson: dependency('strata') from the installed prefix"
meson setup "$tmp/meson-installed" "$src/tests/install/app" >/dev/null
meson compile -C "$tmp/meson-installed" >/dev/null
run_app "$tmp/meson-installed/app"

step "meson: strata as a subproject builds its libraries only (configured; the app's object compiled)"
cp -r "$src/tests/install/app" "$tmp/app-sub"
mkdir "$tmp/app-sub/subprojects"
ln -s "$src" "$tmp/app-sub/subprojects/strata"
(unset PKG_CONFIG_PATH; meson setup "$tmp/meson-sub" "$tmp/app-sub" >/dev/null)
targets=$(meson introspect --targets "$tmp/meson-sub" | python3 -c \
  'import json, sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin))))')
[ "$targets" = "app strata_autograd strata_core strata_distributed strata_io strata_modes strata_mpi strata_nn strata_ops strata_optim strata_tracer" ] ||
  fail "the subproject builds more than its libraries: $targets"
tests=$(meson introspect --tests "$tmp/meson-sub" | python3 -c \
  'import json, sys; print(" ".join(t["name"] for t in json.load(sys.stdin)))')
[ "$tests" = app ] || fail "meson test of the app would run: $tests"
installs=$(meson introspect --installed "$tmp/meson-sub")
[ "$installs" = "{}" ] || fail "the subproject installs: $installs"
link=$(grep -A1 '^build app:' "$tmp/meson-sub/build.ninja" | tr ' ' '\n')
for lib in core io ops autograd nn optim distributed modes tracer; do
  printf '%s\n' "$link" | grep "libstrata_$lib.a" >/dev/null || fail "the app's link line lacks libstrata_$lib.a"
done
ninja -C "$tmp/meson-sub" app.p/app.cpp.o >/dev/null

step "CMake: pkg_check_modules(STRATA REQUIRED IMPORTED_TARGET strata)"
cmake -S "$src/tests/install/app" -B "$tmp/cmake" -G Ninja >/dev/null
cmake --build "$tmp/cmake" >/dev/null
run_app "$tmp/cmake/app"

step "examples: train_classifier (shared), classify (static), against the installed library"
"${cxx[@]}" -O2 "$src/examples/train_classifier.cpp" $(pkg-config --cflags --libs strata) -Wl,-rpath,"$libdir" \
  -o "$tmp/train_classifier"
"${cxx[@]}" -O2 -static "$src/examples/classify.cpp" $(pkg-config --static --cflags --libs strata) -o "$tmp/classify"
bash "$src/tests/install/check_examples.sh" "$tmp/train_classifier" "$tmp/classify"
echo "install test passed"
