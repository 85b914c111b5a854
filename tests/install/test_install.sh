#!/usr/bin/env bash
# tests/install/test_install.sh BUILD_DIR SOURCE_DIR MPI JSON_VERSION: installs BUILD_DIR (already
# built: --no-rebuild) into a temporary prefix and builds apps against it as a user would. MPI is
# "yes" when the build installs the MPI backend, JSON_VERSION the nlohmann_json version it was built
# with (tests/install/meson.build passes both). tests/install/app/app.cpp, which uses each public
# capability, is built and run with g++ and pkg-config (shared and fully static), meson's
# dependency('strata') (installed; as a subproject, configured and compiled), CMake's
# find_package(strata) (shared and static) and CMake's pkg_check_modules, and must print
# expected_output.txt; with MPI, mpi_app.cpp is built with pkg-config and CMake and run under mpirun.
# Then a plain configure of the source must build no tests, and the two examples must work against
# the install (tests/install/check_examples.sh). Each step prints what it does; any failure fails
# the test. Everything is compiled at -O0: what runs long is inside the (optimised) library.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
mpi=$3
json_version=$4
app=$src/tests/install/app
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$mpi" = yes ] || [ "$mpi" = no ] || fail "MPI is '$mpi': yes or no"
step() { echo "==> [${SECONDS}s] $*"; }
run_app() {  # run_app EXPECTED COMMAND...: the command's output must be the file EXPECTED
  local out
  out=$("${@:2}") || fail "$* exited with $?"
  diff -u "$1" - <<< "$out" || fail "$* printed the lines above marked +, not those marked - ($1)"
}
# The environment tests/meson.build's MPI tests run in.
mpi_env=(env STRATA_DISTRIBUTED_DEBUG=DETAIL OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1)
run_mpi_app() {  # run_mpi_app BINARY: two ranks under mpirun; rank 0 prints expected_mpi_output.txt
  if ! command -v mpirun >/dev/null; then
    echo "skipped: no mpirun to run $1 (Debian: openmpi-bin)"
    return
  fi
  run_app "$app/expected_mpi_output.txt" "${mpi_env[@]}" mpirun --allow-run-as-root --oversubscribe -np 2 "$1"
}

step "meson install --destdir (the prefix moves with the relocatable strata.pc and strataConfig.cmake)"
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >/dev/null
pc=$(find "$tmp/root" -name strata.pc)
[ -n "$pc" ] || fail "no strata.pc installed"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
prefix=$(cd "$(pkg-config --variable=prefix strata)" && pwd)
includedir=$(pkg-config --variable=includedir strata)
libdir=$(pkg-config --variable=libdir strata)

step "installed: the headers strata.h (and, with MPI, distributed/mpi_backend.h) reaches, the libraries"
(cd "$includedir/strata" && find . -type f | sed 's|^\./||' | sort) > "$tmp/installed"
if [ "$mpi" = yes ]; then python3 "$src/scripts/public-headers"; else python3 "$src/scripts/public-headers" --no-mpi; fi |
  sort > "$tmp/public"
diff -u "$tmp/public" "$tmp/installed" || fail "installed headers differ from scripts/public-headers (meson setup --reconfigure)"
[ "$(ls "$includedir")" = strata ] || fail "include/ holds more than strata/: $(ls "$includedir")"
! grep -rE '^\s*#\s*include\s*[<"](unsupported/)?Eigen' "$includedir/strata" ||
  fail "the installed headers above include Eigen (Note [One installed library])"
for f in libstrata.a libstrata.so cmake/strata/strataConfig.cmake cmake/strata/strataConfigVersion.cmake; do
  [ -f "$libdir/$f" ] || fail "$f missing in $libdir"
done
for f in libstrata_mpi.a libstrata_mpi.so pkgconfig/strata-mpi.pc; do
  if [ "$mpi" = yes ] && [ ! -f "$libdir/$f" ]; then fail "$f missing in $libdir (the build has MPI)"; fi
  if [ "$mpi" = no ] && [ -e "$libdir/$f" ]; then fail "$f installed by a build without the MPI backend"; fi
done
requires=$(pkg-config --print-requires strata)
[ "$requires" = "nlohmann_json = $json_version" ] ||
  fail "strata.pc requires '$requires', not the nlohmann_json strata was built with ($json_version)"

# The app's include path also holds a file named like each installed header, one that stops the
# compiler: a strata header that found another through the app's include path, not relative to
# itself, would collide with the app's own core/, ops/, modes/, tracer/ or distributed/ (Note
# [Installed headers find each other relatively]).
while read -r header; do
  mkdir -p "$tmp/shadow/$(dirname "$header")"
  echo "#error \"a strata header included the app's $header\"" > "$tmp/shadow/$header"
done < "$tmp/public"
cxx=(g++ -std=c++20 -O0 -I "$tmp/shadow" -I "$app")

step "g++ \$(pkg-config --cflags strata) -c app.cpp, linked shared and fully static (--static --libs)"
[ "$(pkg-config --cflags strata)" = "$(pkg-config --static --cflags strata)" ] ||
  fail "pkg-config's static cflags differ from the shared ones: one object cannot serve both links"
