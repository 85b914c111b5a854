# scripts/lib.sh: what the scripts share (sourced, not run): the Debian packages a build needs,
# installing the missing ones with apt-get (as root or with passwordless sudo; otherwise printing the
# exact command and stopping), and configuring and building a build directory once.

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STRATA_PACKAGES=(g++ meson ninja-build pkg-config libeigen3-dev nlohmann-json3-dev doctest-dev cmake libopenmpi-dev openmpi-bin libsentencepiece-dev)

# What the browser test (tests/browser/) adds, for scripts/test only: Debian's chromium and node.
# npm counts as present when the command is (a node from elsewhere, NodeSource's, brings its own npm
# and conflicts with Debian's package).
STRATA_BROWSER_PACKAGES=(chromium nodejs npm)

strata_missing_packages() {
  local missing=()
  for p in "${STRATA_PACKAGES[@]}"; do
    [ "$p" = npm ] && command -v npm >/dev/null 2>&1 && continue
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  echo "${missing[@]:-}"
}

strata_install_packages() {
  local missing
  missing=$(strata_missing_packages)
  [ -z "$missing" ] && return 0
  local apt=()
  if [ "$(id -u)" -eq 0 ]; then
    apt=(apt-get)
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt=(sudo apt-get)
  else
    echo "strata needs these Debian packages: $missing" >&2
    echo "install them with:  sudo apt-get install -y $missing" >&2
    exit 1
  fi
  echo "==> installing $missing"
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq --no-install-recommends $missing
}

# Note [Unity builds in CI]
# The scripts' builds (release, sanitizers, ThreadSanitizer) compile each library eight files to a
# translation unit, meson's unity build: most of a compile is parsing the same headers (Eigen's above
# all) and instantiating the same templates once per file, so a clean build takes about a third of
# the CPU time. What it asks of the code: a library's file-local names (anonymous namespaces, statics)
# are unique within the library, and a call into strata::detail from inside another `detail`
# namespace says `strata::detail::`. A plain `meson setup` stays one file per unit (meson's default,
# quickest to rebuild after an edit), so each file still compiles on its own in every developer's build.
# -Dunity=on also compiles each test executable as one unit (Note [Test files in unity builds] in
# tests/meson.build): half the tests' CPU time of six files to a unit, a developer's build's size.
STRATA_UNITY="-Dunity=on -Dunity_size=8"

# strata_browser_setup: the browser test's packages, then its npm packages (puppeteer-core, pinned by
# tests/browser/package-lock.json; it downloads no browser), installed once per lock file. Before the
# build is configured: meson looks for chromium and node then, and skips the test without them.
strata_browser_setup() {
  STRATA_PACKAGES+=("${STRATA_BROWSER_PACKAGES[@]}")
  strata_install_packages
  if [ ! tests/browser/node_modules/.package-lock.json -nt tests/browser/package-lock.json ]; then
    echo "==> npm ci in tests/browser"
    (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# strata_configure DIR [meson setup options...]: configures DIR once, with the options; a DIR that
# exists keeps its configuration.
strata_configure() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    echo "==> configuring $dir"
    meson setup "$dir" "$@"
  fi
}

# strata_enable_tests DIR: turns on DIR's tests, strata-bench and examples (-Dtests=enabled) unless
# they already are, so a build directory the demo configured serves the tests too.
strata_enable_tests() {
  local on
  on=$(meson introspect --buildoptions "$1" | python3 -c \
    'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "tests"))')
  if [ "$on" != enabled ]; then
    echo "==> enabling the tests in $1"
    meson configure "$1" -Dtests=enabled
  fi
}

# strata_build DIR [meson setup options...]: configure DIR once, then build all of it.
strata_build() {
  strata_configure "$@"
  echo "==> building $1"
  meson compile -C "$1"
}


# strata_test_targets DIR: the ninja targets (paths relative to DIR) that DIR's tests run, and only
# those: what a sanitizer build compiles, so it skips strata-bench and anything else no test needs.
strata_test_targets() {
  python3 - "$1" <<'PY'
import json, os, subprocess, sys
build = os.path.abspath(sys.argv[1])
def introspect(what):
    return json.loads(subprocess.run(["meson", "introspect", what, build], check=True,
                                     capture_output=True, text=True).stdout)
files = {t["id"]: t["filename"][0] for t in introspect("--targets")}
wanted = {os.path.relpath(files[d], build) for test in introspect("--tests") for d in test["depends"]}
print(" ".join(sorted(wanted)))
PY
}

# strata_sanitizer_build: configures build-sanitizers/ once: clang 14 with AddressSanitizer,
# UndefinedBehaviorSanitizer (float-cast-overflow included, nothing recoverable) and libFuzzer's
# coverage instrumentation, so the one build runs both the whole test suite (scripts/sanitize) and
# the fuzz targets (scripts/fuzz).
STRATA_SANITIZER_DIR=build-sanitizers
strata_sanitizer_build() {
  STRATA_PACKAGES+=(clang libclang-rt-14-dev libomp-14-dev lld)  # clang, libFuzzer, clang's OpenMP, lld
  strata_install_packages
  local dir=$STRATA_SANITIZER_DIR
  if [ ! -f "$dir/build.ninja" ]; then
    echo "==> configuring $dir (clang, AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer)"
    # -O0: the build compiles in 60% of -O1's time (the kernels' templates instantiated per dtype with
    # every check are most of it) and the sanitizers see the code as written; the price is fuzzing,
    # which runs a third to a fifth as many inputs per second as at -O1 (longer runs make up for it).
    # -gline-tables-only: reports name file and line, for a quarter less compile time than -g.
    # -Wno-pass-failed: clang may decline the vectorisation hints (omp simd) and say so per loop.
    # Unity libraries (Note [Unity builds in CI]); lld links the instrumented executables in a
    # quarter of GNU ld's time.
    CXX=clang++ CXX_LD=lld meson setup "$dir" -Dtests=enabled -Dfuzzers=true --buildtype=plain -Doptimization=0 -Db_ndebug=false \
      -Db_sanitize=address,undefined -Db_lundef=false $STRATA_UNITY \
      -Dcpp_args="['-gline-tables-only','-Wno-pass-failed','-fsanitize=fuzzer-no-link','-fsanitize=float-cast-overflow','-fno-sanitize-recover=all']" >/dev/null
  fi
}

# The sanitizers' settings for every run: leaks count, the first report stops the process.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
