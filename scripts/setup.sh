# scripts/setup.sh: shared by scripts/demo and scripts/test (sourced, not run). Installs what a fresh
# Debian 12 machine lacks, then configures a release build in build/ (once). What to build is the
# caller's: the demo builds strata-trace alone, the tests everything.
# Idempotent: with everything installed and configured it costs a few dpkg queries.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
strata_install_packages
strata_configure build --buildtype=release $STRATA_UNITY  # Note [Unity builds in CI] in lib.sh