"${cxx[@]}" -c "$app/app.cpp" $(pkg-config --cflags strata) -o "$tmp/app.o"
g++ "$tmp/app.o" $(pkg-config --libs strata) -Wl,-rpath,"$libdir" -o "$tmp/app-shared"
ldd "$tmp/app-shared" | grep "libstrata.so" >/dev/null || fail "app-shared does not load libstrata.so"
run_app "$app/expected_output.txt" "$tmp/app-shared"
g++ -static "$tmp/app.o" $(pkg-config --static --libs strata) -o "$tmp/app-static"
if ldd "$tmp/app-static" >/dev/null 2>&1; then fail "app-static is dynamically linked"; fi
run_app "$app/expected_output.txt" "$tmp/app-static"

step "meson: dependency('strata') from the installed prefix"
meson setup --buildtype=plain "$tmp/meson-installed" "$app" >/dev/null
meson compile -C "$tmp/meson-installed" >/dev/null
run_app "$app/expected_output.txt" "$tmp/meson-installed/app"

step "meson: strata as a subproject builds its libraries only (and ops_generated, the C++ of the op rows, and explorer_assets, the explorer page's scripts)"
cp -r "$app" "$tmp/app-sub"
mkdir "$tmp/app-sub/subprojects"
ln -s "$src" "$tmp/app-sub/subprojects/strata"
(unset PKG_CONFIG_PATH; meson setup --buildtype=plain "$tmp/meson-sub" "$tmp/app-sub" >/dev/null)
targets=$(meson introspect --targets "$tmp/meson-sub" | python3 -c \
  'import json, sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin))))')
[ "$targets" = "app explorer_assets ops_generated strata_autograd strata_core strata_distributed strata_io strata_modes strata_mpi strata_nn strata_ops strata_optim strata_tracer" ] ||
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

cmake_app() {  # cmake_app DIR OPTIONS...: configures and builds tests/install/app in DIR
  cmake -S "$app" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE= "${@:2}" >/dev/null
  cmake --build "$1" >/dev/null
}
step "CMake: find_package(strata), strata::strata and strata::strata_static$([ "$mpi" = yes ] && echo ', strata::mpi')"
cmake_app "$tmp/cmake-find" -DCMAKE_PREFIX_PATH="$prefix" -DAPP_MPI=$([ "$mpi" = yes ] && echo ON || echo OFF)
ldd "$tmp/cmake-find/app" | grep "libstrata.so" >/dev/null || fail "CMake's app does not load libstrata.so"
! ldd "$tmp/cmake-find/app_static" | grep "libstrata" || fail "CMake's app_static loads the library above"
run_app "$app/expected_output.txt" "$tmp/cmake-find/app"
run_app "$app/expected_output.txt" "$tmp/cmake-find/app_static"
[ "$mpi" = no ] || run_mpi_app "$tmp/cmake-find/mpi_app"

step "CMake: pkg_check_modules(STRATA REQUIRED IMPORTED_TARGET strata)"
cmake_app "$tmp/cmake-pc" -DAPP_STRATA=pkg-config
run_app "$app/expected_output.txt" "$tmp/cmake-pc/app"

if [ "$mpi" = yes ]; then
  step "MPI: g++ mpi_app.cpp \$(pkg-config --cflags --libs strata-mpi), run on 2 processes"
  "${cxx[@]}" "$app/mpi_app.cpp" $(pkg-config --cflags --libs strata-mpi) -Wl,-rpath,"$libdir" -o "$tmp/mpi_app"
  run_mpi_app "$tmp/mpi_app"
fi

step "a plain configure of the source builds the libraries, strata-trace and strata-lm, and no tests"
meson setup "$tmp/plain" "$src" >/dev/null
targets=$(meson introspect --targets "$tmp/plain" | python3 -c 'import json, sys
targets = json.load(sys.stdin)
print(" ".join(sorted({t["name"] for t in targets})))
print(" ".join(sorted({t["name"] for t in targets if not t["build_by_default"]})) or "none")')
[ "$targets" = "explorer_assets ops_generated strata strata-lm strata-trace strata_autograd strata_cli strata_core strata_distributed strata_io strata_lm strata_modes strata_mpi strata_nn strata_ops strata_optim strata_tracer
none" ] || fail "a plain configure defines other targets, or some not built by default: $targets"
for kind in tests benchmarks; do
  [ "$(meson introspect --"$kind" "$tmp/plain")" = "[]" ] || fail "a plain configure has $kind"
done

step "examples: train_classifier (shared), classify (static), against the installed library"
"${cxx[@]}" "$src/examples/train_classifier.cpp" $(pkg-config --cflags --libs strata) -Wl,-rpath,"$libdir" \
  -o "$tmp/train_classifier"
"${cxx[@]}" -static "$src/examples/classify.cpp" $(pkg-config --static --cflags --libs strata) -o "$tmp/classify"
# One OpenMP thread: the in-tree "examples" test runs them with the default threads; here only the
# install is tested, and a second thread spinning beside a busy machine costs more CPU than it saves.
OMP_NUM_THREADS=1 bash "$src/tests/install/check_examples.sh" "$tmp/train_classifier" "$tmp/classify"
echo "install test passed"
